package keys

import (
	"errors"
	"strings"
	"testing"
)

func genKeys(t testing.TB, n int) []PublicKey {
	t.Helper()
	pubs := make([]PublicKey, n)
	for i := range n {
		var err error
		if pubs[i], _, err = GenerateKey(); err != nil {
			t.Fatal(err)
		}
	}
	return pubs
}

func texts(keys []PublicKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}

func TestKeySetCanonicalText(t *testing.T) {
	t.Parallel()
	pubs := genKeys(t, 3)
	one, err := NewKeySet(texts(pubs[:1]), 0)
	if err != nil {
		t.Fatal(err)
	}
	if one.String() != pubs[0].String() {
		t.Fatalf("one key, threshold 1: %q, want the key's own text (stored pins stay valid)", one)
	}
	a, err := NewKeySet([]string{pubs[2].String(), pubs[0].String(), pubs[1].String()}, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewKeySet(texts(pubs), 2)
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || !strings.HasPrefix(a.String(), "2 of ed25519:") {
		t.Fatalf("order must not matter: %q vs %q", a, b)
	}
	back, err := ParseKeySet(a.String())
	if err != nil || !back.Equal(a) {
		t.Fatalf("ParseKeySet(%q) = %v, %v", a, back, err)
	}
	if one1of1, _ := NewKeySet(texts(pubs[:1]), 1); !strings.HasPrefix(one1of1.String(), "ed25519:") {
		t.Fatalf("1 of 1: %q", one1of1)
	}
	for name, c := range map[string]struct {
		keys []string
		th   int
	}{
		"empty":     {nil, 1},
		"duplicate": {[]string{pubs[0].String(), pubs[0].String()}, 1},
		"threshold": {texts(pubs), 4},
		"negative":  {texts(pubs), -1},
		"bad key":   {[]string{"ed25519:nope"}, 1},
	} {
		if _, err := NewKeySet(c.keys, c.th); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	for _, text := range []string{"", "2 of", "x of " + pubs[0].String(), "0 of " + pubs[0].String(), "2 at " + pubs[0].String() + " " + pubs[1].String()} {
		if _, err := ParseKeySet(text); err == nil {
			t.Errorf("ParseKeySet(%q) accepted", text)
		}
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	k, err := ParsePublicKey("ed25519:" + keyEncoding.EncodeToString([]byte("\xab\x12\xcd\x34abcdefghijklmnopqrstuvwxyz\xef\x01")))
	if err != nil {
		t.Fatal(err)
	}
	if got := Fingerprint(k); got != "ab12cd34…ef01" {
		t.Fatalf("Fingerprint = %q", got)
	}
	if Fingerprint(PublicKey{}) != "" {
		t.Fatal("the zero key has no fingerprint")
	}
}
