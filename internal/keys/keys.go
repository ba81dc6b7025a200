// Package keys holds a publisher's Ed25519 keys and key sets in their text
// forms: what a site pins for a component (the manifest's `key`, or `keys`
// with `threshold`) and what a key statement endorses. It knows no
// document: internal/updatedoc signs and verifies the publisher's
// documents with these keys, and internal/manifest validates and writes a
// component's pin with them, without reading the document format.
package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/upcheck/upcheck/internal/release"
)

// ErrInvalid is wrapped by every error of a malformed key or key set. It
// is release.ErrInvalid itself (and so updatedoc.ErrInvalid): a bad pin
// answers the same errors.Is as a bad document or version.
var ErrInvalid = release.ErrInvalid

// invalidError carries a message that already names the offending place,
// so that the text printed to an operator is not prefixed by a generic
// sentinel, while errors.Is(err, ErrInvalid) still holds.
type invalidError struct {
	msg   string
	cause error
}

func (e *invalidError) Error() string { return e.msg }

func (e *invalidError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.cause}
}

func invalidf(cause error, format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...), cause: cause}
}

// Text forms of keys. The algorithm is part of the text so that a key can
// never be read as the wrong kind, and so that another algorithm can be
// added later without guessing.
const (
	publicKeyPrefix  = "ed25519:"
	privateKeyPrefix = "ed25519-private:"
)

// keyEncoding is standard base64 with padding; Strict refuses encodings
// whose unused bits are not zero, so each key has exactly one text form.
var keyEncoding = base64.StdEncoding.Strict()

// PublicKey is a publisher's Ed25519 public key, as pinned for a source.
// The zero PublicKey verifies nothing. Compare keys with [PublicKey.Equal].
type PublicKey struct {
	key ed25519.PublicKey
}

// PrivateKey is a publisher's Ed25519 private key. It is printed as a
// placeholder by fmt and log/slog so that it cannot end up in a log by
// accident; [FormatPrivateKey] gives its text form.
type PrivateKey struct {
	key ed25519.PrivateKey
}

// GenerateKey creates a new key pair from the operating system's secure
// random source.
func GenerateKey() (PublicKey, PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return PublicKey{}, PrivateKey{}, fmt.Errorf("generate ed25519 key: %w", err)
	}
	return PublicKey{key: pub}, PrivateKey{key: priv}, nil
}

// ParsePublicKey parses the text form "ed25519:BASE64" (32 key bytes,
// standard base64). Surrounding white space is ignored.
func ParsePublicKey(s string) (PublicKey, error) {
	b, err := decodeKey(s, publicKeyPrefix, ed25519.PublicKeySize, "public")
	if err != nil {
		return PublicKey{}, err
	}
	return PublicKey{key: ed25519.PublicKey(b)}, nil
}

// String returns the text form "ed25519:BASE64", or "" for the zero key.
func (k PublicKey) String() string {
	if len(k.key) != ed25519.PublicKeySize {
		return ""
	}
	return publicKeyPrefix + keyEncoding.EncodeToString(k.key)
}

// Equal reports whether k and other are the same key.
func (k PublicKey) Equal(other PublicKey) bool {
	return k.key.Equal(other.key)
}

// IsZero reports whether k is the zero PublicKey, which holds no key.
func (k PublicKey) IsZero() bool {
	return len(k.key) == 0
}

// Verifies reports whether sig is k's Ed25519 signature of exactly msg;
// false for the zero key or a signature of the wrong length.
func (k PublicKey) Verifies(msg, sig []byte) bool {
	if len(k.key) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(k.key, msg, sig)
}

// ParsePrivateKey parses the text form "ed25519-private:BASE64" of the
// 32-byte seed written by [FormatPrivateKey]. Surrounding white space is
// ignored, so a key file ending in a newline reads as is.
func ParsePrivateKey(s string) (PrivateKey, error) {
	seed, err := decodeKey(s, privateKeyPrefix, ed25519.SeedSize, "private")
	if err != nil {
		return PrivateKey{}, err
	}
	return PrivateKey{key: ed25519.NewKeyFromSeed(seed)}, nil
}

// FormatPrivateKey returns the text form "ed25519-private:BASE64" of the
// key's 32-byte seed (the 64-byte expanded form is derivable from it), or
// "" for the zero key. It is a function rather than a String method on
// purpose: printing a private key must be a deliberate act.
func FormatPrivateKey(k PrivateKey) string {
	if len(k.key) != ed25519.PrivateKeySize {
		return ""
	}
	return privateKeyPrefix + keyEncoding.EncodeToString(k.key.Seed())
}

// Public returns the public half of the key, or the zero PublicKey for the
// zero PrivateKey.
func (k PrivateKey) Public() PublicKey {
	if len(k.key) != ed25519.PrivateKeySize {
		return PublicKey{}
	}
	pub, _ := k.key.Public().(ed25519.PublicKey)
	return PublicKey{key: pub}
}

// SignBytes returns k's Ed25519 signature of msg, or nil for the zero
// PrivateKey.
func (k PrivateKey) SignBytes(msg []byte) []byte {
	if len(k.key) != ed25519.PrivateKeySize {
		return nil
	}
	return ed25519.Sign(k.key, msg)
}

// redactedPrivateKey is what fmt and slog print instead of a private key.
const redactedPrivateKey = privateKeyPrefix + "REDACTED"

// String returns a placeholder, never the key.
func (k PrivateKey) String() string { return redactedPrivateKey }

// GoString returns a placeholder for %#v, never the key.
func (k PrivateKey) GoString() string { return redactedPrivateKey }

// Format prints a placeholder for every fmt verb, including %x and %d,
// which would otherwise print the key's bytes.
func (k PrivateKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedPrivateKey) }

// LogValue keeps the key out of structured logs.
func (k PrivateKey) LogValue() slog.Value { return slog.StringValue(redactedPrivateKey) }

func decodeKey(s, prefix string, size int, kind string) ([]byte, error) {
	text := strings.TrimSpace(s)
	encoded, ok := strings.CutPrefix(text, prefix)
	if !ok {
		return nil, invalidf(nil, "%s key must start with %q", kind, prefix)
	}
	b, err := keyEncoding.DecodeString(encoded)
	if err != nil {
		return nil, invalidf(err, "%s key is not standard base64 after %q: %v", kind, prefix, err)
	}
	if len(b) != size {
		return nil, invalidf(nil, "%s key has %d bytes, an ed25519 %s key has %d", kind, len(b), kind, size)
	}
	return b, nil
}

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
