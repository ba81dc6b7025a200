package updatedoc

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// KeySet is a set of trusted publisher keys and how many of them must sign:
// a source's pin (the manifest's `key`, or `keys` with `threshold`), or the
// set a key statement endorsed. The zero KeySet trusts nothing.
type KeySet struct {
	keys      []PublicKey // sorted by text form, no duplicates
	threshold int
}

// NewKeySet builds a set from keys in text form ("ed25519:BASE64") and a
// threshold (0 means 1). It refuses an empty set, an invalid or duplicate
// key and a threshold outside 1..len(keys).
func NewKeySet(texts []string, threshold int) (KeySet, error) {
	if len(texts) == 0 {
		return KeySet{}, invalidf(nil, "a key set needs at least one key")
	}
	if threshold == 0 {
		threshold = 1
	}
	if threshold < 1 || threshold > len(texts) {
		return KeySet{}, invalidf(nil, "threshold %d is not between 1 and the number of keys (%d)", threshold, len(texts))
	}
	keys := make([]PublicKey, 0, len(texts))
	for i, t := range texts {
		k, err := ParsePublicKey(t)
		if err != nil {
			return KeySet{}, invalidf(err, "keys[%d]: %v", i, err)
		}
		if slices.ContainsFunc(keys, k.Equal) {
			return KeySet{}, invalidf(nil, "keys[%d]: %s is listed twice", i, k)
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b PublicKey) int { return strings.Compare(a.String(), b.String()) })
	return KeySet{keys: keys, threshold: threshold}, nil
}

// ParseKeySet parses a set's canonical text (see [KeySet.String]):
// "ed25519:BASE64" for one key with threshold 1, otherwise
// "T of ed25519:A ed25519:B …".
func ParseKeySet(text string) (KeySet, error) {
	fields := strings.Fields(text)
	if len(fields) == 1 {
		return NewKeySet(fields, 1)
	}
	if len(fields) < 3 || fields[1] != "of" {
		return KeySet{}, invalidf(nil, `key set %q is neither "ed25519:…" nor "T of ed25519:… …"`, text)
	}
	t, err := strconv.Atoi(fields[0])
	if err != nil || t < 1 {
		return KeySet{}, invalidf(nil, "key set %q: threshold %q is not a positive number", text, fields[0])
	}
	return NewKeySet(fields[2:], t)
}

// String is the set's canonical text: the one key's text when the set has
// one key (threshold 1), so a pin of one key reads as it always did;
// otherwise "T of " and the keys, sorted, separated by spaces. "" for the
// zero set.
func (s KeySet) String() string {
	if len(s.keys) == 0 {
		return ""
	}
	if len(s.keys) == 1 && s.threshold == 1 {
		return s.keys[0].String()
	}
	return strconv.Itoa(s.threshold) + " of " + strings.Join(s.KeyTexts(), " ")
}

// Keys returns the keys, sorted.
func (s KeySet) Keys() []PublicKey { return slices.Clone(s.keys) }

// KeyTexts returns the keys' text forms, sorted.
func (s KeySet) KeyTexts() []string {
	out := make([]string, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.String()
	}
	return out
}

// Threshold is how many of the keys must sign.
func (s KeySet) Threshold() int { return s.threshold }

// IsZero reports whether the set holds no key.
func (s KeySet) IsZero() bool { return len(s.keys) == 0 }

// Equal reports whether both sets hold the same keys and threshold.
func (s KeySet) Equal(o KeySet) bool { return s.String() == o.String() }

// Fingerprints returns the keys' short forms ([Fingerprint]), sorted as
// the keys are.
func (s KeySet) Fingerprints() []string {
	out := make([]string, len(s.keys))
	for i, k := range s.keys {
		out[i] = Fingerprint(k)
	}
	return out
}

// Fingerprint is the short form of a key shown to people everywhere
// (pages, audit log, CLI): the first 4 and the last 2 of its 32 bytes in
// lower-case hex around an ellipsis, "ab12cd34…ef01". It names a key among
// a publisher's few; it is not a security check (the full key is).
func Fingerprint(k PublicKey) string {
	if len(k.key) != ed25519.PublicKeySize {
		return ""
	}
	return hex.EncodeToString(k.key[:4]) + "…" + hex.EncodeToString(k.key[len(k.key)-2:])
}

// MaxSignatures bounds a signature set: more signatures than any
// threshold needs is a broken or hostile publisher.
const MaxSignatures = 16

// SplitSignatures splits a signature set (the Upcheck-Signature header or a
// .sig file): base64 signatures separated by white space or commas. A
// single signature is the set of one.
func SplitSignatures(set string) []string {
	return strings.FieldsFunc(set, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
}

// VerifySet checks a signature set over exactly body against the trusted
// set: it verifies when at least the threshold of distinct trusted keys
// each verify one of the signatures. It returns the keys that verified
// (sorted, whatever the count), and nil, an error wrapping [ErrUnsigned]
// for an empty set, an error wrapping [ErrBadSignature] when too few keys
// verify (or a signature is malformed, or there are more than
// MaxSignatures), or one wrapping [ErrInvalid] for the zero set.
func VerifySet(body []byte, signatures string, trusted KeySet) ([]PublicKey, error) {
	if trusted.IsZero() {
		return nil, invalidf(nil, "verify signature: no trusted key")
	}
	sigs := SplitSignatures(signatures)
	if len(sigs) == 0 {
		return nil, ErrUnsigned
	}
	if len(sigs) > MaxSignatures {
		return nil, fmt.Errorf("%w: %d signatures, at most %d are read", ErrBadSignature, len(sigs), MaxSignatures)
	}
	decoded := make([][]byte, len(sigs))
	for i, s := range sigs {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%w: signature %d is not standard base64: %w", ErrBadSignature, i+1, err)
		}
		if len(b) != ed25519.SignatureSize {
			return nil, fmt.Errorf("%w: signature %d has %d bytes, an ed25519 signature has %d", ErrBadSignature, i+1, len(b), ed25519.SignatureSize)
		}
		decoded[i] = b
	}
	var by []PublicKey
	for _, k := range trusted.keys {
		if slices.ContainsFunc(decoded, func(sig []byte) bool { return ed25519.Verify(k.key, body, sig) }) {
			by = append(by, k)
		}
	}
	if len(by) < trusted.threshold {
		return by, fmt.Errorf("%w: %d of the %d trusted keys (%s) signed, %d needed",
			ErrBadSignature, len(by), len(trusted.keys), strings.Join(trusted.Fingerprints(), ", "), trusted.threshold)
	}
	return by, nil
}

// SignSet signs body with every key and returns the signature set, one
// signature a line, ending in a newline ("" when no key signs).
func SignSet(body []byte, privs []PrivateKey) string {
	var b strings.Builder
	for _, p := range privs {
		if s := Sign(body, p); s != "" {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}
