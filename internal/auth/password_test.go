package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/testkit"
)

func TestHashVerify(t *testing.T) {
	t.Parallel()
	h := Hasher(testkit.Hasher())
	const pw = "correct horse battery staple"
	enc, err := h.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("encoding %q: want PHC argon2id with the hasher's parameters", enc)
	}
	if strings.Contains(enc, pw) {
		t.Fatal("hash contains the password")
	}
	if ok, err := h.Verify(enc, pw); err != nil || !ok {
		t.Fatalf("verify right password: ok=%v err=%v", ok, err)
	}
	for _, wrong := range []string{"correct horse battery stapl", "Correct horse battery staple", "", pw + " "} {
		if ok, err := h.Verify(enc, wrong); err != nil || ok {
			t.Fatalf("verify %q: ok=%v err=%v, want false", wrong, ok, err)
		}
	}
	again, _ := h.Hash(pw)
	if again == enc {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	// Verification reads the parameters from the hash, not from the hasher.
	if ok, err := DefaultHasher().Verify(enc, pw); err != nil || !ok {
		t.Fatalf("verify with other parameters: ok=%v err=%v", ok, err)
	}
	if h.NeedsRehash(enc) {
		t.Fatal("NeedsRehash with the same parameters")
	}
	if !DefaultHasher().NeedsRehash(enc) {
		t.Fatal("NeedsRehash false with other parameters")
	}
}

func TestVerifyRejectsMalformedHashes(t *testing.T) {
	t.Parallel()
	h := Hasher(testkit.Hasher())
	good, _ := h.Hash("correct horse battery staple")
	parts := strings.Split(good, "$")
	for name, enc := range map[string]string{
		"empty":          "",
		"bcrypt":         "$2a$10$abcdefghijklmnopqrstuv",
		"argon2i":        strings.Replace(good, "argon2id", "argon2i", 1),
		"old version":    strings.Replace(good, "v=19", "v=16", 1),
		"huge memory":    strings.Join([]string{"", "argon2id", "v=19", "m=4294967295,t=1,p=1", parts[4], parts[5]}, "$"),
		"huge time":      strings.Join([]string{"", "argon2id", "v=19", "m=64,t=100000,p=1", parts[4], parts[5]}, "$"),
		"zero threads":   strings.Join([]string{"", "argon2id", "v=19", "m=64,t=1,p=0", parts[4], parts[5]}, "$"),
		"reordered":      strings.Join([]string{"", "argon2id", "v=19", "t=1,m=64,p=1", parts[4], parts[5]}, "$"),
		"bad salt":       strings.Join([]string{"", "argon2id", "v=19", parts[3], "!!!", parts[5]}, "$"),
		"short key":      strings.Join([]string{"", "argon2id", "v=19", parts[3], parts[4], "AAAA"}, "$"),
		"trailing field": good + "$x",
	} {
		if ok, err := h.Verify(enc, "correct horse battery staple"); err == nil || ok {
			t.Errorf("%s: ok=%v err=%v, want an error", name, ok, err)
		}
	}
}

func TestValidatePassword(t *testing.T) {
	t.Parallel()
	for pw, want := range map[string]error{
		"elevenchars":                  ErrPasswordTooShort,
		"twelve chars":                 nil,
		"пароль-пароль":                nil, // 13 characters, 25 bytes
		"日本語のパスワード":                    ErrPasswordTooShort,
		strings.Repeat("a", 1024):      nil,
		strings.Repeat("a", 1025):      ErrPasswordTooLong,
		strings.Repeat("é", 513):       ErrPasswordTooLong, // 513 characters, 1026 bytes
		"correct horse battery staple": nil,
	} {
		if err := ValidatePassword(pw); !errors.Is(err, want) {
			t.Errorf("ValidatePassword(%.20q…): %v, want %v", pw, err, want)
		}
	}
	if _, err := Hasher(testkit.Hasher()).Hash(strings.Repeat("a", 1025)); !errors.Is(err, ErrPasswordTooLong) {
		t.Errorf("Hash of 1025 bytes: %v, want ErrPasswordTooLong", err)
	}
}

// TestDefaultHasherCost reports what one production hash costs here; the
// parameters aim at about 50 ms on two cores. It fails only when a hash is
// absurdly fast, which would mean the parameters were lost.
func TestDefaultHasherCost(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("measures the production parameters")
	}
	h := DefaultHasher()
	_, _ = h.Hash("warm up the allocator")
	const n = 3
	best := time.Hour
	for range n {
		start := time.Now()
		if _, err := h.Hash("correct horse battery staple"); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	t.Logf("argon2id m=%d KiB t=%d p=%d: best of %d = %v", h.Memory, h.Time, h.Threads, n, best)
	if best < 5*time.Millisecond {
		t.Fatalf("a production hash took %v: parameters too weak", best)
	}
}
