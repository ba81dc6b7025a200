// Package lockgen generates a site's installed tree of any size, as a
// tree.Tree and as the package-lock.json (v3) that installs it, for the
// bench and the tests of the tree's storage: hoisted packages, nested
// copies at another version, three dependencies each, a few direct
// dependencies of the site, some of them dev-only, some packages with an
// install script. The same n gives the same tree.
package lockgen

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/upcheck/upcheck/internal/tree"
)

// Heads is how many direct dependencies the site declares; the last
// DevHeads of them are devDependencies.
const (
	Heads    = 30
	DevHeads = 5
	// Shared is how many popular packages every head brings in.
	Shared = 20
)

// Name is the name of the i-th package.
func Name(i int) string { return fmt.Sprintf("pkg-%04d", i) }

// Tree is a tree of n package instances (n ≥ Heads+10) whose tarballs
// registry serves ("http://127.0.0.1:4873/", say): n-n/10 hoisted at
// version 1.0.<i%7>, and n/10 nested copies at 2.0.0 under the package
// that needs that version. Each hoisted package depends on three or four
// others;
// edges resolve as npm resolves them (the nearest node_modules up the
// path). The lockfile's dev flags follow Reach.
func Tree(n int, registry string) *tree.Tree {
	hoisted := n - n/10
	t := &tree.Tree{}
	pkg := func(id, name, version string) tree.Package {
		sum := sha512.Sum512([]byte(name + "@" + version))
		return tree.Package{ID: id, Name: name, Version: version, Source: tree.SourceRegistry,
			Resolved:  registry + name + "/-/" + name + "-" + version + ".tgz",
			Integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:])}
	}
	for i := range hoisted {
		p := pkg("node_modules/"+Name(i), Name(i), fmt.Sprintf("1.0.%d", i%7))
		p.InstallScript = i%50 == 7
		t.Packages = append(t.Packages, p)
	}
	for h := range Heads {
		kind := tree.KindProd
		if h >= Heads-DevHeads {
			kind = tree.KindDev
		}
		t.Edges = append(t.Edges, tree.Edge{From: tree.Root, Name: Name(h), Range: "^1.0.0", Kind: kind, To: "node_modules/" + Name(h)})
	}
	// Each direct dependency h heads a cluster of its own (the packages
	// i ≡ h mod Heads), whose packages depend on three others of it; every
	// third package also depends on one of a pool of Shared popular
	// packages, reached from every head. The first dependency of every
	// ninth package is nested under it at 2.0.0 while nested copies are
	// left. About 3n edges in all.
	own := (hoisted - Shared) / Heads * Heads
	nested := n - hoisted
	for i := range hoisted {
		from := "node_modules/" + Name(i)
		var deps []int
		switch {
		case i >= hoisted-Shared:
			if x := i + 1; x < hoisted {
				deps = []int{x}
			}
		case i < own:
			deps = []int{(i + Heads) % own, (i + 3*Heads) % own, (i + 7*Heads) % own}
		}
		if i < hoisted-Shared && i%3 == 0 {
			deps = append(deps, hoisted-Shared+(i/3)%Shared)
		}
		seen := map[int]bool{i: true}
		for k, j := range deps {
			if seen[j] {
				continue
			}
			seen[j] = true
			to, rng := "node_modules/"+Name(j), "^1.0.0"
			if k == 0 && i%9 == 0 && nested > 0 {
				nested--
				to, rng = from+"/node_modules/"+Name(j), "2.0.0"
				t.Packages = append(t.Packages, pkg(to, Name(j), "2.0.0"))
			}
			t.Edges = append(t.Edges, tree.Edge{From: from, Name: Name(j), Range: rng, Kind: tree.KindProd, To: to})
		}
	}
	for ; nested > 0; nested-- { // entries nothing depends on: the lockfile may hold some
		id := fmt.Sprintf("node_modules/%s/node_modules/stray-%d", Name(Heads), nested)
		t.Packages = append(t.Packages, pkg(id, fmt.Sprintf("stray-%d", nested), "1.0.0"))
	}
	t.Sort()
	reach := t.Reach()
	for i := range t.Packages {
		if r := reach[t.Packages[i].ID]; r != nil {
			t.Packages[i].Dev = r.DevOnly
		}
	}
	return t
}

// Bump moves the first k hoisted packages after the site's direct
// dependencies to another version (and the ranges that name them): a
// re-sync that changes k packages. It returns the IDs of those it moved.
func Bump(t *tree.Tree, k int) map[string]bool {
	bumped := map[string]bool{}
	for i := range t.Packages {
		p := &t.Packages[i]
		if len(bumped) == k {
			break
		}
		var idx int
		if _, err := fmt.Sscanf(p.ID, "node_modules/pkg-%04d", &idx); err != nil || idx < Heads || p.ID != "node_modules/"+p.Name {
			continue
		}
		p.Version = "1.1.0"
		sum := sha512.Sum512([]byte(p.Name + "@" + p.Version))
		p.Integrity = "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
		p.Resolved = p.Resolved[:len(p.Resolved)-len("1.0.0.tgz")] + "1.1.0.tgz"
		bumped[p.ID] = true
	}
	for i := range t.Edges {
		if bumped[t.Edges[i].To] {
			t.Edges[i].Range = "^1.1.0"
		}
	}
	return bumped
}

// lockPackage is one entry of package-lock.json's "packages".
type lockPackage struct {
	Name             string            `json:"name,omitempty"`
	Version          string            `json:"version,omitempty"`
	Resolved         string            `json:"resolved,omitempty"`
	Integrity        string            `json:"integrity,omitempty"`
	Dev              bool              `json:"dev,omitempty"`
	HasInstallScript bool              `json:"hasInstallScript,omitempty"`
	Dependencies     map[string]string `json:"dependencies,omitempty"`
	DevDependencies  map[string]string `json:"devDependencies,omitempty"`
}

// PackageLock is the package-lock.json (lockfileVersion 3) of t, a tree
// of Tree's shape, for the site named site.
func PackageLock(t *tree.Tree, site string) ([]byte, error) {
	pkgs := map[string]*lockPackage{"": {Name: site, Version: "1.0.0"}}
	for _, p := range t.Packages {
		pkgs[p.ID] = &lockPackage{Version: p.Version, Resolved: p.Resolved, Integrity: p.Integrity, Dev: p.Dev,
			HasInstallScript: p.InstallScript}
	}
	for _, e := range t.Edges {
		lp := pkgs[e.From]
		if lp == nil {
			return nil, fmt.Errorf("lockgen: an edge from %q, which is no package", e.From)
		}
		deps := &lp.Dependencies
		if e.Kind == tree.KindDev {
			deps = &lp.DevDependencies
		}
		if *deps == nil {
			*deps = map[string]string{}
		}
		(*deps)[e.Name] = e.Range
	}
	return json.MarshalIndent(struct {
		Name            string                  `json:"name"`
		Version         string                  `json:"version"`
		LockfileVersion int                     `json:"lockfileVersion"`
		Requires        bool                    `json:"requires"`
		Packages        map[string]*lockPackage `json:"packages"`
	}{site, "1.0.0", 3, true, pkgs}, "", "  ")
}
