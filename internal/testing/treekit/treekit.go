// Package treekit writes an installed tree and its findings for tests
// through the writers the product uses: the lockfile sync's
// store.Tx.TreeWrite (paths, dev-only reach and the components that bring
// each package in computed as a sync computes them) and the evaluation's
// store.Tx.TreeFindingsWrite. A test states the tree and its advisories;
// nothing is inserted into the tree's tables by hand.
package treekit

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/tree"
)

// Dep is one installed package: at node_modules/NAME under its parent
// (Parent "" is the site), brought in by the parent as a dependency of
// Kind (tree.KindProd when empty).
type Dep struct {
	Name, Version string
	Parent        string // the parent's ID ("" the site)
	Kind          tree.Kind
	Dev           bool // the lockfile's dev flag
}

// ID is where d sits: "node_modules/a/node_modules/b".
func (d Dep) ID() string {
	if d.Parent == "" {
		return "node_modules/" + d.Name
	}
	return d.Parent + "/node_modules/" + d.Name
}

// Tree is the tree of deps, sorted.
func Tree(deps ...Dep) *tree.Tree {
	t := &tree.Tree{}
	for _, d := range deps {
		t.Packages = append(t.Packages, tree.Package{ID: d.ID(), Name: d.Name, Version: d.Version, Dev: d.Dev,
			Source: tree.SourceRegistry, Integrity: "sha512-" + d.Name + d.Version})
		kind := d.Kind
		if kind == "" {
			kind = tree.KindProd
		}
		from := tree.Root
		if d.Parent != "" {
			from = d.Parent
		}
		t.Edges = append(t.Edges, tree.Edge{From: from, Name: d.Name, Range: "^" + d.Version, Kind: kind, To: d.ID()})
	}
	t.Sort()
	return t
}

// Write stores tr as the site's lockfile tree through store.Tx.TreeWrite,
// as a lockfile sync does; components maps a direct dependency of the site
// to the code of the component it is.
func Write(t testing.TB, st *store.Store, tr *tree.Tree, components map[string]string) {
	t.Helper()
	ctx := context.Background()
	state, _, err := st.TreeState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	w := &store.TreeWrite{Path: "/site/package-lock.json", FileHash: sha256.Sum256(body), Tree: tr, Reach: tr.Reach(),
		Components: components, Epoch: state.Epoch}
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	if err := st.WithTx(ctx, func(tx *store.Tx) error {
		_, err := tx.TreeWrite(ctx, w)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// Advisory is one advisory of a package version as a test states it.
type Advisory struct {
	Name, Version, ID         string
	Malicious, KnownExploited bool
	// FixedIn "" is no fixed version.
	FixedIn  string
	Severity string
}

// Finding is a as the evaluation writes it (store.TreeFinding).
func (a Advisory) Finding() store.TreeFinding {
	adv := map[string]any{"id": a.ID, "severity": a.Severity, "affected": "*", "malicious": a.Malicious,
		"known_exploited": a.KnownExploited}
	f := store.TreeFinding{Name: a.Name, Version: a.Version, AdvisoryID: a.ID, Keys: []string{strings.ToUpper(a.ID)},
		Malicious: a.Malicious, KnownExploited: a.KnownExploited, Severity: a.Severity}
	if a.FixedIn != "" {
		adv["fixed_in"] = a.FixedIn
		f.FixedIn = &a.FixedIn
	} else {
		adv["no_fix"] = true
	}
	f.Advisory, _ = json.Marshal(adv)
	return f
}

// Evaluate writes one evaluation of the stored tree through
// store.Tx.TreeFindingsWrite: the findings of advs on versions installed
// now, and the look-back's of those the site no longer has (one exposure
// per past interval of the version).
func Evaluate(t testing.TB, st *store.Store, advs ...Advisory) {
	t.Helper()
	ctx := context.Background()
	state, ok, err := st.TreeState(ctx)
	if err != nil || !ok {
		t.Fatalf("no tree to evaluate (%v)", err)
	}
	past, err := st.TreePastVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	installed, err := st.TreeInstalledVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := map[store.NameVersion]bool{}
	for _, v := range installed {
		now[v] = true
	}
	var findings []store.TreeFinding
	var exposures []store.TreeExposure
	for _, a := range advs {
		f := a.Finding()
		if now[store.NameVersion{Name: a.Name, Version: a.Version}] {
			findings = append(findings, f)
			continue
		}
		for _, p := range past {
			if p.Name == a.Name && p.Version == a.Version {
				exposures = append(exposures, store.TreeExposure{IntervalID: p.IntervalID, Name: a.Name, Version: a.Version,
					AdvisoryID: a.ID, Advisory: f.Advisory, Malicious: a.Malicious, KnownExploited: a.KnownExploited,
					InstalledAt: p.InstalledAt, RemovedAt: p.RemovedAt})
			}
		}
	}
	if err := st.WithTx(ctx, func(tx *store.Tx) error {
		_, err := tx.TreeFindingsWrite(ctx, findings, exposures, state.TreeHash, 1, 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
