package lockfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/tree"
)

// pnpmTree is the installed tree of pnpm-lock.yaml (docs/npm.md, The tree):
//   - every snapshot is a package instance, its ID the snapshot's key
//     ("debug@4.3.4(supports-color@8.1.1)"), its name, version, source,
//     integrity and install script those of its packages entry (the key
//     without the peers' suffix);
//   - every importer but the root (".") is a workspace: an instance whose
//     ID is its directory, a link; the root depends on each (kind prod,
//     range "file:DIR"); a "link:" to a directory that is no importer is
//     an instance of its own, a link;
//   - the edges are the importers' dependencies, optionalDependencies and
//     devDependencies (range: the specifier) and the snapshots'
//     dependencies and optionalDependencies (range: the version pnpm
//     resolved, the only one its lockfile keeps), a dependency that the
//     packages entry names among its peerDependencies being of kind peer,
//     and a peer not resolved an edge to nothing;
//   - Dev is not in pnpm 9's lockfile: an instance is dev when only
//     devDependencies (of the root or a workspace) bring it in, as npm
//     marks it; an alias is the name an edge gives an instance of another
//     package ("x": "npm:real@1" installs real, alias x).
//
// A snapshot without a packages entry is what its key says (a name and a
// version from a registry); one whose key names no version refuses the
// lockfile; a required dependency installed nowhere is kept
// as an edge to nothing and said (Dangling).
func pnpmTree(dirs []pnpmImporter, deps []pnpmImporterDep, s *pnpmScanned) (*tree.Tree, danglings, error) {
	if len(s.snapshots)+len(dirs) > MaxTreePackages {
		return nil, danglings{}, fmt.Errorf(" line 1: more than %d packages (the cap on a lockfile's tree)", MaxTreePackages)
	}
	n := len(deps) + len(dirs) + len(s.deps)
	for _, p := range s.packages {
		n += len(p.peers)
	}
	b := &pnpmBuild{
		s:   s,
		t:   &tree.Tree{Packages: make([]tree.Package, 0, len(s.snapshots)+len(dirs)), Edges: make([]tree.Edge, 0, n)},
		ids: make(map[string]int, len(s.snapshots)+len(dirs)),
	}
	for _, d := range dirs {
		b.add(tree.Package{ID: d.dir, Name: d.dir, Source: tree.SourceLink, Line: d.line})
	}
	for _, sn := range s.snapshots {
		if err := b.snapshot(sn); err != nil {
			return nil, danglings{}, err
		}
	}
	b.importerEdges(dirs, deps)
	for _, sn := range s.snapshots {
		b.snapshotEdges(sn)
	}
	markPnpm(b.t, b.ids)
	return b.t, b.dangling, nil
}

// pnpmBuild is a pnpm-lock.yaml's tree as it is built.
type pnpmBuild struct {
	s        *pnpmScanned
	t        *tree.Tree
	ids      map[string]int // ID → index in t.Packages
	dangling danglings
}

func (b *pnpmBuild) add(p tree.Package) {
	b.ids[p.ID] = len(b.t.Packages)
	b.t.Packages = append(b.t.Packages, p)
}

// baseKey is a snapshot's packages key: its key without the peers' suffix.
func baseKey(key string) string {
	if i := strings.IndexByte(key, '('); i > 0 {
		return key[:i]
	}
	return key
}

// snapshot adds the instance a snapshot is.
func (b *pnpmBuild) snapshot(sn pnpmSnapshot) error {
	field := fmt.Sprintf("snapshots[%q]", sn.key)
	name, _, ok := splitKey(sn.key)
	if !ok {
		return fmt.Errorf(" line %d: %s: the key names no version (NAME@VERSION)", sn.line, field)
	}
	base := baseKey(sn.key)
	_, ref, _ := splitKey(base)
	p := b.s.packages[base]
	if p == nil {
		p = &pnpmPackage{} // what the key says, and no more
	}
	pk := tree.Package{ID: sn.key, Name: name, Version: p.version, Optional: sn.optional, Integrity: p.integrity, InstallScript: p.requiresBuild, Line: sn.line}
	if pk.Version == "" && ref != "" && ref[0] >= '0' && ref[0] <= '9' {
		pk.Version = ref
	}
	switch {
	case p.kind == "git" || p.repo != "":
		pk.Source, pk.Resolved = tree.SourceGit, p.repo+"#"+p.commit
	case p.kind == "directory" || p.directory != "":
		pk.Source, pk.Resolved = tree.SourceFile, "file:"+p.directory
	case p.tarball != "" && !registryTarball(name, p.tarball):
		pk.Source, pk.Resolved = tree.SourceTarball, p.tarball
	default:
		pk.Source, pk.Resolved = tree.SourceRegistry, p.tarball
	}
	if pk.Version == "" && pk.Source == tree.SourceRegistry {
		return fmt.Errorf(" line %d: %s has no version", sn.line, field)
	}
	if i, ok := b.ids[sn.key]; ok {
		return fmt.Errorf(" line %d: %s twice (and line %d)", sn.line, field, b.t.Packages[i].Line)
	}
	b.add(pk)
	return nil
}

