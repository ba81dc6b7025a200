package updatedoc

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

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

// Sign returns the detached signature of body, standard base64 without a
// trailing newline. It returns "" for the zero PrivateKey: there is nothing
// to sign with, and Verify reports "" as [ErrUnsigned].
func Sign(body []byte, priv PrivateKey) string {
	if len(priv.key) != ed25519.PrivateKeySize {
		return ""
	}
	return base64.StdEncoding.EncodeToString(ed25519.Sign(priv.key, body))
}

// Verify checks that signatureB64 is key's Ed25519 signature of exactly
// body. White space around the signature is ignored because a ".sig" file
// normally ends with a newline and a header value may be padded. It returns
// nil, an error wrapping [ErrUnsigned] for an empty signature, an error
// wrapping [ErrBadSignature] for one that is malformed or does not verify,
// or an error wrapping [ErrInvalid] for the zero key.
func Verify(body []byte, signatureB64 string, key PublicKey) error {
	if len(key.key) != ed25519.PublicKeySize {
		// ed25519.Verify would panic on a key of the wrong length; and
		// "nothing pinned" must never read as "signature fine".
		return invalidf(nil, "verify signature: no public key")
	}
	text := strings.TrimSpace(signatureB64)
	if text == "" {
		return ErrUnsigned
	}
	sig, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return fmt.Errorf("%w: not standard base64: %w", ErrBadSignature, err)
	}
	if len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: %d bytes, an ed25519 signature has %d", ErrBadSignature, len(sig), ed25519.SignatureSize)
	}
	if !ed25519.Verify(key.key, body, sig) {
		return fmt.Errorf("%w: does not match the document and key %s", ErrBadSignature, key)
	}
	return nil
}
