package lockfile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/tree"
)

// npmTree is the installed tree of package-lock.json's entries (docs/npm.md,
// The tree):
//   - every entry but the root ("") and the links is a package instance,
//     its ID the entry's key: "node_modules/a/node_modules/b", or a
//     directory ("packages/site": a workspace; "local/x": a "file:"
//     directory), its name the entry's "name" or the last name of its key
//     (an alias: key "node_modules/x" with name "real" is real, alias x);
//   - a link ("node_modules/x" with "link": true) is no instance: what
//     resolves to it resolves to its target directory, whose name, when
//     its entry has none, is the link's;
//   - the edges are each entry's dependencies, optionalDependencies and
//     peerDependencies, and the root's and the directories'
//     devDependencies, resolved as npm resolves them: the nearest
//     node_modules/NAME up from the dependent's path; the root depends on
//     each of its workspaces (kind prod, range "file:DIR"), as npm's own
//     tree does.
//
// An entry under node_modules without a version (and not a link) refuses
// the lockfile; a required dependency installed nowhere is kept as an edge
// to nothing and said (Dangling).
func npmTree(entries []npmAt) (*tree.Tree, danglings, error) {
	x, err := indexNpm(entries)
	if err != nil {
		return nil, danglings{}, err
	}
	edges := 0
	for _, a := range entries {
		edges += len(a.e.Dependencies) + len(a.e.OptionalDependencies) + len(a.e.PeerDependencies) + len(a.e.DevDependencies)
	}
	t := &tree.Tree{Packages: make([]tree.Package, 0, len(entries)), Edges: make([]tree.Edge, 0, edges+len(entries))}
	for _, a := range entries {
		if a.path == "" || a.e.Link {
			continue
		}
		p, err := x.instance(a)
		if err != nil {
			return nil, danglings{}, err
		}
		t.Packages = append(t.Packages, p)
	}
	var dangling danglings
	for _, a := range entries {
		if !a.e.Link {
			t.Edges = x.edges(t.Edges, a, &dangling)
		}
	}
	t.Edges = x.workspaceEdges(t.Edges)
	return t, dangling, nil
}

// npmIndex is what the entries of a package-lock.json say of each other.
type npmIndex struct {
	entries []npmAt
	root    *npmAt
	byPath  map[string]*npmAt
	// linkName is the name each linked directory is linked under.
	linkName   map[string]string
	workspaces []string // the root's globs
	// fileDirs are the directories a dependent declares with "file:".
	fileDirs map[string]bool
}

func indexNpm(entries []npmAt) (*npmIndex, error) {
	x := &npmIndex{entries: entries, byPath: make(map[string]*npmAt, len(entries)), linkName: map[string]string{}, fileDirs: map[string]bool{}}
	for i := range entries {
		if other, ok := x.byPath[entries[i].path]; ok {
			return nil, fmt.Errorf(" line %d: packages[%q] twice (and line %d)", entries[i].line, entries[i].path, other.line)
		}
		x.byPath[entries[i].path] = &entries[i]
	}
	for _, a := range entries {
		if a.e.Link && a.e.Resolved != "" {
			if _, ok := x.linkName[a.e.Resolved]; !ok {
				x.linkName[a.e.Resolved] = lastName(a.path)
			}
		}
	}
	if x.root = x.byPath[""]; x.root != nil && len(x.root.e.Workspaces) > 0 {
		x.workspaces = npmWorkspaces(x.root.e.Workspaces)
	}
	for _, a := range entries {
		for name, spec := range a.e.Dependencies {
			if strings.HasPrefix(spec, "file:") {
				if to := npmResolve(x.byPath, a.path, name); to != "" {
					x.fileDirs[to] = true
				}
			}
		}
	}
	return x, nil
}

// isWorkspace says whether dir is one of the root's workspaces.
func (x *npmIndex) isWorkspace(dir string) bool {
	for _, g := range x.workspaces {
		g = strings.TrimSuffix(strings.TrimPrefix(g, "./"), "/")
		if ok, _ := path.Match(g, dir); ok {
			return true
		}
		if prefix, ok := strings.CutSuffix(g, "/**"); ok && strings.HasPrefix(dir, prefix+"/") {
			return true
		}
	}
	return false
}

// inModules says whether an entry's key is under a node_modules (not a
// directory of the site's own).
func inModules(key string) bool {
	return strings.HasPrefix(key, "node_modules/") || strings.Contains(key, "/node_modules/")
}

// instance is the package instance of an entry that is no link.
func (x *npmIndex) instance(a npmAt) (tree.Package, error) {
	p := tree.Package{
		ID: a.path, Version: a.e.Version, Dev: a.e.Dev, Optional: a.e.Optional, Peer: a.e.Peer,
		Resolved: a.e.Resolved, Integrity: a.e.Integrity, InstallScript: a.e.HasInstallScript, Line: a.line,
	}
	if inModules(a.path) {
		if a.e.Version == "" {
			return p, fmt.Errorf(" line %d: packages[%q] has no version", a.line, a.path)
		}
		key := lastName(a.path)
		p.Name = key
		if a.e.Name != "" && a.e.Name != key {
			p.Name, p.Alias = a.e.Name, key
		}
		p.Source = npmSource(p.Name, a.e.Resolved)
		return p, nil
	}
	// A directory: a workspace, or a "file:" one.
	p.Name = cmp.Or(a.e.Name, x.linkName[a.path], a.path)
	p.Source = tree.SourceLink
	if x.fileDirs[a.path] && !x.isWorkspace(a.path) {
		p.Source, p.Resolved = tree.SourceFile, "file:"+a.path
	}
	return p, nil
}

