package npm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
)

// signedMessage is what a registry signature signs: the SHA-256 of
// NAME@VERSION:INTEGRITY (VerifySignature checks it, SigningKey makes it).
func signedMessage(name, version, integrity string) [32]byte {
	return sha256.Sum256([]byte(name + "@" + version + ":" + integrity))
}

// SigningKey signs versions as a registry does, for the registries upcheck
// serves itself: the demo's (make run) and the bench's and tests'. It is
// made fresh, never stored.
type SigningKey struct {
	priv *ecdsa.PrivateKey
	// Key is its public half as the registry publishes it (its id is
	// npm's: "SHA256:" and the unpadded base64 of the key's DER digest);
	// KeysDocument([]Key{k.Key}) is the answer at KeysPath.
	Key Key
}

// NewSigningKey makes an ECDSA P-256 key that never expires.
func NewSigningKey() (SigningKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return SigningKey{}, err
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return SigningKey{}, fmt.Errorf("signing key: %w", err)
	}
	sum := sha256.Sum256(der)
	return SigningKey{priv: priv, Key: Key{KeyID: "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]),
		Text: base64.StdEncoding.EncodeToString(der), public: &priv.PublicKey}}, nil
}

// Sign is the registry signature of name@version with integrity.
func (k SigningKey) Sign(name, version, integrity string) (Signature, error) {
	msg := signedMessage(name, version, integrity)
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, msg[:])
	if err != nil {
		return Signature{}, err
	}
	return Signature{KeyID: k.Key.KeyID, Sig: base64.StdEncoding.EncodeToString(sig)}, nil
}
