package npm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// KeysPath is where a registry publishes its signing keys, below its
// address; a registry that publishes none answers 404 there.
const KeysPath = "-/npm/v1/keys"

// maxKeys caps the keys document: a registry has a handful.
const maxKeys = 1 << 20

// Key is one of a registry's signing keys.
type Key struct {
	KeyID string
	// Expires is when the key stopped signing: a signature it made on a
	// version published after then does not count. Zero: never.
	Expires time.Time
	// Text is the key as the registry gives it (base64 DER,
	// SubjectPublicKeyInfo), kept to pin and compare.
	Text   string
	public *ecdsa.PublicKey
}

// ErrKeys is wrapped by every error of a keys document upcheck cannot use.
var ErrKeys = errors.New("not a registry keys document")

// ParseKeys reads a registry's keys document ({"keys": [...]}). Only
// ECDSA P-256 keys (keytype and scheme "ecdsa-sha2-nistp256") are what
// npm's registry signatures use; a document with a key of another kind is
// refused, not half read.
func ParseKeys(r io.Reader) ([]Key, error) {
	var doc struct {
		Keys []struct {
			KeyID   string  `json:"keyid"`
			KeyType string  `json:"keytype"`
			Scheme  string  `json:"scheme"`
			Key     string  `json:"key"`
			Expires *string `json:"expires"`
		} `json:"keys"`
	}
	body, err := io.ReadAll(io.LimitReader(r, maxKeys+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxKeys {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrKeys, maxKeys)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeys, err)
	}
	if doc.Keys == nil {
		return nil, fmt.Errorf("%w: it has no keys", ErrKeys)
	}
	keys := make([]Key, 0, len(doc.Keys))
	for i, k := range doc.Keys {
		fail := func(format string, args ...any) ([]Key, error) {
			return nil, fmt.Errorf("%w: keys[%d] (%q): %s", ErrKeys, i, k.KeyID, fmt.Sprintf(format, args...))
		}
		if k.KeyID == "" {
			return fail("no keyid")
		}
		if k.KeyType != "ecdsa-sha2-nistp256" || k.Scheme != "ecdsa-sha2-nistp256" {
			return fail("keytype %q and scheme %q: only ecdsa-sha2-nistp256 is read", k.KeyType, k.Scheme)
		}
		der, err := base64.StdEncoding.DecodeString(k.Key)
		if err != nil {
			return fail("the key is not base64")
		}
		pub, err := x509.ParsePKIXPublicKey(der)
		if err != nil {
			return fail("the key is not a public key: %v", err)
		}
		ec, ok := pub.(*ecdsa.PublicKey)
		if !ok || ec.Curve != elliptic.P256() {
			return fail("the key is not an ECDSA P-256 key")
		}
		key := Key{KeyID: k.KeyID, Text: k.Key, public: ec}
		if k.Expires != nil {
			if key.Expires, err = time.Parse(time.RFC3339Nano, *k.Expires); err != nil {
				return fail("expires %q is not a time", *k.Expires)
			}
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// The ways a version's registry signature fails.
var (
	// ErrUnsigned: the registry publishes keys, the version has no signature.
	ErrUnsigned = errors.New("it has no registry signature")
	// ErrUnknownKey: no signature is by a key the registry publishes.
	ErrUnknownKey = errors.New("its signature is by a key the registry does not publish")
	// ErrExpiredKey: the key had expired when the version was published.
	ErrExpiredKey = errors.New("its signature is by a key that had expired when it was published")
	// ErrBadSignature: the signature does not match NAME@VERSION:INTEGRITY.
	ErrBadSignature = errors.New("its registry signature does not match its name, version and integrity")
)

// Verification is the outcome of a version's registry signature check.
type Verification struct {
	// KeyID is the key whose signature verified ("" when none did).
	KeyID string
	// Tried is how many signatures were checked against a key (ECDSA
	// verifications, the check's cost): at most MaxSignaturesPerKey per
	// key, whatever the version carries.
	Tried int
}

// The bounds of one version's signature check. A registry signs a version
// once with each of its keys; a version that carries more signatures (a
// hostile registry or mirror: 200,000 of them) must not cost the check
// one ECDSA verification each.
const (
	// MaxSignaturesPerKey is how many of a version's signatures naming one
	// key are verified; the ones after are not tried.
	MaxSignaturesPerKey = 3
	// MaxSignatures is how many of a version's signatures are looked at
	// in all, the first in the document's order.
	MaxSignatures = 64
)

// VerifySignature checks version's registry signatures as `npm audit
// signatures` does: a signature by one of keys (matched by keyid), made
// over "NAME@VERSION:INTEGRITY" (ECDSA P-256, SHA-256), with a key that
// had not expired when the version was published (a version with no
// publish time cannot be shown to predate the expiry). One signature that
// holds is enough; of the first MaxSignatures signatures, at most
// MaxSignaturesPerKey per key are verified, so a version that carries
// thousands costs a handful of verifications, and one whose good
// signature comes after that many bad ones is refused. The error says why
// none holds; Tried counts the verifications either way.
func VerifySignature(keys []Key, name, version string, v Version, published time.Time) (Verification, error) {
	if len(v.Dist.Signatures) == 0 {
		return Verification{}, ErrUnsigned
	}
	msg := signedMessage(name, version, v.Dist.Integrity)
	why := ErrUnknownKey
	tried := make(map[string]int, len(keys))
	out := Verification{}
	for i, s := range v.Dist.Signatures {
		if i == MaxSignatures {
			break
		}
		for _, k := range keys {
			if k.KeyID != s.KeyID {
				continue
			}
			if !k.Expires.IsZero() && (published.IsZero() || !published.Before(k.Expires)) {
				why = ErrExpiredKey
				continue
			}
			if tried[k.KeyID] == MaxSignaturesPerKey {
				continue
			}
			tried[k.KeyID]++
			out.Tried++
			sig, err := base64.StdEncoding.DecodeString(s.Sig)
			if err != nil || !ecdsa.VerifyASN1(k.public, msg[:], sig) {
				why = ErrBadSignature
				continue
			}
			out.KeyID = k.KeyID
			return out, nil
		}
	}
	return out, why
}

// KeysDocument is keys as a registry publishes them, ordered by id, so
// that ParseKeys reads them back: how pinned keys are stored and compared.
func KeysDocument(keys []Key) []byte {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.KeyID, b.KeyID) })
	type wire struct {
		KeyID   string  `json:"keyid"`
		KeyType string  `json:"keytype"`
		Scheme  string  `json:"scheme"`
		Key     string  `json:"key"`
		Expires *string `json:"expires"`
	}
	doc := struct {
		Keys []wire `json:"keys"`
	}{Keys: make([]wire, len(keys))}
	for i, k := range keys {
		doc.Keys[i] = wire{KeyID: k.KeyID, KeyType: "ecdsa-sha2-nistp256", Scheme: "ecdsa-sha2-nistp256", Key: k.Text}
		if !k.Expires.IsZero() {
			e := k.Expires.UTC().Format(time.RFC3339Nano)
			doc.Keys[i].Expires = &e
		}
	}
	body, _ := json.Marshal(doc) // strings and a slice: cannot fail
	return body
}

// KeyIDs are the ids of keys, sorted, as the pages name them. Two sets of
// keys are the same when their KeysDocument is, key material included.
func KeyIDs(keys []Key) []string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.KeyID
	}
	slices.Sort(ids)
	return ids
}
