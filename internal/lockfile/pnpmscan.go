package lockfile

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxTreePackages caps the package instances a lockfile's tree may hold
// (npm's entries, pnpm's snapshots): a large monorepo's lockfile installs
// some ten thousand; a file past it is refused, naming the line.
const MaxTreePackages = 200_000

// pnpmPackage is what is read of an entry of pnpm-lock.yaml's packages.
type pnpmPackage struct {
	line                                        int
	version                                     string
	integrity, tarball, repo, commit, directory string
	kind                                        string // resolution's type: "", "git", "directory"
	requiresBuild                               bool
	peers                                       []pnpmDep
}

// pnpmSnapshot is what is read of an entry of pnpm-lock.yaml's snapshots.
type pnpmSnapshot struct {
	key      string
	line     int
	optional bool
	// deps are pnpmScanned.deps[from:to]: its dependencies and
	// optionalDependencies, in the file's order.
	from, to int
}

// pnpmDep is one name: value line of a block mapping read.
type pnpmDep struct {
	name, value string
	optional    bool // of optionalDependencies
	line        int
}

// pnpmScanned is pnpm-lock.yaml's packages and snapshots.
type pnpmScanned struct {
	packages  map[string]*pnpmPackage
	snapshots []pnpmSnapshot
	deps      []pnpmDep // every snapshot's, one after the other
}

// depsOf is a snapshot's dependencies.
func (s *pnpmScanned) depsOf(sn pnpmSnapshot) []pnpmDep { return s.deps[sn.from:sn.to] }

// pnpmScan reads the packages and snapshots of pnpm-lock.yaml line by line,
// in the form pnpm writes them (block mappings, a key's value a scalar or a
// one-line flow mapping): the entries' keys, and of their fields
// resolution, version, requiresBuild and peerDependencies (packages),
// optional, dependencies and optionalDependencies (snapshots). Any other
// field is passed over with every line indented under it, unread. What it
// reads that pnpm does not write (an anchor, an alias, a tag, a block
// scalar, a multi-line quoted scalar, a flow mapping where pnpm writes a
// block one) refuses the file, naming the line: nothing is expanded.
func pnpmScan(body []byte) (*pnpmScanned, error) {
	sc := &pnpmScanner{s: &pnpmScanned{packages: map[string]*pnpmPackage{}}, skip: -1, count: map[string]int{}}
	for n, rest := 1, body; len(rest) > 0; n++ {
		var raw []byte
		raw, rest, _ = bytes.Cut(rest, []byte{'\n'})
		if err := sc.line(n, bytes.TrimRight(raw, "\r")); err != nil {
			return nil, err
		}
	}
	sc.endEntry()
	return sc.s, nil
}

// pnpmScanner reads pnpm-lock.yaml a line at a time.
type pnpmScanner struct {
	s       *pnpmScanned
	section string // the top-level entry the line is in, when read
	ind     [3]int // the indentation of each level open: entry, field, key of a field
	depth   int    // the levels open
	field   string // the entry's field open (level 1)
	skip    int    // lines indented more than this are passed over; -1: none
	pkg     *pnpmPackage
	snap    *pnpmSnapshot
	count   map[string]int // the entries read, by section
}

// endEntry ends the snapshot being read, if any.
func (sc *pnpmScanner) endEntry() {
	if sc.snap != nil {
		sc.s.snapshots = append(grow(sc.s.snapshots), *sc.snap)
		sc.snap = nil
	}
	sc.pkg = nil
}

// line reads line n.
func (sc *pnpmScanner) line(n int, raw []byte) error {
	indent := 0
	for indent < len(raw) && raw[indent] == ' ' {
		indent++
	}
	if indent == len(raw) || raw[indent] == '#' || sc.skip >= 0 && indent > sc.skip {
		return nil
	}
	sc.skip = -1
	if raw[indent] == '\t' {
		return fmt.Errorf(" line %d: a tab in the indentation, which YAML forbids", n)
	}
	if indent == 0 {
		return sc.top(n, raw)
	}
	if sc.section == "" {
		return nil
	}
	if sc.depth >= 2 && indent == sc.ind[1] && !readFieldBytes(sc.section, raw[indent:]) {
		// A field not read, with what is indented under it: passed over
		// without a copy of its text.
		sc.field, sc.depth, sc.skip = "", 2, indent
		return nil
	}
	// The level of the line: the first whose indentation it has, or one
	// more than the deepest open when it is indented further.
	level := slices.Index(sc.ind[:sc.depth], indent)
	if level < 0 {
		if sc.depth > 0 && indent < sc.ind[sc.depth-1] || sc.depth == len(sc.ind) {
			return fmt.Errorf(" line %d: %s: an indentation pnpm does not write", n, sc.section)
		}
		level = sc.depth
		sc.ind[level] = indent
	}
	sc.depth = level + 1
	key, value, ok := yamlKey(raw[indent:])
	if !ok {
		if level == 0 || !bytes.HasPrefix(raw[indent:], []byte("- ")) && string(raw[indent:]) != "-" {
			return fmt.Errorf(" line %d: %s: not a mapping's key, as pnpm writes them", n, sc.section)
		}
		if level == 1 {
			return fmt.Errorf(" line %d: %s: a sequence where pnpm writes a field", n, sc.section)
		}
		sc.skip = indent // an entry of a sequence read nowhere (transitivePeerDependencies)
		return nil
	}
	if level != 1 || readField(sc.section, key) {
		if err := plainValue(value); err != nil {
			return fmt.Errorf(" line %d: %s: %v", n, sc.section, err)
		}
	}
	switch level {
	case 0:
		return sc.entry(n, key, value)
	case 1:
		sc.field = key
		if !readField(sc.section, key) {
			sc.skip = indent
			return nil
		}
		if err := setField(sc.pkg, sc.snap, key, value, n); err != nil {
			return fmt.Errorf(" line %d: %s: %v", n, sc.section, err)
		}
		return nil
	}
	return sc.dependency(n, key, value)
}

