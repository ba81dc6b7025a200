package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/upcheck/upcheck/internal/updatedoc"
)

// keyFiles is a repeated --key-file flag.
type keyFiles []string

func (k *keyFiles) String() string     { return strings.Join(*k, ",") }
func (k *keyFiles) Set(v string) error { *k = append(*k, v); return nil }

// privateKeys reads the private keys of files (each holding one
// ed25519-private:… key), or $UPCHECK_PUBLISHER_KEY when none is given.
func privateKeys(cmd string, files []string, getenv func(string) string) ([]updatedoc.PrivateKey, error) {
	texts := files
	if len(files) == 0 {
		env := getenv("UPCHECK_PUBLISHER_KEY")
		if env == "" {
			return nil, fmt.Errorf("%s: no key: pass --key-file or set UPCHECK_PUBLISHER_KEY", cmd)
		}
		texts = []string{env}
	}
	var out []updatedoc.PrivateKey
	for i, t := range texts {
		if len(files) > 0 {
			b, err := readCapped(t, maxKeyFile)
			if err != nil {
				return nil, fmt.Errorf("read key: %w", err)
			}
			t = string(b)
		}
		priv, err := updatedoc.ParsePrivateKey(strings.TrimSpace(t))
		if err != nil {
			return nil, err
		}
		for _, seen := range out {
			if seen.Public().Equal(priv.Public()) {
				return nil, fmt.Errorf("%s: key %d is given twice", cmd, i+1)
			}
		}
		out = append(out, priv)
	}
	return out, nil
}

// runRotate is `upcheck publisher rotate`: write a key statement naming the
// new key set, signed by the current private keys, so that sites that
// trust the current keys follow the rotation without editing their
// manifests (docs/signing.md, "Rotating keys").
func runRotate(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var signWith, newKeys keyFiles
	var threshold int
	var version int64
	var current, publisher, write string
	rest, err := parseFlags("publisher rotate", args, stderr, func(fs *flag.FlagSet) {
		fs.Var(&signWith, "key-file", "a file holding a current private key (repeat for several)")
		fs.Var(&newKeys, "new-key", "a public key (ed25519:…) of the new set (repeat for several)")
		fs.IntVar(&threshold, "threshold", 1, "how many of the new keys must sign")
		fs.StringVar(&current, "current", "", "the statement published now: the new one gets its version plus one")
		fs.Int64Var(&version, "version", 0, "the new statement's version, when there is no --current")
		fs.StringVar(&publisher, "publisher", "", "the publisher's name (default: --current's)")
		fs.StringVar(&write, "write", "", "write DOCUMENT.keys and DOCUMENT.keys.sig instead of printing them")
	})
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		fmt.Fprintf(stderr, "upcheck publisher rotate: unexpected argument %q\n", rest[0])
		return errUsage
	}
	set, err := updatedoc.NewKeySet(newKeys, threshold)
	if err != nil {
		return fmt.Errorf("publisher rotate: the new keys (--new-key, --threshold): %w", err)
	}
	var trusted updatedoc.KeySet
	switch {
	case current != "" && version != 0:
		return errors.New("publisher rotate: give --current or --version, not both")
	case current != "":
		body, err := readCapped(current, updatedoc.MaxStatementSize)
		if err != nil {
			return err
		}
		st, err := updatedoc.ParseKeyStatement(body)
		if err != nil {
			return fmt.Errorf("%s: %w", current, err)
		}
		version, trusted = st.Version+1, st.Set
		if publisher == "" {
			publisher = st.Publisher
		}
	case version < 1:
		return errors.New("publisher rotate: give --current (the statement published now) or --version (1 for the first)")
	}
	if strings.TrimSpace(publisher) == "" {
		return errors.New("publisher rotate: give --publisher (or --current)")
	}
	privs, err := privateKeys("publisher rotate", signWith, getenv)
	if err != nil {
		return err
	}
	body := updatedoc.FormatKeyStatement(publisher, version, set)
	sigs := updatedoc.SignSet(body, privs)
	// Sites accept the statement only if the keys they trust now signed
	// it; with --current, check that here rather than after publishing.
	if !trusted.IsZero() {
		if _, err := updatedoc.VerifySet(body, sigs, trusted); err != nil {
			return fmt.Errorf("publisher rotate: the --key-file keys are not enough of the current statement's keys (%d needed): %w", trusted.Threshold(), err)
		}
	}
	if write != "" {
		if err := os.WriteFile(write+".keys", body, 0o644); err != nil {
			return err
		}
		return os.WriteFile(write+".keys.sig", []byte(sigs), 0o644)
	}
	return json.NewEncoder(stdout).Encode(map[string]any{
		"statement":  json.RawMessage(strings.TrimSpace(string(body))),
		"signatures": strings.Fields(sigs),
	})
}
