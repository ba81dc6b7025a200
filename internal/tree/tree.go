// Package tree is a site's installed tree: every package instance its
// lockfile installs, where it sits, how it was resolved, and what depends
// on it (docs/npm.md). It holds the tree's facts and the rules read from
// them (which direct dependencies bring a package in, by which shortest
// path, whether only development needs it), without I/O: lockfile reads a
// file into a Tree, store keeps it, updatecheck matches its packages
// against the advisory feeds.
package tree

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
)

// Source is how a package instance was resolved.
type Source string

// The sources of a package instance.
const (
	// SourceRegistry is a package from an npm registry (a version, and a
	// tarball URL of the registry the lockfile names).
	SourceRegistry Source = "registry"
	// SourceGit is a package from a git repository ("git+https://…#sha").
	SourceGit Source = "git"
	// SourceTarball is a package from a tarball URL that is not a
	// registry's: an "https://…/x.tgz" in package.json.
	SourceTarball Source = "tarball"
	// SourceFile is a directory or a tarball on disk ("file:…").
	SourceFile Source = "file"
	// SourceLink is a symbolic link to a directory: a workspace's own
	// package or "link:…".
	SourceLink Source = "link"
)

// Sources are every Source, in the order the pages list them.
var Sources = []Source{SourceRegistry, SourceGit, SourceTarball, SourceFile, SourceLink}

// Kind is how a dependent declares a dependency.
type Kind string

// The kinds of a dependency.
const (
	KindProd     Kind = "prod"     // dependencies
	KindDev      Kind = "dev"      // devDependencies (of the site or a workspace only)
	KindOptional Kind = "optional" // optionalDependencies
	KindPeer     Kind = "peer"     // peerDependencies
)

// Root is the ID of the site's own package: the lockfile's root importer.
const Root = ""

// Package is one installed package instance.
type Package struct {
	// ID is where it sits, unique in the tree: npm's path
	// ("node_modules/express/node_modules/debug"), pnpm's snapshot key
	// ("debug@4.3.4(supports-color@8.1.1)"); a workspace's own package
	// is its directory ("packages/site").
	ID string
	// Name is the package installed: an alias's real package
	// ("x": "npm:real@1" installs real).
	Name string
	// Alias is the name it is installed under when that is not Name.
	Alias   string
	Version string
	// Dev, Optional and Peer are the lockfile's own flags.
	Dev, Optional, Peer bool
	Source              Source
	// Resolved is where it came from, as the lockfile says (a tarball
	// URL, a git URL with its commit, a path), "" when unsaid.
	Resolved  string
	Integrity string
	// InstallScript: the package runs a script when installed
	// (npm's hasInstallScript, pnpm's requiresBuild).
	InstallScript bool
	// Line is where its entry starts in the lockfile.
	Line int
}

// Edge is a dependency declared by a package (or the site, Root), and the
// instance it resolves to.
type Edge struct {
	From string // the dependent's ID; Root for the site
	// Name is the name the dependency is declared under (an alias's own
	// name, not its package's).
	Name  string
	Range string // as declared: "^4.17.1", "npm:real@^1", "workspace:*"
	Kind  Kind
	// To is the ID of the instance it resolves to, "" when none is
	// installed (an optional or a peer dependency the install left out).
	To string
}

// Tree is a site's installed tree.
type Tree struct {
	Packages []Package // sorted by ID
	Edges    []Edge    // sorted by From, then Name, then Kind
}

// Sort puts t's packages and edges in their order.
func (t *Tree) Sort() {
	slices.SortFunc(t.Packages, func(a, b Package) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(t.Edges, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.From, b.From), strings.Compare(a.Name, b.Name), strings.Compare(string(a.Kind), string(b.Kind)))
	})
}

// Hash is the tree's content: equal for two reads of one install, whatever
// the order or the formatting of the lockfile. t must be sorted.
func (t *Tree) Hash() [32]byte {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	flag := func(b bool) {
		if b {
			field("1")
		} else {
			field("0")
		}
	}
	for _, p := range t.Packages {
		field(p.ID)
		field(p.Name)
		field(p.Alias)
		field(p.Version)
		flag(p.Dev)
		flag(p.Optional)
		flag(p.Peer)
		field(string(p.Source))
		field(p.Resolved)
		field(p.Integrity)
		flag(p.InstallScript)
	}
	field("edges")
	for _, e := range t.Edges {
		field(e.From)
		field(e.Name)
		field(e.Range)
		field(string(e.Kind))
		field(e.To)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// Via is one way a package is brought in: Path is one shortest chain of
// package names from Head, a direct dependency of the site, to the package
// (["express", "send", "debug"]; [Head] for the direct dependency itself).
type Via struct {
	Head string
	Path []string
}

// Reach is how the site reaches a package.
type Reach struct {
	// Via holds one shortest path from each direct dependency of the site
	// that brings the package in, sorted by Head.
	Via []Via
	// DevOnly: every way in goes through a devDependency (of the site
	// or of a workspace).
	DevOnly bool
}

// Reach walks t's edges from the site (Root) and says, for every package
// ID it reaches, how. A package the walk does not reach (a lockfile entry
// nothing depends on) has no entry. Edges to nothing installed are passed
// over; a cycle is walked once.
func (t *Tree) Reach() map[string]*Reach {
	out := map[string]*Reach{}
	byID := make(map[string]*Package, len(t.Packages))
	for i := range t.Packages {
		byID[t.Packages[i].ID] = &t.Packages[i]
	}
	from := map[string][]Edge{}
	for _, e := range t.Edges {
		if e.To != "" && byID[e.To] != nil {
			from[e.From] = append(from[e.From], e)
		}
	}
	// Each direct dependency of the site is walked breadth first: the
	// first visit of a package is by one of its shortest paths.
	heads := from[Root]
	for _, h := range heads {
		parent := map[string]string{h.To: Root}
		queue := []string{h.To}
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			for _, e := range from[id] {
				if _, seen := parent[e.To]; !seen && e.To != h.To {
					parent[e.To] = id
					queue = append(queue, e.To)
				}
			}
		}
		for id := range parent {
			r := out[id]
			if r == nil {
				r = &Reach{DevOnly: true}
				out[id] = r
			}
			if slices.ContainsFunc(r.Via, func(v Via) bool { return v.Head == h.Name }) {
				continue // a package installed under two kinds of one name
			}
			var path []string
			for at := id; at != Root; at = parent[at] {
				path = append(path, byID[at].Name)
			}
			slices.Reverse(path)
			r.Via = append(r.Via, Via{Head: h.Name, Path: path})
		}
	}
	// What the site needs besides development: reached without a
	// devDependency.
	prod := map[string]bool{}
	queue := []string{Root}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, e := range from[id] {
			if e.Kind != KindDev && !prod[e.To] {
				prod[e.To] = true
				queue = append(queue, e.To)
			}
		}
	}
	for id, r := range out {
		r.DevOnly = !prod[id]
		slices.SortFunc(r.Via, func(a, b Via) int { return strings.Compare(a.Head, b.Head) })
	}
	return out
}