// edges appends to out the edges of the entry a (no link), and to dangling
// its required dependencies installed nowhere.
func (x *npmIndex) edges(out []tree.Edge, a npmAt, dangling *danglings) []tree.Edge {
	from := a.path
	dir := from != "" && !inModules(from)
	add := func(kind tree.Kind, deps map[string]string, field string, must bool) {
		var missing []tree.Edge
		for name, spec := range deps {
			e := tree.Edge{From: from, Name: name, Range: spec, Kind: kind, To: npmResolve(x.byPath, from, name)}
			out = append(out, e)
			if e.To == "" && must {
				missing = append(missing, e)
			}
		}
		// Said in the order of their names: the same every read.
		slices.SortFunc(missing, func(a, b tree.Edge) int { return strings.Compare(a.Name, b.Name) })
		for _, e := range missing {
			dangling.add(a.line, func() string { return fmt.Sprintf("packages[%q].%s[%q]", from, field, e.Name) }, e)
		}
	}
	prod := a.e.Dependencies
	if len(a.e.OptionalDependencies) > 0 && len(prod) > 0 {
		// A name in both is optional (npm's rule).
		prod = make(map[string]string, len(a.e.Dependencies))
		for n, s := range a.e.Dependencies {
			if _, opt := a.e.OptionalDependencies[n]; !opt {
				prod[n] = s
			}
		}
	}
	add(tree.KindProd, prod, "dependencies", true)
	add(tree.KindOptional, a.e.OptionalDependencies, "optionalDependencies", false)
	if from == "" || dir {
		// The site's and its workspaces' are installed; a "file:"
		// directory's are not.
		add(tree.KindDev, a.e.DevDependencies, "devDependencies", from == "" || x.isWorkspace(from))
	}
	// A peer the install left out is no fault: the lockfile says what
	// npm installed.
	add(tree.KindPeer, a.e.PeerDependencies, "peerDependencies", false)
	return out
}

// workspaceEdges appends to out the site's dependency on each of its
// workspaces, unless it declares that dependency itself.
func (x *npmIndex) workspaceEdges(out []tree.Edge) []tree.Edge {
	declared := map[string]bool{}
	if x.root != nil {
		for _, deps := range []map[string]string{x.root.e.Dependencies, x.root.e.OptionalDependencies, x.root.e.DevDependencies} {
			for name := range deps {
				declared[name] = true
			}
		}
	}
	for _, a := range x.entries {
		name := lastName(a.path)
		if !a.e.Link || !x.isWorkspace(a.e.Resolved) || "node_modules/"+name != a.path || declared[name] {
			continue
		}
		if _, ok := x.byPath[a.e.Resolved]; ok {
			out = append(out, tree.Edge{From: tree.Root, Name: name, Range: "file:" + a.e.Resolved, Kind: tree.KindProd, To: a.e.Resolved})
		}
	}
	return out
}

// npmResolve is the ID that a dependency name of the entry at from resolves
// to, as npm resolves it: the nearest node_modules/NAME up from from's path
// (a directory's own node_modules, then the root's); a link resolves to its
// target. "" when none is installed.
func npmResolve(byPath map[string]*npmAt, from, name string) string {
	p := from
	for {
		cand := "node_modules/" + name
		if p != "" {
			cand = p + "/" + cand
		}
		if a, ok := byPath[cand]; ok {
			if a.e.Link {
				if _, ok := byPath[a.e.Resolved]; ok {
					return a.e.Resolved
				}
				return ""
			}
			return cand
		}
		if p == "" {
			return ""
		}
		if i := strings.LastIndex(p, "/node_modules/"); i >= 0 {
			p = p[:i]
		} else {
			p = ""
		}
	}
}

// lastName is the package name an entry's key ends with: "@s/b" of
// "node_modules/a/node_modules/@s/b", the last element of a directory.
func lastName(key string) string {
	if i := strings.LastIndex(key, "node_modules/"); i >= 0 {
		return key[i+len("node_modules/"):]
	}
	return path.Base(key)
}

// npmSource says how an entry under node_modules was resolved, from its
// "resolved": a git URL; a "file:" path; a URL of the form
// …/NAME/-/FILE.tgz (npm's and every registry's tarball address) or none
// (npm leaves it out for a registry's package in some installs) is a
// registry's; any other URL is a tarball's.
func npmSource(name, resolved string) tree.Source {
	switch {
	case resolved == "":
		return tree.SourceRegistry
	case strings.HasPrefix(resolved, "git+"), strings.HasPrefix(resolved, "git:"), strings.HasPrefix(resolved, "github:"),
		strings.HasPrefix(resolved, "gitlab:"), strings.HasPrefix(resolved, "bitbucket:"):
		return tree.SourceGit
	case strings.HasPrefix(resolved, "file:"):
		return tree.SourceFile
	case registryTarball(name, resolved):
		return tree.SourceRegistry
	}
	return tree.SourceTarball
}

// registryTarball says whether u is a registry's tarball address of the
// package name: …/NAME/-/FILE.tgz, a scope's slash as "/" or "%2f".
func registryTarball(name, u string) bool {
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return false
	}
	u, _, _ = strings.Cut(u, "?")
	if !strings.HasSuffix(u, ".tgz") {
		return false
	}
	return strings.Contains(u, "/"+name+"/-/") || strings.Contains(strings.ToLower(u), "/"+strings.ToLower(strings.Replace(name, "/", "%2f", 1))+"/-/")
}

// npmWorkspaces is the root's "workspaces": a list of globs, or an object
// whose "packages" is one (Yarn's form, which npm reads too).
func npmWorkspaces(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var obj struct {
		Packages []string `json:"packages"`
	}
	_ = json.Unmarshal(raw, &obj)
	return obj.Packages
}