// edge adds e; must: a required dependency, dangling when e.To is "".
func (b *pnpmBuild) edge(e tree.Edge, line int, field func() string, must bool) {
	b.t.Edges = append(b.t.Edges, e)
	if e.To == "" && must {
		b.dangling.add(line, field, e)
	}
}

// resolve is the ID a version names from importer (a snapshot's links
// are relative to the lockfile's folder: "."); a link to a directory that
// is no importer adds it.
func (b *pnpmBuild) resolve(importer, name, ref string, line int) string {
	if !strings.HasPrefix(ref, "link:") {
		if key := pnpmRef(name, ref); hasKey(b.ids, key) {
			return key
		}
		return ""
	}
	dir := pnpmLink(importer, ref)
	if dir == "." {
		return tree.Root
	}
	if i, ok := b.ids[dir]; ok && b.t.Packages[i].Name == dir {
		b.t.Packages[i].Name = name // a workspace takes the name it is linked under
	} else if !ok {
		b.add(tree.Package{ID: dir, Name: name, Source: tree.SourceLink, Line: line})
	}
	return dir
}

// importerEdges adds the importers' dependencies, and the site's on each
// workspace it does not link itself.
func (b *pnpmBuild) importerEdges(dirs []pnpmImporter, deps []pnpmImporterDep) {
	for _, d := range deps {
		from := d.importer
		if from == "." {
			from = tree.Root
		}
		to := b.resolve(d.importer, d.name, d.version, d.line)
		self := to == tree.Root && strings.HasPrefix(d.version, "link:") // a link to the site itself
		b.edge(tree.Edge{From: from, Name: d.name, Range: d.spec, Kind: d.kind, To: to}, d.line, func() string { return d.field }, d.kind != tree.KindOptional && !self)
	}
	linked := map[string]bool{}
	for _, e := range b.t.Edges {
		if e.From == tree.Root && e.To != "" {
			linked[e.To] = true
		}
	}
	for _, d := range dirs {
		if !linked[d.dir] {
			b.edge(tree.Edge{From: tree.Root, Name: d.dir, Range: "file:" + d.dir, Kind: tree.KindProd, To: d.dir}, d.line, nil, false)
		}
	}
}

// snapshotEdges adds a snapshot's dependencies: of kind peer those its
// packages entry names among its peerDependencies, and an edge to nothing
// for each peer not resolved.
func (b *pnpmBuild) snapshotEdges(sn pnpmSnapshot) {
	var peers []pnpmDep
	if p := b.s.packages[baseKey(sn.key)]; p != nil {
		peers = p.peers
	}
	isPeer := func(name string) bool {
		return slices.ContainsFunc(peers, func(x pnpmDep) bool { return x.name == name })
	}
	deps := b.s.depsOf(sn)
	for _, d := range deps {
		kind := tree.KindProd
		switch {
		case isPeer(d.name):
			kind = tree.KindPeer
		case d.optional:
			kind = tree.KindOptional
		}
		field := func() string { return fmt.Sprintf("snapshots[%q].dependencies[%q]", sn.key, d.name) }
		b.edge(tree.Edge{From: sn.key, Name: d.name, Range: d.value, Kind: kind, To: b.resolve(".", d.name, d.value, d.line)}, d.line, field, kind == tree.KindProd)
	}
	for _, peer := range peers {
		if !slices.ContainsFunc(deps, func(d pnpmDep) bool { return d.name == peer.name }) {
			b.edge(tree.Edge{From: sn.key, Name: peer.name, Range: peer.value, Kind: tree.KindPeer}, peer.line, nil, false)
		}
	}
}

// markPnpm sets, of t's packages, Dev (only devDependencies bring it in)
// and Alias (the first name, in sorting order, that an edge gives it other
// than its package's), which
// pnpm 9's lockfile does not say of an instance.
func markPnpm(t *tree.Tree, ids map[string]int) {
	out := map[string][]int{}
	for i, e := range t.Edges {
		if e.To != "" {
			out[e.From] = append(out[e.From], i)
		}
	}
	reached := map[string]bool{}
	prod := map[string]bool{}
	walk := func(from string, inProd bool) {
		queue := []string{from}
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			for _, i := range out[id] {
				e := t.Edges[i]
				if inProd && e.Kind == tree.KindDev {
					continue
				}
				seen := reached
				if inProd {
					seen = prod
				}
				if !seen[e.To] {
					seen[e.To] = true
					queue = append(queue, e.To)
				}
			}
		}
	}
	walk(tree.Root, true)
	walk(tree.Root, false)
	for _, e := range t.Edges {
		if e.To == "" {
			continue
		}
		p := &t.Packages[ids[e.To]]
		if e.Name != p.Name && (p.Alias == "" || e.Name < p.Alias) && p.Source != tree.SourceLink { // the first of its aliases: the same every read
			p.Alias = e.Name
		}
	}
	for i := range t.Packages {
		p := &t.Packages[i]
		p.Dev = reached[p.ID] && !prod[p.ID]
	}
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}
