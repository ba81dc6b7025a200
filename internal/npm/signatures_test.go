package npm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/release"
)

func readKeys(t *testing.T, path string) []Key {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys, err := ParseKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Real versions' registry signatures verify against the registry's real
// keys, and the expired key's signature counts only for a version shown
// to be published before its expiry.
func TestRealRegistrySignatures(t *testing.T) {
	t.Parallel()
	keys := readKeys(t, "testdata/signatures/keys.json")
	if len(keys) != 2 || keys[0].Expires.IsZero() || !keys[1].Expires.IsZero() {
		t.Fatalf("keys: %+v", keys)
	}
	b, err := os.ReadFile("testdata/signatures/versions.json")
	if err != nil {
		t.Fatal(err)
	}
	var recorded []struct {
		Name, Version, Published string
		Dist                     struct {
			Integrity  string
			Signatures []Signature
		}
	}
	if err := json.Unmarshal(b, &recorded); err != nil {
		t.Fatal(err)
	}
	for _, r := range recorded {
		v := Version{Dist: Dist{Integrity: r.Dist.Integrity, Signatures: r.Dist.Signatures}}
		var published time.Time
		if r.Published != "" {
			if published, err = time.Parse(time.RFC3339Nano, r.Published); err != nil {
				t.Fatal(err)
			}
		}
		got, err := VerifySignature(keys, r.Name, r.Version, v, published)
		expiring := r.Dist.Signatures[0].KeyID == keys[0].KeyID
		switch {
		case expiring && published.IsZero():
			// Without a publish time the expired key's signature does not
			// count, as npm says EEXPIREDSIGNATUREKEY; with one before the
			// expiry it does.
			if !errors.Is(err, ErrExpiredKey) {
				t.Errorf("%s@%s without a publish time: %v, want ErrExpiredKey", r.Name, r.Version, err)
			}
			if _, err := VerifySignature(keys, r.Name, r.Version, v, keys[0].Expires.Add(-time.Hour)); err != nil {
				t.Errorf("%s@%s published before the expiry: %v", r.Name, r.Version, err)
			}
		case err != nil || got.KeyID != r.Dist.Signatures[0].KeyID:
			t.Errorf("%s@%s: %+v, %v", r.Name, r.Version, got, err)
		}
		// One changed character of the integrity and it fails.
		tampered := v
		tampered.Dist.Integrity = strings.Replace(v.Dist.Integrity, "sha512-", "sha512-A", 1)
		if _, err := VerifySignature(keys, r.Name, r.Version, tampered, keys[0].Expires.Add(-time.Hour)); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s@%s with a tampered integrity: %v, want ErrBadSignature", r.Name, r.Version, err)
		}
		// Another version's name does not borrow its signature.
		if _, err := VerifySignature(keys, r.Name, r.Version+"1", v, keys[0].Expires.Add(-time.Hour)); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s@%s1 with its signature: %v", r.Name, r.Version, err)
		}
	}
}

// A key of the tests' own, with its keys document.
type testKey struct {
	priv *ecdsa.PrivateKey
	key  Key
}

