package updatedoc

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// signBundle is a key pair and a document signed with it.
type signBundle struct {
	pub  PublicKey
	priv PrivateKey
	body []byte
	sig  string
}

func setupSigned(t *testing.T) signBundle {
	t.Helper()
	pub, priv, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {}}` + "\n")
	return signBundle{pub: pub, priv: priv, body: body, sig: Sign(body, priv)}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	b := setupSigned(t)
	otherPub, _, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	sigBytes, err := base64.StdEncoding.DecodeString(b.sig)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(sigBytes)
	flipped[10] ^= 0x01

	tests := []struct {
		name string
		body []byte
		sig  string
		key  PublicKey
		want error // nil for success
	}{
		{"good", b.body, b.sig, b.pub, nil},
		{"trailing newline, as in a .sig file", b.body, b.sig + "\n", b.pub, nil},
		{"CRLF and spaces around", b.body, "  " + b.sig + "\r\n", b.pub, nil},
		{"tampered body", bytes.Replace(b.body, []byte(`"sequence": 1`), []byte(`"sequence": 2`), 1), b.sig, b.pub, ErrBadSignature},
		{"body with an extra newline", append(bytes.Clone(b.body), '\n'), b.sig, b.pub, ErrBadSignature},
		{"body without its newline", bytes.TrimSuffix(b.body, []byte("\n")), b.sig, b.pub, ErrBadSignature},
		{"wrong key", b.body, b.sig, otherPub, ErrBadSignature},
		{"altered signature", b.body, base64.StdEncoding.EncodeToString(flipped), b.pub, ErrBadSignature},
		{"bad base64", b.body, "not*base64!", b.pub, ErrBadSignature},
		{"URL-safe base64", b.body, base64.URLEncoding.EncodeToString(sigBytes) + "_-", b.pub, ErrBadSignature},
		{"truncated", b.body, base64.StdEncoding.EncodeToString(sigBytes[:63]), b.pub, ErrBadSignature},
		{"too long", b.body, base64.StdEncoding.EncodeToString(append(bytes.Clone(sigBytes), 0)), b.pub, ErrBadSignature},
		{"empty", b.body, "", b.pub, ErrUnsigned},
		{"only white space", b.body, " \n", b.pub, ErrUnsigned},
		{"zero key", b.body, b.sig, PublicKey{}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Verify(tt.body, tt.sig, tt.key)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Verify = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

// The signed example in docs/update-document.md must verify, and must be
// the one in testdata: publishers test their tooling against it.
func TestSignedExample(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	body, sig, keyText := read("example.json"), read("example.json.sig"), read("example.pub")

	key, err := ParsePublicKey(keyText)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify([]byte(body), sig, key); err != nil {
		t.Fatalf("the example does not verify: %v", err)
	}
	if _, err := Parse([]byte(body)); err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}

	docBytes, err := os.ReadFile(filepath.Join("..", "..", "docs", "update-document.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(docBytes)
	block, ok := fencedBlockAfter(doc, "<!-- signed example: testdata/example.json -->")
	if !ok {
		t.Fatal("docs/update-document.md has no fenced block after the signed example marker")
	}
	if block != body {
		t.Errorf("the example in docs/update-document.md differs from testdata/example.json")
	}
	for _, s := range []string{strings.TrimSpace(sig), strings.TrimSpace(keyText)} {
		if !strings.Contains(doc, s) {
			t.Errorf("docs/update-document.md does not show %q", s)
		}
	}
}

// fencedBlockAfter returns the content (with its final newline) of the first
// fenced code block after marker.
func fencedBlockAfter(doc, marker string) (string, bool) {
	_, rest, ok := strings.Cut(doc, marker)
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "```json\n")
	if !ok {
		return "", false
	}
	content, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		return "", false
	}
	return content + "\n", true
}

