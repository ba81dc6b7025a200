package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/updatedoc"
)

// keyFile writes a new private key to a file and returns its public key.
func keyFile(t *testing.T, dir, name string) (updatedoc.PublicKey, string) {
	t.Helper()
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(updatedoc.FormatPrivateKey(priv)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return pub, path
}

// A rotation written by `publisher rotate` is what a site accepts: signed
// by the keys trusted now, naming the new ones, its version one higher
// than the current statement's; keys that are not enough of the current
// set are refused before anything is published.
func TestPublisherRotate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldPub, oldFile := keyFile(t, dir, "old.key")
	newPub, newFile := keyFile(t, dir, "new.key")
	thirdPub, _ := keyFile(t, dir, "third.key")
	doc := filepath.Join(dir, "updates.json")
	if _, code := cli(t, nil, "publisher", "rotate", "--key-file", oldFile, "--new-key", newPub.String(),
		"--version", "1", "--publisher", "acme", "--write", doc); code != 0 {
		t.Fatalf("rotate: exit %d", code)
	}
	pin, _ := updatedoc.NewKeySet([]string{oldPub.String()}, 1)
	body, sigs := readFile(t, doc+".keys"), string(readFile(t, doc+".keys.sig"))
	st, err := updatedoc.AcceptStatement(body, sigs, pin, 0)
	if err != nil || st.Version != 1 || st.Set.String() != newPub.String() || st.Publisher != "acme" {
		t.Fatalf("statement %s: %+v, %v", body, st, err)
	}

	// The next rotation, to 2 of {new, third}: the old key no longer counts.
	args := []string{"publisher", "rotate", "--current", doc + ".keys", "--new-key", newPub.String(), "--new-key", thirdPub.String(), "--threshold", "2"}
	if _, code := cli(t, nil, append(args, "--key-file", oldFile)...); code != 1 {
		t.Fatalf("signed by a key no longer trusted: exit %d, want 1", code)
	}
	out, code := cli(t, nil, append(args, "--key-file", newFile)...)
	if code != 0 {
		t.Fatalf("rotate: exit %d", code)
	}
	var printed struct {
		Statement  json.RawMessage `json:"statement"`
		Signatures []string        `json:"signatures"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil || len(printed.Signatures) != 1 {
		t.Fatalf("printed %q: %v", out, err)
	}
	next, err := updatedoc.AcceptStatement(append(printed.Statement, '\n'), printed.Signatures[0], st.Set, st.Version)
	if err != nil || next.Version != 2 || next.Set.Threshold() != 2 {
		t.Fatalf("second statement: %+v, %v", next, err)
	}
	if _, code := cli(t, nil, "publisher", "rotate", "--key-file", oldFile, "--new-key", newPub.String(), "--publisher", "acme"); code != 1 {
		t.Fatalf("no version: exit %d, want 1", code)
	}
}

// `publisher sign` with several keys writes a signature set, one a line,
// that meets a threshold of 2.
func TestPublisherSignWithSeveralKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	aPub, aFile := keyFile(t, dir, "a.key")
	bPub, bFile := keyFile(t, dir, "b.key")
	doc := filepath.Join(dir, "updates.json")
	body := []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {}}` + "\n")
	if err := os.WriteFile(doc, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code := cli(t, nil, "publisher", "sign", "--key-file", aFile, "--key-file", bFile, "--write", doc); code != 0 {
		t.Fatalf("sign: exit %d", code)
	}
	sigs := string(readFile(t, doc+".sig"))
	set, _ := updatedoc.NewKeySet([]string{aPub.String(), bPub.String()}, 2)
	if n := strings.Count(sigs, "\n"); n != 2 {
		t.Fatalf("signature set %q: %d lines, want 2", sigs, n)
	}
	if _, err := updatedoc.VerifySet(body, sigs, set); err != nil {
		t.Fatalf("2 of 2: %v", err)
	}
	if _, code := cli(t, nil, "publisher", "sign", "--key-file", aFile, "--key-file", aFile, doc); code != 1 {
		t.Fatalf("the same key twice: exit %d, want 1", code)
	}
	one, _ := cli(t, nil, "publisher", "sign", "--key-file", aFile, doc)
	if _, err := updatedoc.VerifySet(body, one, set); !errors.Is(err, updatedoc.ErrBadSignature) {
		t.Fatalf("one signature of 2 needed: %v", err)
	}
}
