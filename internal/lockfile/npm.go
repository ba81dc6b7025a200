package lockfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/upcheck/upcheck/internal/jsonpos"
)

// npmEntry is what is read of one entry of package-lock.json's "packages".
type npmEntry struct {
	Version              string            `json:"version"`
	Link                 bool              `json:"link"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

// parseNpm reads package-lock.json: the packages its "packages" installs at
// the top level ("node_modules/NAME", not a package nested below another
// one's node_modules), each at its locked version. Linked entries (a
// workspace's own packages) come from no registry and are passed over.
func parseNpm(body []byte) ([]locked, error) {
	at := func(offset int64) int { line, _ := jsonpos.Position(body, offset); return line }
	dec := json.NewDecoder(bytes.NewReader(body))
	fail := func(err error) ([]locked, error) {
		return nil, fmt.Errorf(": %s", jsonpos.Describe(body, err, "the lockfile"))
	}
	if tok, err := dec.Token(); err != nil {
		return fail(err)
	} else if tok != json.Delim('{') {
		return nil, fmt.Errorf(" line 1: not a package-lock.json (no JSON object)")
	}
	version, versionLine := -1, 1
	var pkgs []locked
	var root npmEntry
	seenPackages := false
	for dec.More() {
		keyAt := nextValue(body, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := tok.(string)
		switch key {
		case "lockfileVersion":
			versionLine = at(keyAt)
			if err := dec.Decode(&version); err != nil {
				return nil, fmt.Errorf(" line %d: lockfileVersion is not a number", versionLine)
			}
		case "packages":
			seenPackages = true
			if tok, err := dec.Token(); err != nil {
				return fail(err)
			} else if tok != json.Delim('{') {
				return nil, fmt.Errorf(" line %d: packages is not an object", at(keyAt))
			}
			for dec.More() {
				entryAt := nextValue(body, dec.InputOffset())
				tok, err := dec.Token()
				if err != nil {
					return fail(err)
				}
				path, _ := tok.(string)
				var e npmEntry
				if err := dec.Decode(&e); err != nil {
					return nil, fmt.Errorf(" line %d: packages[%q]: %s", at(entryAt), path, jsonpos.Describe(body, err, "the entry"))
				}
				if path == "" {
					root = e
					continue
				}
				name, ok := strings.CutPrefix(path, "node_modules/")
				if !ok || strings.Contains(name, "/node_modules/") || e.Link {
					continue
				}
				field := fmt.Sprintf("packages[%q]", path)
				if e.Version == "" {
					return nil, fmt.Errorf(" line %d: %s has no version", at(entryAt), field)
				}
				pkgs = append(pkgs, locked{name: name, version: e.Version, line: at(entryAt), field: field})
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	switch {
	case version == -1:
		return nil, fmt.Errorf(" line 1: no lockfileVersion: not a package-lock.json")
	case version < 2:
		return nil, fmt.Errorf(" line %d: lockfileVersion %d is not read (it lists no installed packages): npm 7 or later writes version 3 with `npm install`", versionLine, version)
	case version > 3:
		return nil, fmt.Errorf(" line %d: lockfileVersion %d is newer than the versions read (2 and 3)", versionLine, version)
	case !seenPackages:
		return nil, fmt.Errorf(" line 1: no packages: not a package-lock.json of version %d", version)
	}
	for i := range pkgs {
		_, dep := root.Dependencies[pkgs[i].name]
		_, opt := root.OptionalDependencies[pkgs[i].name]
		pkgs[i].direct = dep || opt
	}
	return pkgs, nil
}

// nextValue is the offset of the next token after offset, past white space
// and the separators a json.Decoder has not yet consumed.
func nextValue(body []byte, offset int64) int64 {
	for offset < int64(len(body)) && strings.IndexByte(" \t\r\n,:", body[offset]) >= 0 {
		offset++
	}
	return offset
}
