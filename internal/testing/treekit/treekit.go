// Package treekit writes an installed tree for tests the way the product
// does: a tree.Tree built from a compact description, stored by the
// lockfile sync's writer (store.Tx.TreeWrite), which computes each
// instance's paths, components and dev-only flag from the edges; and its
// findings stored by the evaluation's writer (store.Tx.TreeFindingsWrite).
// A test that writes the tables by hand could agree with a schema the
// product never writes.
package treekit

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/tree"
)

// Tree builds an installed tree from lines, one instance each:
//
//	"node_modules/express 4.17.1"
//	"node_modules/send 0.17.1 by=express"
//	"node_modules/send/node_modules/debug 2.6.9"
//	"node_modules/mocha 10.0.0 dev"
//
// A line is the instance's ID (npm's path: its name is what follows the
// last "node_modules/"; or a workspace's directory, named by name=), its
// version, then flags:
//   - dev, optional, peer: the lockfile's flags; a dependency of the site
//     flagged dev is declared in its devDependencies, one flagged
//     optional or peer as such;
//   - script: it has an install script;
//   - git, tarball, file, link: its source (registry otherwise);
//   - name=REAL: the ID's name is an alias of the package REAL (a
//     workspace's: its package's name);
//   - by=A,B: its dependents (an ID, or a name at the top, "." for the
//     site), instead of the one it sits under (the site at the top).
//
// Each dependent declares it "^VERSION", under the ID's name.
func Tree(tb testing.TB, lines ...string) *tree.Tree {
	tb.Helper()
	t := &tree.Tree{Packages: []tree.Package{}, Edges: []tree.Edge{}}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 2 {
			tb.Fatalf("treekit: %q: want an ID and a version", line)
		}
		id, version := f[0], f[1]
		dir, parent := id, tree.Root // a workspace's directory, at the site
		if i := strings.LastIndex(id, "node_modules/"); i >= 0 {
			dir, parent = id[i+len("node_modules/"):], strings.TrimSuffix(id[:i], "/")
		}
		p := tree.Package{ID: id, Name: dir, Version: version, Source: tree.SourceRegistry, Line: len(t.Packages) + 1}
		by := []string{parent}
		for _, flag := range f[2:] {
			switch k, v, _ := strings.Cut(flag, "="); k {
			case "dev":
				p.Dev = true
			case "optional":
				p.Optional = true
			case "peer":
				p.Peer = true
			case "script":
				p.InstallScript = true
			case "git", "tarball", "file", "link":
				p.Source = tree.Source(k)
			case "name":
				p.Name = v
				if strings.Contains(id, "node_modules/") {
					p.Alias = dir
				} else {
					dir = v // a workspace is declared under its package's name
				}
			case "by":
				by = by[:0]
				for _, d := range strings.Split(v, ",") {
					switch {
					case d == ".":
						d = tree.Root
					case !strings.HasPrefix(d, "node_modules/"):
						d = "node_modules/" + d
					}
					by = append(by, d)
				}
			default:
				tb.Fatalf("treekit: %q: unknown flag %q", line, flag)
			}
		}
		if p.Source == tree.SourceRegistry {
			p.Resolved = "http://127.0.0.1/" + p.Name + "/-/" + path.Base(p.Name) + "-" + version + ".tgz"
			sum := sha256.Sum256([]byte(p.Name + "@" + version))
			p.Integrity = fmt.Sprintf("sha256-%x", sum[:8])
		}
		t.Packages = append(t.Packages, p)
		for _, from := range by {
			kind := tree.KindProd
			switch {
			case from == tree.Root && p.Dev:
				kind = tree.KindDev
			case p.Optional:
				kind = tree.KindOptional
			case p.Peer:
				kind = tree.KindPeer
			}
			rng := "^" + version
			if p.Alias != "" { // npm's range of an alias, "x": "npm:real@^1"
				rng = fmt.Sprintf("npm:%s@^%s", p.Name, version)
			}
			t.Edges = append(t.Edges, tree.Edge{From: from, Name: dir, Range: rng, Kind: kind, To: id})
		}
	}
	t.Sort()
	return t
}

// Write stores t as the local site's tree (store.LocalSite), as WriteSite.
func Write(tb testing.TB, st *store.Store, file string, t *tree.Tree, components map[string]string) store.TreeWritten {
	tb.Helper()
	return WriteSite(tb, st, store.LocalSite, file, t, components)
}

