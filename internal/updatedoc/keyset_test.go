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
