package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// maxDocument caps what `publisher sign` reads: the fetcher refuses larger
// documents anyway.
const maxDocument = 2 << 20

// maxKeyFile caps a --key-file: one key is a line of some 100 bytes.
const maxKeyFile = 64 << 10

// runPublisher is the publisher's side: make keys and sign documents, so
// publishers (and the tests) can produce what upcheck verifies.
func runPublisher(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "upcheck publisher: want a command (init, release add, advisory add, lint, keygen, sign, rotate, osv2doc)\n%s", helpPointer("publisher"))
		return errUsage
	}
	switch args[0] {
	case "init":
		return runInit(args[1:], stdout, stderr)
	case "release", "advisory":
		if len(args) < 2 || args[1] != "add" {
			fmt.Fprintf(stderr, "upcheck publisher %s: want \"add\"\n", args[0])
			return errUsage
		}
		return runAdd(args[0], args[2:], stdout, stderr)
	case "lint":
		return runLint(args[1:], stdout, stderr)
	case "keygen":
		if _, err := parseFlags("publisher keygen", args[1:], stderr, nil); err != nil {
			return err
		}
		pub, priv, err := updatedoc.GenerateKey()
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]string{
			"public_key":  pub.String(),
			"private_key": updatedoc.FormatPrivateKey(priv),
		})
	case "osv2doc":
		return runOSV2Doc(args[1:], stdout, stderr)
	case "sign":
		var files keyFiles
		var write bool
		rest, err := parseFlags("publisher sign", args[1:], stderr, func(fs *flag.FlagSet) {
			fs.Var(&files, "key-file", "file holding a private key (ed25519-private:…); repeat to sign with several")
			fs.BoolVar(&write, "write", false, "write the signature to DOCUMENT.sig instead of printing it")
		})
		if err != nil {
			return err
		}
		if len(rest) != 1 {
			fmt.Fprintln(stderr, "upcheck publisher sign: want exactly one DOCUMENT")
			return errUsage
		}
		privs, err := privateKeys("publisher sign", files, getenv)
		if err != nil {
			return err
		}
		body, err := readCapped(rest[0], maxDocument)
		if err != nil {
			return err
		}
		// Refuse to sign what upcheck would refuse to read.
		if _, err := updatedoc.Parse(body); err != nil {
			return fmt.Errorf("%s: %w", rest[0], err)
		}
		sigs := updatedoc.SignSet(body, privs) // one signature a line
		if write {
			return os.WriteFile(rest[0]+".sig", []byte(sigs), 0o644)
		}
		_, err = fmt.Fprint(stdout, sigs)
		return err
	case "rotate":
		return runRotate(args[1:], getenv, stdout, stderr)
	}
	fmt.Fprintf(stderr, "upcheck publisher: unknown command %q\n%s", args[0], helpPointer("publisher"))
	return errUsage
}

// readCapped reads a regular file of at most limit bytes; a named pipe or
// a device is refused at once (localfile.Read), not waited on.
func readCapped(path string, limit int64) ([]byte, error) {
	b, err := localfile.Read(path, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}