func newTestKey(t *testing.T, id string, expires time.Time) testKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"keys": [{"keyid": "` + id + `", "keytype": "ecdsa-sha2-nistp256", "scheme": "ecdsa-sha2-nistp256", "key": "` +
		base64.StdEncoding.EncodeToString(der) + `", "expires": null}]}`
	if !expires.IsZero() {
		doc = strings.Replace(doc, `null`, `"`+expires.Format(time.RFC3339)+`"`, 1)
	}
	keys, err := ParseKeys(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return testKey{priv, keys[0]}
}

func (k testKey) sign(t *testing.T, name, version, integrity string) Signature {
	t.Helper()
	msg := sha256.Sum256([]byte(name + "@" + version + ":" + integrity))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, msg[:])
	if err != nil {
		t.Fatal(err)
	}
	return Signature{KeyID: k.key.KeyID, Sig: base64.StdEncoding.EncodeToString(sig)}
}

func TestSignatureFailures(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	good := newTestKey(t, "SHA256:good", time.Time{})
	expired := newTestKey(t, "SHA256:old", now.Add(-24*time.Hour))
	other := newTestKey(t, "SHA256:other", time.Time{})
	keys := []Key{good.key, expired.key}
	const integrity = "sha512-AAAA"
	signed := func(sigs ...Signature) Version { return Version{Dist: Dist{Integrity: integrity, Signatures: sigs}} }
	for name, c := range map[string]struct {
		v    Version
		want error
	}{
		"signed by a published key":       {signed(good.sign(t, "x", "1.0.0", integrity)), nil},
		"no signature":                    {signed(), ErrUnsigned},
		"an unknown key id":               {signed(other.sign(t, "x", "1.0.0", integrity)), ErrUnknownKey},
		"a key that expired before":       {signed(expired.sign(t, "x", "1.0.0", integrity)), ErrExpiredKey},
		"tampered integrity":              {Version{Dist: Dist{Integrity: "sha512-BBBB", Signatures: []Signature{good.sign(t, "x", "1.0.0", integrity)}}}, ErrBadSignature},
		"a signature that is not base64":  {signed(Signature{KeyID: "SHA256:good", Sig: "%%%"}), ErrBadSignature},
		"one good among bad is enough":    {signed(other.sign(t, "x", "1.0.0", integrity), good.sign(t, "x", "1.0.0", integrity)), nil},
		"an unknown key id under a known": {signed(Signature{KeyID: "SHA256:other", Sig: good.sign(t, "x", "1.0.0", integrity).Sig}), ErrUnknownKey},
	} {
		_, err := VerifySignature(keys, "x", "1.0.0", c.v, now)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := VerifySignature(keys, "x", "1.0.0", signed(expired.sign(t, "x", "1.0.0", integrity)), now.Add(-48*time.Hour)); err != nil {
		t.Errorf("published before the key expired: %v", err)
	}
}

func TestParseKeysRefusesWhatItCannotUse(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`{}`:       "no keys",
		`not json`: "invalid character",
		`{"keys": [{"keyid": "k", "keytype": "ed25519", "scheme": "ed25519", "key": "AAAA"}]}`:                         "only ecdsa-sha2-nistp256",
		`{"keys": [{"keyid": "k", "keytype": "ecdsa-sha2-nistp256", "scheme": "ecdsa-sha2-nistp256", "key": "%%"}]}`:   "not base64",
		`{"keys": [{"keyid": "k", "keytype": "ecdsa-sha2-nistp256", "scheme": "ecdsa-sha2-nistp256", "key": "AAAA"}]}`: "not a public key",
		`{"keys": [{"keytype": "ecdsa-sha2-nistp256"}]}`:                                                               "no keyid",
	} {
		if _, err := ParseKeys(strings.NewReader(doc)); !errors.Is(err, ErrKeys) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrKeys saying %q", doc, err, want)
		}
	}
}

// A version whose signature fails is never offered, and the offer says
// why; a newest offer without the provenance the installed version had is
// a trust downgrade.
func TestOfferTrust(t *testing.T) {
	t.Parallel()
	key := newTestKey(t, "SHA256:good", time.Time{})
	attested := &Attestations{URL: "http://127.0.0.1/att", PredicateType: "https://slsa.dev/provenance/v1"}
	version := func(v string, provenance bool, sign bool) Version {
		out := Version{Dist: Dist{Integrity: "sha512-" + v}}
		if sign {
			out.Dist.Signatures = []Signature{key.sign(t, "x", v, out.Dist.Integrity)}
		}
		if provenance {
			out.Dist.Attestations = attested
		}
		return out
	}
	pkg := testPackage("x", map[string]string{"latest": "1.3.0"}, map[string]Version{
		"1.0.0": version("1.0.0", true, true),
		"1.1.0": version("1.1.0", true, true),
		"1.2.0": version("1.2.0", true, false),
		"1.3.0": version("1.3.0", false, true),
	})
	tampered := pkg.Versions["1.1.0"]
	tampered.Dist.Integrity = "sha512-other"
	pkg.Versions["1.1.0"] = tampered

	o := OfferFor(pkg, "1.0.0", "", []Key{key.key})
	if got := versionsOf(o); len(got) != 2 || got[0] != "1.3.0" || got[1] != "1.0.0" {
		t.Errorf("offered %v, want [1.3.0 1.0.0]", got)
	}
	if len(o.Refused) != 2 || o.Refused[0].Version != "1.2.0" || !errors.Is(o.Refused[0].Err, ErrUnsigned) ||
		o.Refused[1].Version != "1.1.0" || !errors.Is(o.Refused[1].Err, ErrBadSignature) {
		t.Errorf("refused %+v", o.Refused)
	}
	if !o.Provenance["1.0.0"] || o.Provenance["1.3.0"] || provenanceLost(t, o, "1.0.0") != "1.3.0" {
		t.Errorf("provenance %v, lost %q", o.Provenance, provenanceLost(t, o, "1.0.0"))
	}
	// Without keys nothing is refused; an installed version without
	// provenance loses none.
	if o := OfferFor(pkg, "1.0.0", "", nil); len(o.Refused) != 0 || len(versionsOf(o)) != 4 {
		t.Errorf("without keys: offered %v, refused %v", versionsOf(o), o.Refused)
	}
	if o.SignedBy["1.3.0"] != "SHA256:good" || o.SignedBy["1.0.0"] != "SHA256:good" {
		t.Errorf("signed by %v", o.SignedBy)
	}
	// A site at 1.3.0 is offered nothing older: the versions below it
	// are neither listed nor verified (1.1.0 and 1.2.0 would be refused).
	if o := OfferFor(pkg, "1.3.0", "", []Key{key.key}); len(o.Refused) != 0 || !slices.Equal(versionsOf(o), []string{"1.3.0"}) {
		t.Errorf("at 1.3.0: offered %v, refused %v", versionsOf(o), o.Refused)
	}
	pkg.Versions["1.0.0"] = version("1.0.0", false, true)
	if o := OfferFor(pkg, "1.0.0", "", []Key{key.key}); provenanceLost(t, o, "1.0.0") != "" {
		t.Errorf("nothing to lose: %q", provenanceLost(t, o, "1.0.0"))
	}
}

