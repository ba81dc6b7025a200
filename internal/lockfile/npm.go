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
	r := &npmReader{body: body, dec: json.NewDecoder(bytes.NewReader(body)), lastLine: 1}
	if tok, err := r.dec.Token(); err != nil {
		return read{}, r.fail(err)
	} else if tok != json.Delim('{') {
		return read{}, fmt.Errorf(" line 1: not a package-lock.json (no JSON object)")
	}
	version, versionLine := -1, 1
	var entries []npmAt
	seenPackages := false
	for r.dec.More() {
		keyAt := nextValue(body, r.dec.InputOffset())
		tok, err := r.dec.Token()
		if err != nil {
			return read{}, r.fail(err)
		}
		key, _ := tok.(string)
		switch key {
		case "lockfileVersion":
			versionLine = r.line(keyAt)
			if err := r.dec.Decode(&version); err != nil {
				return read{}, fmt.Errorf(" line %d: lockfileVersion is not a number", versionLine)
			}
		case "packages":
			seenPackages = true
			if entries, err = r.packages(keyAt); err != nil {
				return read{}, err
			}
		default:
			var skip json.RawMessage
			if err := r.dec.Decode(&skip); err != nil {
				return read{}, r.fail(err)
			}
		}
	}
	if err := npmVersionRead(version, versionLine, seenPackages); err != nil {
		return read{}, err
	}
	top, err := npmTop(entries)
	if err != nil {
		return read{}, err
	}
	t, dangling, err := npmTree(entries)
	if err != nil {
		return read{}, err
	}
	return read{top: top, tree: t, dangling: dangling}, nil
}

// npmReader is package-lock.json being decoded, with the line of every
// offset asked for.
type npmReader struct {
	body     []byte
	dec      *json.Decoder
	lastLine int
	// lastOffset is where lastLine was counted to.
	lastOffset int64
}

// line is the line of offset, counted on from the last one asked
// (entries come in order: a lockfile's lines are counted once).
func (r *npmReader) line(offset int64) int {
	offset = min(max(offset, 0), int64(len(r.body)))
	if offset < r.lastOffset {
		line, _ := jsonpos.Position(r.body, offset)
		return line
	}
	r.lastLine += bytes.Count(r.body[r.lastOffset:offset], []byte{'\n'})
	r.lastOffset = offset
	return r.lastLine
}

// fail is the decoder's err, worded with where it happened.
func (r *npmReader) fail(err error) error {
	return fmt.Errorf(": %s", jsonpos.Describe(r.body, err, "the lockfile"))
}

// packages reads the object "packages" (its key at keyAt), each entry with
// the line it starts on, at most MaxTreePackages besides the root.
func (r *npmReader) packages(keyAt int64) ([]npmAt, error) {
	if tok, err := r.dec.Token(); err != nil {
		return nil, r.fail(err)
	} else if tok != json.Delim('{') {
		return nil, fmt.Errorf(" line %d: packages is not an object", r.line(keyAt))
	}
	var entries []npmAt
	var e npmEntry // decoded into, then copied: one allocation, not one an entry
	for r.dec.More() {
		entryAt := nextValue(r.body, r.dec.InputOffset())
		tok, err := r.dec.Token()
		if err != nil {
			return nil, r.fail(err)
		}
		path, _ := tok.(string)
		e = npmEntry{}
		if err := r.dec.Decode(&e); err != nil {
			return nil, fmt.Errorf(" line %d: packages[%q]: %s", r.line(entryAt), path, jsonpos.Describe(r.body, err, "the entry"))
		}
		if len(entries) == MaxTreePackages+1 { // the root is no package
			return nil, fmt.Errorf(" line %d: more than %d packages (the cap on a lockfile's tree)", r.line(entryAt), MaxTreePackages)
		}
		entries = append(grow(entries), npmAt{path: path, line: r.line(entryAt), e: e})
	}
	if _, err := r.dec.Token(); err != nil {
		return nil, r.fail(err)
	}
	return entries, nil
}

// npmVersionRead refuses a lockfile whose version (-1: none) is not one
// read, or that has no packages.
func npmVersionRead(version, line int, seenPackages bool) error {
	switch {
	case version == -1:
		return fmt.Errorf(" line 1: no lockfileVersion: not a package-lock.json")
	case version < 2:
		return fmt.Errorf(" line %d: lockfileVersion %d is not read (it lists no installed packages): npm 7 or later writes version 3 with `npm install`", line, version)
	case version > 3:
		return fmt.Errorf(" line %d: lockfileVersion %d is newer than the versions read (2 and 3)", line, version)
	case !seenPackages:
		return fmt.Errorf(" line 1: no packages: not a package-lock.json of version %d", version)
	}
	return nil
}

// npmTop is the packages installed at the top level, each marked direct
// when the root entry depends on it.
func npmTop(entries []npmAt) ([]locked, error) {
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
			return nil, fmt.Errorf(" line %d: %s has no version", a.line, field)
		}
		top = append(grow(top), locked{name: name, version: a.e.Version, line: a.line, field: field})
	}
	for i := range top {
		_, dep := root.Dependencies[top[i].name]
		_, opt := root.OptionalDependencies[top[i].name]
		top[i].direct = dep || opt
	}
	return top, nil
}

// nextValue is the offset of the next token after offset, past white space
// and the separators a json.Decoder has not yet consumed.
func nextValue(body []byte, offset int64) int64 {
	for offset < int64(len(body)) && strings.IndexByte(" \t\r\n,:", body[offset]) >= 0 {
		offset++
	}
	return offset
}