// top reads a line at the left margin: a top-level key.
func (sc *pnpmScanner) top(n int, raw []byte) error {
	sc.endEntry()
	sc.depth, sc.section = 0, ""
	key, value, ok := yamlKey(raw)
	switch {
	case !ok && string(raw) != "---" && string(raw) != "...":
		// A line of the entry above that is not indented (a sequence's
		// "- " at its key's column): pnpm writes none, and reading on
		// would take the lines after it for another entry's.
		return fmt.Errorf(" line %d: a line at the left margin that is no key, which pnpm never writes", n)
	case ok && (key == "packages" || key == "snapshots"):
		if value != "" && value != "{}" {
			return fmt.Errorf(" line %d: %s is not the block mapping pnpm writes", n, key)
		}
		sc.section = key
	}
	return nil
}

// entry reads the key of an entry of packages or snapshots.
func (sc *pnpmScanner) entry(n int, key, value string) error {
	sc.endEntry()
	if value != "" && value != "{}" {
		return fmt.Errorf(" line %d: %s[%q] is not the block mapping pnpm writes", n, sc.section, key)
	}
	if sc.count[sc.section]++; sc.count[sc.section] > MaxTreePackages {
		return fmt.Errorf(" line %d: more than %d packages (the cap on a lockfile's tree)", n, MaxTreePackages)
	}
	if sc.section == "packages" {
		sc.pkg = &pnpmPackage{line: n}
		sc.s.packages[key] = sc.pkg
	} else {
		sc.snap = &pnpmSnapshot{key: key, line: n, from: len(sc.s.deps), to: len(sc.s.deps)}
	}
	return nil
}

// dependency reads a key of a field's mapping: a dependency.
func (sc *pnpmScanner) dependency(n int, key, value string) error {
	switch {
	case sc.pkg != nil && sc.field == "peerDependencies":
		sc.pkg.peers = append(sc.pkg.peers, pnpmDep{name: key, value: unquote(value), line: n})
	case sc.snap != nil && (sc.field == "dependencies" || sc.field == "optionalDependencies"):
		sc.s.deps = append(grow(sc.s.deps), pnpmDep{name: key, value: unquote(value), optional: sc.field == "optionalDependencies", line: n})
		sc.snap.to = len(sc.s.deps)
	default:
		return fmt.Errorf(" line %d: %s: %s is not the scalar pnpm writes", n, sc.section, sc.field)
	}
	return nil
}

// readField says whether a field of section's entries is read.
func readField(section, key string) bool {
	if section == "packages" {
		return key == "resolution" || key == "version" || key == "requiresBuild" || key == "peerDependencies"
	}
	return key == "optional" || key == "dependencies" || key == "optionalDependencies"
}

// readFieldBytes is readField of the plain key line starts with.
func readFieldBytes(section string, line []byte) bool {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return true // not a plain key: yamlKey says what it is
	}
	switch string(line[:i]) {
	case "resolution", "version", "requiresBuild", "peerDependencies", "optional", "dependencies", "optionalDependencies":
		return readField(section, string(line[:i]))
	}
	return false
}