// A SigningKey signs as a registry does: VerifySignature accepts what it
// signs under the key it publishes (read back from KeysDocument), and
// nothing else.
func TestSigningKeySignsAsARegistry(t *testing.T) {
	t.Parallel()
	k, err := NewSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseKeys(strings.NewReader(string(KeysDocument([]Key{k.Key}))))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := k.Sign("@acme/blog", "1.2.0", "sha512-abc")
	if err != nil {
		t.Fatal(err)
	}
	v := Version{Dist: Dist{Integrity: "sha512-abc", Signatures: []Signature{sig}}}
	if got, err := VerifySignature(keys, "@acme/blog", "1.2.0", v, time.Now()); err != nil || got.KeyID != k.Key.KeyID || !strings.HasPrefix(got.KeyID, "SHA256:") {
		t.Fatalf("verify: %+v, %v", got, err)
	}
	if _, err := VerifySignature(keys, "@acme/blog", "1.2.1", v, time.Now()); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("another version: %v, want ErrBadSignature", err)
	}
}

// A version that carries 200,000 signatures naming the registry's key
// costs at most MaxSignaturesPerKey verifications (counted, not timed),
// and its good signature after that many bad ones is not tried: the
// version is refused. A good one within the bound verifies.
func TestSignatureCheckIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	good := newTestKey(t, "SHA256:good", time.Time{})
	second := newTestKey(t, "SHA256:second", time.Time{})
	keys := []Key{good.key, second.key}
	const integrity = "sha512-AAAA"
	valid := good.sign(t, "x", "1.0.0", integrity)
	bad := Signature{KeyID: "SHA256:good", Sig: second.sign(t, "x", "1.0.0", integrity).Sig} // another key's signature under good's id
	many := make([]Signature, 200_000)
	for i := range many {
		many[i] = bad
	}
	many[len(many)-1] = valid
	got, err := VerifySignature(keys, "x", "1.0.0", Version{Dist: Dist{Integrity: integrity, Signatures: many}}, now)
	if !errors.Is(err, ErrBadSignature) || got.Tried != MaxSignaturesPerKey {
		t.Errorf("200,000 signatures: %+v, %v; want ErrBadSignature after %d verifications", got, err, MaxSignaturesPerKey)
	}
	// Both keys named, each many times: each key's bound holds.
	for i := range many {
		many[i] = bad
		if i%2 == 1 {
			many[i] = Signature{KeyID: "SHA256:second", Sig: valid.Sig}
		}
	}
	if got, err := VerifySignature(keys, "x", "1.0.0", Version{Dist: Dist{Integrity: integrity, Signatures: many}}, now); err == nil || got.Tried > MaxSignaturesPerKey*len(keys) {
		t.Errorf("two keys named 100,000 times each: %+v, %v; want refused within %d verifications", got, err, MaxSignaturesPerKey*len(keys))
	}
	within := append(slices.Repeat([]Signature{bad}, MaxSignaturesPerKey-1), valid)
	if got, err := VerifySignature(keys, "x", "1.0.0", Version{Dist: Dist{Integrity: integrity, Signatures: within}}, now); err != nil || got.KeyID != "SHA256:good" || got.Tried != MaxSignaturesPerKey {
		t.Errorf("a good signature within the bound: %+v, %v", got, err)
	}
}

// provenanceLost is what the offer makes of o's provenance for a site at
// installed (release.Evaluation.ProvenanceLost).
func provenanceLost(t *testing.T, o Offer, installed string) string {
	t.Helper()
	ev, err := release.Evaluate(&o.Package, "x", installed, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	return ev.ProvenanceLost
}