// WriteSite stores t as site's tree read from the lockfile at file, as the
// lockfile sync and a push do (store.Tx.TreeWrite, from the state's epoch
// it reads first): components maps a direct dependency of the site (by
// the name it is declared under) to the component it is. The tests that
// call it hold no lease, and race no other writer of the tree.
func WriteSite(tb testing.TB, st *store.Store, site int64, file string, t *tree.Tree, components map[string]string) store.TreeWritten {
	tb.Helper()
	ctx := context.Background()
	state, _, err := st.TreeState(ctx, site)
	if err != nil {
		tb.Fatal(err)
	}
	var raw strings.Builder
	for _, p := range t.Packages {
		fmt.Fprintf(&raw, "%s %s\n", p.ID, p.Version)
	}
	w := &store.TreeWrite{Site: site, Path: file, FileHash: sha256.Sum256([]byte(raw.String())), Tree: t, Components: components,
		Epoch: state.Epoch}
	var out store.TreeWritten
	if err := st.WithTx(ctx, func(tx *store.Tx) error {
		out, err = tx.TreeWrite(ctx, w)
		return err
	}); err != nil {
		tb.Fatalf("treekit: write the tree: %v", err)
	}
	return out
}

// Finding is a as the evaluation stores it for name@version
// (store.TreeFindingOf; withdrawn: a withdrawn advisory, kept apart).
func Finding(tb testing.TB, name, version string, a release.AdvisoryMatch, withdrawn bool) store.TreeFinding {
	tb.Helper()
	f, err := store.TreeFindingOf(name, version, a, osv.AdvisoryKeys(a.ID, a.Aliases), withdrawn)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// WriteFindings stores one evaluation of every site's stored tree, as the
// evaluation's writer does (store.Tx.TreeFindingsWrite, every version
// matched): the findings replace every earlier one. An exposure is the
// finding of a version a site no longer has: each of exposures is stored
// as its version's finding (unless findings has it), from which the
// writer finds the look-back; the exposures new are returned.
func WriteFindings(tb testing.TB, st *store.Store, findings []store.TreeFinding, exposures []store.TreeExposure) []store.TreeExposure {
	tb.Helper()
	ctx := context.Background()
	due, ok, err := st.TreeEvaluationDue(ctx)
	if err != nil || !ok {
		tb.Fatalf("treekit: findings of no tree stored (%v)", err)
	}
	m, err := st.TreeToMatch(ctx, true)
	if err != nil {
		tb.Fatal(err)
	}
	all := append([]store.TreeFinding{}, findings...)
	for _, x := range exposures {
		if slices.ContainsFunc(all, func(f store.TreeFinding) bool {
			return f.Name == x.Name && f.Version == x.Version && f.AdvisoryID == x.AdvisoryID
		}) {
			continue
		}
		all = append(all, store.TreeFinding{Name: x.Name, Version: x.Version, AdvisoryID: x.AdvisoryID, Advisory: x.Advisory,
			Keys: osv.AdvisoryKeys(x.AdvisoryID, nil), Malicious: x.Malicious, KnownExploited: x.KnownExploited})
	}
	var added []store.TreeExposure
	if err := st.WithTx(ctx, func(tx *store.Tx) error {
		added, err = tx.TreeFindingsWrite(ctx, m, all, due.IntelVersion, 1)
		return err
	}); err != nil {
		tb.Fatalf("treekit: write the findings: %v", err)
	}
	return added
}

// WriteFixes stores fixes of the local site's tree, as WriteSiteFixes.
func WriteFixes(tb testing.TB, st *store.Store, fixes ...store.TreeFix) {
	tb.Helper()
	WriteSiteFixes(tb, st, store.LocalSite, fixes...)
}

// WriteSiteFixes stores fixes of site's tree (remedy.Fix as JSON, by
// package instance and advisory) as a check's fix step does
// (store.Tx.TreeFixesSave): they replace every earlier one of the site.
func WriteSiteFixes(tb testing.TB, st *store.Store, site int64, fixes ...store.TreeFix) {
	tb.Helper()
	ctx := context.Background()
	if err := st.WithTx(ctx, func(tx *store.Tx) error {
		_, err := tx.TreeFixesSave(ctx, site, nil, fixes, 1)
		return err
	}); err != nil {
		tb.Fatalf("treekit: write the fixes: %v", err)
	}
}