// setField sets a field read of an entry of packages (pkg) or snapshots (snap).
func setField(pkg *pnpmPackage, snap *pnpmSnapshot, key, value string, n int) error {
	switch {
	case pkg != nil && key == "resolution":
		m, err := flowMap(value)
		if err != nil {
			return fmt.Errorf("resolution: %v", err)
		}
		pkg.integrity, pkg.tarball, pkg.repo, pkg.commit, pkg.directory, pkg.kind = m["integrity"], m["tarball"], m["repo"], m["commit"], m["directory"], m["type"]
	case pkg != nil && key == "version":
		pkg.version = unquote(value)
	case pkg != nil && key == "requiresBuild":
		pkg.requiresBuild = value == "true"
	case snap != nil && key == "optional":
		snap.optional = value == "true"
	case value != "" && value != "{}":
		return fmt.Errorf("%s is not the block mapping pnpm writes", key)
	}
	return nil
}

// yamlKey splits a line's "key: value" (the key plain, 'quoted' or
// "quoted"); ok is false for a line that is no key.
func yamlKey(line []byte) (key, value string, ok bool) {
	s := string(line)
	var rest string
	switch {
	case s == "":
		return "", "", false
	case s[0] == '\'' || s[0] == '"':
		end := closingQuote(s)
		if end < 0 {
			return "", "", false
		}
		key, rest = unquote(s[:end+1]), s[end+1:]
		if !strings.HasPrefix(rest, ":") {
			return "", "", false
		}
		rest = rest[1:]
	default:
		i := strings.Index(s, ": ")
		if i < 0 {
			if !strings.HasSuffix(s, ":") {
				return "", "", false
			}
			i = len(s) - 1
		}
		key, rest = s[:i], s[i+1:]
		if key == "" || key[0] == '-' && (len(key) == 1 || key[1] == ' ') || key[0] == '?' || key[0] == '{' || key[0] == '[' {
			return "", "", false
		}
	}
	if rest != "" && rest[0] != ' ' {
		return "", "", false
	}
	value = strings.TrimSpace(rest)
	if value != "" && value[0] != '\'' && value[0] != '"' {
		if i := strings.Index(value, " #"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
	}
	return key, value, true
}

// closingQuote is the index of the quote that closes the scalar s starts
// with, or -1.
func closingQuote(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '\'' && s[i] == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}

// plainValue refuses what pnpm never writes as a value read: an anchor, an
// alias, a tag, a block scalar, a quoted scalar that goes on past its line.
func plainValue(v string) error {
	if v == "" {
		return nil
	}
	switch v[0] {
	case '&', '*', '!':
		return fmt.Errorf("a YAML anchor, alias or tag (%s), which pnpm never writes: refused unexpanded", firstWord(v))
	case '|', '>':
		return fmt.Errorf("a block scalar, which pnpm never writes here")
	case '\'', '"':
		if closingQuote(v) != len(v)-1 {
			return fmt.Errorf("a quoted scalar that goes on past its line, which pnpm never writes here")
		}
	}
	return nil
}

func firstWord(v string) string {
	if i := strings.IndexAny(v, " ,[]{}"); i > 0 {
		return v[:i]
	}
	return v
}

// unquote is a scalar's text: quotes removed (” is ', a double-quoted
// one's escapes read).
func unquote(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
		return v[1 : len(v)-1]
	}
	return v
}

// flowMap reads a one-line flow mapping of scalars, as pnpm writes a
// resolution: "{integrity: sha512-…, tarball: https://…}".
func flowMap(v string) (map[string]string, error) {
	if len(v) < 2 || v[0] != '{' || v[len(v)-1] != '}' {
		return nil, fmt.Errorf("not a one-line flow mapping")
	}
	m := map[string]string{}
	s := strings.TrimSpace(v[1 : len(v)-1])
	for s != "" {
		var item string
		if s[0] == '\'' || s[0] == '"' {
			return nil, fmt.Errorf("a quoted key, which pnpm never writes here")
		}
		i := strings.Index(s, ": ")
		if i < 0 {
			return nil, fmt.Errorf("an entry without a value")
		}
		key := s[:i]
		s = strings.TrimLeft(s[i+2:], " ")
		if s != "" && (s[0] == '\'' || s[0] == '"') {
			end := closingQuote(s)
			if end < 0 {
				return nil, fmt.Errorf("an unclosed quote")
			}
			item, s = unquote(s[:end+1]), s[end+1:]
		} else {
			end := strings.Index(s, ", ")
			if end < 0 {
				end = len(s)
			}
			item, s = strings.TrimSpace(s[:end]), s[end:]
			if err := plainValue(item); err != nil {
				return nil, err
			}
			if strings.ContainsAny(item, "{}[]") {
				return nil, fmt.Errorf("a nested collection, which pnpm never writes here")
			}
		}
		m[key] = item
		s = strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(s, " "), ","), " ")
	}
	return m, nil
}

// grow is s with room for one more, doubling its capacity when full:
// append's own growth (a quarter at a time for a large slice) would
// allocate some five times the final size over a large lockfile's
// hundreds of thousands of dependencies, this twice.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s), 64))
}