// RFC 8032, section 7.1, test 1: pins the key and signature encodings to
// the standard rather than to whatever this package happens to produce.
func TestRFC8032Vector(t *testing.T) {
	t.Parallel()
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	wantPub, _ := hex.DecodeString("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
	wantSig, _ := hex.DecodeString("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")

	priv, err := ParsePrivateKey("ed25519-private:" + base64.StdEncoding.EncodeToString(seed))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := priv.Public().String(), "ed25519:"+base64.StdEncoding.EncodeToString(wantPub); got != want {
		t.Errorf("public key = %s, want %s", got, want)
	}
	if got, want := Sign(nil, priv), base64.StdEncoding.EncodeToString(wantSig); got != want {
		t.Errorf("signature = %s, want %s", got, want)
	}
}

func TestPublicKeyText(t *testing.T) {
	t.Parallel()
	b := setupSigned(t)
	text := b.pub.String()
	if !strings.HasPrefix(text, "ed25519:") {
		t.Fatalf("String() = %q, want the ed25519: prefix", text)
	}
	for _, in := range []string{text, " " + text + "\n"} {
		got, err := ParsePublicKey(in)
		if err != nil {
			t.Fatalf("ParsePublicKey(%q): %v", in, err)
		}
		if !got.Equal(b.pub) {
			t.Errorf("ParsePublicKey(%q) = %s, want %s", in, got, b.pub)
		}
	}
	if (PublicKey{}).String() != "" || !(PublicKey{}).IsZero() || b.pub.IsZero() {
		t.Error("zero key: want String() empty and IsZero true, and a real key not zero")
	}

	raw := strings.TrimPrefix(text, "ed25519:")
	short := base64.StdEncoding.EncodeToString(make([]byte, 31))
	tests := []struct {
		in   string
		want string
	}{
		{raw, `public key must start with "ed25519:"`},
		{"ED25519:" + raw, `public key must start with "ed25519:"`},
		{FormatPrivateKey(b.priv), `public key must start with "ed25519:"`},
		{"ed25519:" + strings.TrimRight(raw, "="), `public key is not standard base64`},
		{"ed25519:***", `public key is not standard base64`},
		{"ed25519:" + short, `public key has 31 bytes, an ed25519 public key has 32`},
		{"", `public key must start with "ed25519:"`},
	}
	for _, tt := range tests {
		_, err := ParsePublicKey(tt.in)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(fmt.Sprint(err), tt.want) {
			t.Errorf("ParsePublicKey(%q) = %v, want ErrInvalid containing %q", tt.in, err, tt.want)
		}
	}
}

func TestPrivateKeyText(t *testing.T) {
	t.Parallel()
	b := setupSigned(t)
	text := FormatPrivateKey(b.priv)
	if !strings.HasPrefix(text, "ed25519-private:") {
		t.Fatalf("FormatPrivateKey = %q, want the ed25519-private: prefix", text)
	}
	priv, err := ParsePrivateKey(text + "\n")
	if err != nil {
		t.Fatalf("ParsePrivateKey: %v", err)
	}
	if !priv.Public().Equal(b.pub) {
		t.Errorf("parsed private key has public key %s, want %s", priv.Public(), b.pub)
	}
	if err := Verify(b.body, Sign(b.body, priv), b.pub); err != nil {
		t.Errorf("signature by the parsed key: %v", err)
	}

	for _, in := range []string{
		strings.TrimPrefix(text, "ed25519-private:"),
		b.pub.String(),
		"ed25519-private:" + base64.StdEncoding.EncodeToString(make([]byte, 64)),
		"ed25519-private:%%%",
	} {
		if _, err := ParsePrivateKey(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParsePrivateKey(%q) = %v, want ErrInvalid", in, err)
		}
	}
	if FormatPrivateKey(PrivateKey{}) != "" || !(PrivateKey{}).Public().IsZero() {
		t.Error("zero private key: want empty text and a zero public key")
	}
}

// A private key that reaches a log line or an error message by accident
// must not be readable there.
func TestPrivateKeyIsNotPrinted(t *testing.T) {
	t.Parallel()
	b := setupSigned(t)
	text := FormatPrivateKey(b.priv)
	seed := strings.TrimPrefix(text, "ed25519-private:")
	seedBytes, err := base64.StdEncoding.DecodeString(seed)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{seed, hex.EncodeToString(seedBytes), fmt.Sprint([]byte(seedBytes)[:8])}

	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		outputs = append(outputs, fmt.Sprintf(verb, b.priv), fmt.Sprintf(verb, struct{ K PrivateKey }{b.priv}))
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("signing", "key", b.priv)
	outputs = append(outputs, logged.String(), b.priv.String())

	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("printed private key %q contains its secret", out)
			}
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("printed private key %q does not say it was redacted", out)
		}
	}
}

func TestSignWithZeroKey(t *testing.T) {
	t.Parallel()
	body := []byte("{}")
	sig := Sign(body, PrivateKey{})
	if sig != "" {
		t.Fatalf("Sign with the zero key = %q, want empty", sig)
	}
	pub, _, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(body, sig, pub); !errors.Is(err, ErrUnsigned) {
		t.Errorf("Verify of an empty signature = %v, want ErrUnsigned", err)
	}
}
