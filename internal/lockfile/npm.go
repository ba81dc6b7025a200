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
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Resolved             string            `json:"resolved"`
	Integrity            string            `json:"integrity"`
	Link                 bool              `json:"link"`
	Dev                  bool              `json:"dev"`
	Optional             bool              `json:"optional"`
	Peer                 bool              `json:"peer"`
	HasInstallScript     bool              `json:"hasInstallScript"`
	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	Workspaces           json.RawMessage   `json:"workspaces"`
}

// npmAt is an entry and where it sits.
type npmAt struct {
	path string // its key: "", "node_modules/a", "packages/site"
	line int
	e    npmEntry
}

// parseNpm reads package-lock.json: every entry of its "packages" (the
// tree, npmTree) and, of them, the packages installed at the top level
// ("node_modules/NAME", not a package nested below another one's
// node_modules), each at its locked version, of which Options choose the
// components. Linked entries (a workspace's own packages, a "file:"
// directory) come from no registry and are no components.
func parseNpm(body []byte) (read, error) {
	// at is the line of offset, counted on from the last one asked
	// (entries come in order: a lockfile's lines are counted once).
	var lastOffset int64
	lastLine := 1
	at := func(offset int64) int {
		offset = min(max(offset, 0), int64(len(body)))
		if offset < lastOffset {
			line, _ := jsonpos.Position(body, offset)
			return line
		}
		lastLine += bytes.Count(body[lastOffset:offset], []byte{'\n'})
		lastOffset = offset
		return lastLine
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	fail := func(err error) (read, error) {
		return read{}, fmt.Errorf(": %s", jsonpos.Describe(body, err, "the lockfile"))
	}
	if tok, err := dec.Token(); err != nil {
		return fail(err)
	} else if tok != json.Delim('{') {
		return read{}, fmt.Errorf(" line 1: not a package-lock.json (no JSON object)")
	}
	version, versionLine := -1, 1
	var entries []npmAt
	var e npmEntry // decoded into, then copied: one allocation, not one an entry
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
				return read{}, fmt.Errorf(" line %d: lockfileVersion is not a number", versionLine)
			}
		case "packages":
			seenPackages = true
			if tok, err := dec.Token(); err != nil {
				return fail(err)
			} else if tok != json.Delim('{') {
				return read{}, fmt.Errorf(" line %d: packages is not an object", at(keyAt))
			}
			for dec.More() {
				entryAt := nextValue(body, dec.InputOffset())
				tok, err := dec.Token()
				if err != nil {
					return fail(err)
				}
				path, _ := tok.(string)
				e = npmEntry{}
				if err := dec.Decode(&e); err != nil {
					return read{}, fmt.Errorf(" line %d: packages[%q]: %s", at(entryAt), path, jsonpos.Describe(body, err, "the entry"))
				}
				if len(entries) == MaxTreePackages+1 { // the root is no package
					return read{}, fmt.Errorf(" line %d: more than %d packages (the cap on a lockfile's tree)", at(entryAt), MaxTreePackages)
				}
				entries = append(grow(entries), npmAt{path: path, line: at(entryAt), e: e})
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
		return read{}, fmt.Errorf(" line 1: no lockfileVersion: not a package-lock.json")
	case version < 2:
		return read{}, fmt.Errorf(" line %d: lockfileVersion %d is not read (it lists no installed packages): npm 7 or later writes version 3 with `npm install`", versionLine, version)
	case version > 3:
		return read{}, fmt.Errorf(" line %d: lockfileVersion %d is newer than the versions read (2 and 3)", versionLine, version)
	case !seenPackages:
		return read{}, fmt.Errorf(" line 1: no packages: not a package-lock.json of version %d", version)
	}
	var top []locked
	var root npmEntry
	for _, a := range entries {
		if a.path == "" {
			root = a.e
			continue
		}
		name, ok := strings.CutPrefix(a.path, "node_modules/")
		if !ok || strings.Contains(name, "/node_modules/") || a.e.Link {
			continue
		}
		field := fmt.Sprintf("packages[%q]", a.path)
		if a.e.Version == "" {
			return read{}, fmt.Errorf(" line %d: %s has no version", a.line, field)
		}
		top = append(grow(top), locked{name: name, version: a.e.Version, line: a.line, field: field})
	}
	for i := range top {
		_, dep := root.Dependencies[top[i].name]
		_, opt := root.OptionalDependencies[top[i].name]
		top[i].direct = dep || opt
	}
	t, dangling, err := npmTree(entries)
	if err != nil {
		return read{}, err
	}
	return read{top: top, tree: t, dangling: dangling}, nil
}

// nextValue is the offset of the next token after offset, past white space
// and the separators a json.Decoder has not yet consumed.
func nextValue(body []byte, offset int64) int64 {
	for offset < int64(len(body)) && strings.IndexByte(" \t\r\n,:", body[offset]) >= 0 {
		offset++
	}
	return offset
}
