package updatedoc

import (
	"errors"
	"strings"
	"testing"
)

func genKeys(t testing.TB, n int) ([]PublicKey, []PrivateKey) {
	t.Helper()
	pubs, privs := make([]PublicKey, n), make([]PrivateKey, n)
	for i := range n {
		var err error
		if pubs[i], privs[i], err = GenerateKey(); err != nil {
			t.Fatal(err)
		}
	}
	return pubs, privs
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
	pubs, _ := genKeys(t, 3)
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

func TestVerifySetThreshold(t *testing.T) {
	t.Parallel()
	pubs, privs := genKeys(t, 4)
	body := []byte(`{"format":1}`)
	set, err := NewKeySet(texts(pubs[:3]), 2)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		sigs  string
		want  error
		count int
	}{
		{"two of three", SignSet(body, privs[:2]), nil, 2},
		{"all three, commas", strings.Join([]string{Sign(body, privs[0]), Sign(body, privs[1]), Sign(body, privs[2])}, ","), nil, 3},
		{"one of three", SignSet(body, privs[:1]), ErrBadSignature, 1},
		{"the same signature twice", Sign(body, privs[0]) + " " + Sign(body, privs[0]), ErrBadSignature, 1},
		{"one trusted and one stranger", SignSet(body, []PrivateKey{privs[0], privs[3]}), ErrBadSignature, 1},
		{"empty", " \n", ErrUnsigned, 0},
		{"garbage", Sign(body, privs[0]) + " !!!", ErrBadSignature, 0},
		{"too many", strings.Repeat(Sign(body, privs[0])+" ", MaxSignatures+1), ErrBadSignature, 0},
	}
	for _, c := range cases {
		by, err := VerifySet(body, c.sigs, set)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) || len(by) != c.count {
			t.Errorf("%s: by %d keys, err %v; want %d, %v", c.name, len(by), err, c.count, c.want)
		}
	}
	if _, err := VerifySet(append(body, ' '), SignSet(body, privs[:3]), set); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("altered body: %v", err)
	}
	if _, err := VerifySet(body, SignSet(body, privs[:1]), KeySet{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("zero set: %v", err)
	}
	// The old single-signature format is a set of one.
	single, _ := NewKeySet(texts(pubs[:1]), 1)
	if _, err := VerifySet(body, Sign(body, privs[0])+"\n", single); err != nil {
		t.Fatalf("a single signature: %v", err)
	}
}

func statementOf(t *testing.T, pubs []PublicKey, th int, version int64) []byte {
	t.Helper()
	set, err := NewKeySet(texts(pubs), th)
	if err != nil {
		t.Fatal(err)
	}
	return FormatKeyStatement("acme", version, set)
}

func TestParseKeyStatement(t *testing.T) {
	t.Parallel()
	pubs, _ := genKeys(t, 2)
	good := statementOf(t, pubs, 2, 7)
	st, err := ParseKeyStatement(good)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 7 || st.Publisher != "acme" || st.Set.Threshold() != 2 || len(st.Set.Keys()) != 2 {
		t.Fatalf("parsed %+v", st)
	}
	k := `"` + pubs[0].String() + `"`
	if st, err := ParseKeyStatement([]byte(`{"format":1,"type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `]}`)); err != nil || st.Set.Threshold() != 1 {
		t.Fatalf("threshold defaults to 1: %v, %v", st, err)
	}
	bad := map[string]string{
		"other case":  `{"format":1,"Type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `]}`,
		"twice":       `{"format":1,"type":"upcheck-keys","type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `]}`,
		"unknown":     `{"format":1,"type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `],"note":1}`,
		"trailing":    `{"format":1,"type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `]} {}`,
		"format 2":    `{"format":2,"type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `]}`,
		"type":        `{"format":1,"type":"keys","publisher":"a","version":1,"keys":[` + k + `]}`,
		"version 0":   `{"format":1,"type":"upcheck-keys","publisher":"a","version":0,"keys":[` + k + `]}`,
		"no keys":     `{"format":1,"type":"upcheck-keys","publisher":"a","version":1,"keys":[]}`,
		"threshold 0": `{"format":1,"type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `],"threshold":0}`,
		"threshold 2": `{"format":1,"type":"upcheck-keys","publisher":"a","version":1,"keys":[` + k + `],"threshold":2}`,
		"no version":  `{"format":1,"type":"upcheck-keys","publisher":"a","keys":[` + k + `]}`,
		"array":       `[]`,
		"too large":   `{"format":1,"type":"upcheck-keys","publisher":"` + strings.Repeat("a", MaxStatementSize) + `","version":1,"keys":[` + k + `]}`,
	}
	for name, body := range bad {
		if _, err := ParseKeyStatement([]byte(body)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestAcceptStatement(t *testing.T) {
	t.Parallel()
	pubs, privs := genKeys(t, 3)
	trusted, _ := NewKeySet(texts(pubs[:1]), 1)
	body := statementOf(t, pubs[1:2], 1, 2)
	if st, err := AcceptStatement(body, SignSet(body, privs[:1]), trusted, 1); err != nil || !strings.Contains(st.Set.String(), pubs[1].String()) {
		t.Fatalf("endorsed by the old key: %v, %v", st, err)
	}
	if _, err := AcceptStatement(body, SignSet(body, privs[1:2]), trusted, 1); !errors.Is(err, ErrStatementRefused) || errors.Is(err, ErrStatementNotNewer) {
		t.Fatalf("signed only by the new key: %v", err)
	}
	if _, err := AcceptStatement(body, SignSet(body, privs[:1]), trusted, 2); !errors.Is(err, ErrStatementNotNewer) {
		t.Fatalf("same version: %v", err)
	}
	if _, err := AcceptStatement([]byte("{}"), SignSet([]byte("{}"), privs[:1]), trusted, 0); !errors.Is(err, ErrStatementRefused) {
		t.Fatalf("malformed: %v", err)
	}
}

func FuzzParseKeyStatement(f *testing.F) {
	pubs, _ := genKeys(f, 2)
	set, _ := NewKeySet(texts(pubs), 2)
	f.Add(FormatKeyStatement("acme", 3, set))
	f.Add([]byte(`{"format":1,"type":"upcheck-keys","publisher":"a","version":1,"keys":["ed25519:x"]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		st, err := ParseKeyStatement(body)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error not ErrInvalid: %v", err)
			}
			return
		}
		again, err := ParseKeyStatement(FormatKeyStatement(st.Publisher, st.Version, st.Set))
		if err != nil || !again.Set.Equal(st.Set) || again.Version != st.Version {
			t.Fatalf("round trip: %v, %v", again, err)
		}
	})
}
