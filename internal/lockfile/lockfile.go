// Package lockfile reads a site's lockfile: npm's package-lock.json
// (lockfileVersion 2 and 3) and pnpm's pnpm-lock.yaml (version 9). One
// read gives both the site's components (each chosen package becomes a
// component whose source is "npm:NAME", at the version the lockfile locks)
// and its whole installed tree (internal/tree: every package instance and
// the dependencies between them, docs/npm.md). A lockfile is read or
// refused as a whole, with an error that names the file, the line and the
// field.
package lockfile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/tree"
)

// MaxSize caps the lockfile: a large site's is a few megabytes.
const MaxSize = 64 << 20

// ErrInvalid wraps every refusal of a lockfile.
var ErrInvalid = errors.New("invalid lockfile")

// Options say which locked packages are components.
type Options struct {
	// Include are globs over package names ("@vitnode/*", path.Match's
	// syntax, where * stops at the scope's slash), matched against every
	// package installed at the top level. Without any, the site's own
	// dependencies are the components (dependencies and
	// optionalDependencies of the root, not devDependencies).
	Include []string
	// Core names the core's package: its component's code is "core", and
	// the other packages' peerDependencies on it say which core they need.
	Core string
	// Policy becomes the site-wide policy of the manifest read (a
	// lockfile says nothing of policy); the zero Policy offers every
	// release at once.
	Policy release.Policy
}

// Validate checks the options' globs and core name.
func (o Options) Validate() error {
	for _, g := range o.Include {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("include %q is not a glob: %w", g, err)
		}
	}
	if o.Core != "" {
		if _, err := npm.ValidateName(o.Core); err != nil {
			return fmt.Errorf("core: %w", err)
		}
	}
	if err := o.Policy.Validate(); err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	return nil
}

// Lockfile is what one read of a lockfile gives.
type Lockfile struct {
	// Manifest holds the components Options choose.
	Manifest *manifest.Manifest
	// Tree is every package instance installed and the dependencies
	// between them, sorted (tree.Tree.Sort).
	Tree *tree.Tree
	// FileHash is the SHA-256 of the file's bytes: a re-read of the same
	// bytes gives the same Lockfile.
	FileHash [32]byte
	// Dangling are the first MaxDangling of the required dependencies
	// installed nowhere, in the file's order (an entry's by name): kept
	// in Tree as edges to nothing (To ""), and said here; DanglingCount
	// counts them all.
	Dangling      []Dangling
	DanglingCount int
}

// MaxDangling is how many dangling dependencies a Lockfile names.
const MaxDangling = 100

// danglings gathers the dangling dependencies: the first MaxDangling, and
// the count of all.
type danglings struct {
	first []Dangling
	count int
}

// add counts a dangling edge e, the field its declaration is in (made
// only when it is among the first).
func (d *danglings) add(line int, field func() string, e tree.Edge) {
	if d.count++; len(d.first) < MaxDangling {
		d.first = append(d.first, Dangling{Line: line, Field: field(), Edge: e})
	}
}

// Dangling is a required dependency (a package's dependencies, the site's
// or a workspace's devDependencies) that the lockfile installs nowhere: a
// lockfile written by hand or by an install that was cut short. The rest
// of the tree is read; the edge is kept with To "".
type Dangling struct {
	Line  int
	Field string // packages["node_modules/a"].dependencies["b"]
	Edge  tree.Edge
}

// String says it in the lockfile's words, without the file's name.
func (d Dangling) String() string {
	return fmt.Sprintf("line %d: %s (%s) is installed nowhere", d.Line, d.Field, d.Edge.Range)
}

// locked is one package a lockfile installs at the top level.
type locked struct {
	name    string
	version string
	direct  bool // a dependency or optional dependency of the root
	line    int
	field   string // its place in the file, for errors
}

// Read reads the lockfile at file; its name says its kind
// (package-lock.json or npm-shrinkwrap.json, pnpm-lock.yaml).
func Read(file string, opt Options) (*Lockfile, error) {
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	body, err := readFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, body, opt)
}

func readFile(file string) ([]byte, error) {
	body, err := localfile.Read(file, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("read lockfile: %w", err)
	}
	if len(body) > MaxSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, file, MaxSize)
	}
	return body, nil
}

// Parse reads body, the lockfile at file (whose name says its kind).
func Parse(file string, body []byte, opt Options) (*Lockfile, error) {
	return parse(file, body, sha256.Sum256(body), opt)
}

// parse is Parse of body whose SHA-256 is sum.
func parse(file string, body []byte, sum [32]byte, opt Options) (*Lockfile, error) {
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var r read
	var err error
	switch base := filepath.Base(file); {
	case base == "pnpm-lock.yaml" || strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml"):
		r, err = parsePnpm(body)
	default:
		r, err = parseNpm(body)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s%v", ErrInvalid, file, err)
	}
	m, err := components(r.top, opt)
	if err != nil {
		return nil, fmt.Errorf("%w: %s%v", ErrInvalid, file, err)
	}
	r.tree.Sort()
	r.tree.Edges = uniqueEdges(r.tree.Edges)
	return &Lockfile{Manifest: m, Tree: r.tree, FileHash: sum, Dangling: r.dangling.first, DanglingCount: r.dangling.count}, nil
}

// read is what a lockfile's parser gives: the packages installed at the
// top level, of which Options choose the components, and the tree.
type read struct {
	top      []locked
	tree     *tree.Tree
	dangling danglings
}

// components chooses the packages and names their components.
func components(pkgs []locked, opt Options) (*manifest.Manifest, error) {
	m := &manifest.Manifest{Components: []manifest.Component{}, Policy: opt.Policy}
	byCode := map[string]locked{}
	for _, p := range pkgs {
		if !chosen(p, opt) {
			continue
		}
		name, err := npm.ValidateName(p.name)
		if err != nil {
			return nil, fmt.Errorf(" line %d: %s: %v", p.line, p.field, err)
		}
		code := Code(name)
		if string(name) == opt.Core {
			code = "core"
		}
		if other, ok := byCode[code]; ok {
			return nil, fmt.Errorf(" line %d: %s: %q and %q (line %d) would both be component %q", p.line, p.field, p.name, other.name, other.line, code)
		}
		byCode[code] = p
		m.Components = append(m.Components, manifest.Component{Code: code, Name: p.name, Version: p.version, Source: "npm:" + p.name})
	}
	slices.SortFunc(m.Components, func(a, b manifest.Component) int { return strings.Compare(a.Code, b.Code) })
	return m, nil
}

func chosen(p locked, opt Options) bool {
	if p.name == opt.Core && opt.Core != "" {
		return true
	}
	if len(opt.Include) == 0 {
		return p.direct
	}
	for _, g := range opt.Include {
		if ok, _ := path.Match(g, p.name); ok {
			return true
		}
	}
	return false
}

// uniqueEdges is sorted edges with one edge for each dependent, name and
// kind (the tree's key for an edge): a name a lockfile lists twice under
// one kind (a peer among both pnpm's dependencies and optionalDependencies)
// is one dependency, resolved where any of its listings is.
func uniqueEdges(edges []tree.Edge) []tree.Edge {
	out := edges[:0]
	for _, e := range edges {
		if n := len(out); n > 0 && out[n-1].From == e.From && out[n-1].Name == e.Name && out[n-1].Kind == e.Kind {
			if out[n-1].To == "" {
				out[n-1] = e
			}
			continue
		}
		out = append(out, e)
	}
	return out
}
