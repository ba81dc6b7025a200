package updatedoc

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/keys"
)

// KeySet is a set of trusted publisher keys and how many of them must sign
// (internal/keys, where a component's pin is validated without this
// package): a source's pin, or the set a key statement endorsed. The zero
// KeySet trusts nothing.
type KeySet = keys.KeySet

// NewKeySet builds a set from keys in text form and a threshold
// ([keys.NewKeySet]).
func NewKeySet(texts []string, threshold int) (KeySet, error) {
	return keys.NewKeySet(texts, threshold)
}

// ParseKeySet parses a set's canonical text ([keys.ParseKeySet]).
func ParseKeySet(text string) (KeySet, error) { return keys.ParseKeySet(text) }

// Fingerprint is the short form of a key shown to people everywhere
// ([keys.Fingerprint]).
func Fingerprint(k PublicKey) string { return keys.Fingerprint(k) }

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
	pinned := trusted.Keys()
	for _, k := range pinned {
		if slices.ContainsFunc(decoded, func(sig []byte) bool { return k.Verifies(body, sig) }) {
			by = append(by, k)
		}
	}
	if len(by) < trusted.Threshold() {
		return by, fmt.Errorf("%w: %d of the %d trusted keys (%s) signed, %d needed",
			ErrBadSignature, len(by), len(pinned), strings.Join(trusted.Fingerprints(), ", "), trusted.Threshold())
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
