package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/upcheck/upcheck/internal/updatedoc"
)

// The files `publisher init` writes, in its --dir.
const (
	initDocument   = "updates.json"  // the update document, sequence 1
	initPrivateKey = "publisher.key" // ed25519-private:…, mode 0600: for `publisher sign --key-file`
	initPublicKey  = "publisher.pub" // ed25519:…: what sites pin
)

// runInit is `publisher init`: a new document and a key pair, written
// only if none of the three files exists.
func runInit(args []string, stdout, stderr io.Writer) error {
	var name, dir, expires string
	var codes []string
	rest, err := parseFlags("publisher init", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "publisher", "", "your name, shown to operators")
		fs.Func("package", "a component code you publish (repeat the flag, or separate codes with commas)", func(s string) error {
			for _, c := range strings.Split(s, ",") {
				if c = strings.TrimSpace(c); c != "" {
					codes = append(codes, c)
				}
			}
			return nil
		})
		fs.StringVar(&dir, "dir", ".", "the folder to write "+initDocument+", "+initPrivateKey+" and "+initPublicKey+" in")
		fs.StringVar(&expires, "expires", "", "when the document goes stale, an RFC 3339 time (optional)")
	})
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "upcheck publisher init: unexpected argument %q\n", rest[0])
		return errUsage
	}

	doc := object{}
	packages := object{}
	for _, c := range codes {
		packages.set(c, []byte("{}"))
	}
	for _, err := range []error{
		doc.put("format", updatedoc.Format),
		doc.put("publisher", name),
		doc.put("sequence", 1),
		putIf(&doc, "expires", expires),
		doc.put("packages", packages),
	} {
		if err != nil {
			return err
		}
	}
	body, err := formatDocument(doc)
	if err != nil {
		return err
	}
	if problems := updatedoc.Lint(body); problems != nil {
		printProblems(stderr, "", problems, false)
		return fmt.Errorf("publisher init: the document would have %s: nothing written", countProblems(len(problems)))
	}

	paths := []string{filepath.Join(dir, initDocument), filepath.Join(dir, initPrivateKey), filepath.Join(dir, initPublicKey)}
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("publisher init: %s exists; nothing written (init never overwrites)", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		return err
	}
	// The private key first, so that a document is never left without it;
	// O_EXCL keeps the promise not to overwrite even against a race.
	if err := writeNew(paths[1], []byte(updatedoc.FormatPrivateKey(priv)+"\n"), 0o600); err != nil {
		return err
	}
	if err := writeNew(paths[0], body, 0o644); err != nil {
		return err
	}
	if err := writeNew(paths[2], []byte(pub.String()+"\n"), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (sequence 1), %s (the private key: keep it secret) and %s\n"+
		"public key, for the sites to pin: %s\n", paths[0], paths[1], paths[2], pub)
	return err
}

func putIf(o *object, name, value string) error {
	if value == "" {
		return nil
	}
	return o.put(name, value)
}

// writeNew creates path with content; it fails if path exists.
func writeNew(path string, content []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	return errors.Join(err, f.Close())
}
