package updatedoc

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/upcheck/upcheck/internal/keys"
)

// PublicKey is a publisher's Ed25519 public key, as pinned for a source
// ([keys.PublicKey]). The zero PublicKey verifies nothing.
type PublicKey = keys.PublicKey

// PrivateKey is a publisher's Ed25519 private key ([keys.PrivateKey]),
// printed as a placeholder by fmt and log/slog.
type PrivateKey = keys.PrivateKey

// GenerateKey creates a new key pair ([keys.GenerateKey]).
func GenerateKey() (PublicKey, PrivateKey, error) { return keys.GenerateKey() }

// ParsePublicKey parses the text form "ed25519:BASE64"
// ([keys.ParsePublicKey]).
func ParsePublicKey(s string) (PublicKey, error) { return keys.ParsePublicKey(s) }

// ParsePrivateKey parses the text form "ed25519-private:BASE64"
// ([keys.ParsePrivateKey]).
func ParsePrivateKey(s string) (PrivateKey, error) { return keys.ParsePrivateKey(s) }

// FormatPrivateKey returns a private key's text form
// ([keys.FormatPrivateKey]).
func FormatPrivateKey(k PrivateKey) string { return keys.FormatPrivateKey(k) }

// Sign returns the detached signature of body, standard base64 without a
// trailing newline. It returns "" for the zero PrivateKey: there is nothing
// to sign with, and Verify reports "" as [ErrUnsigned].
func Sign(body []byte, priv PrivateKey) string {
	sig := priv.SignBytes(body)
	if sig == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// Verify checks that signatureB64 is key's Ed25519 signature of exactly
// body. White space around the signature is ignored because a ".sig" file
// normally ends with a newline and a header value may be padded. It returns
// nil, an error wrapping [ErrUnsigned] for an empty signature, an error
// wrapping [ErrBadSignature] for one that is malformed or does not verify,
// or an error wrapping [ErrInvalid] for the zero key.
func Verify(body []byte, signatureB64 string, key PublicKey) error {
	if key.IsZero() {
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
	if !key.Verifies(body, sig) {
		return fmt.Errorf("%w: does not match the document and key %s", ErrBadSignature, key)
	}
	return nil
}
