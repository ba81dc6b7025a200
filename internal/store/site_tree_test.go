package store_test

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// Each site's tree is its own: two sites installing the same version see
// the one finding of it on their own instances; the local site, which
// installs neither, sees none. A site's fixes decided on the tree read at
// one hash are not written once a push moved that site's tree: fixes of
// the old inventory are never stored beside the new one.
func TestSiteTreesShareFindingsAndFenceFixes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	site := func(name string) store.Site {
		h := sha256.Sum256([]byte(name))
		s, err := b.st.SiteCreate(ctx, name, "", h[:])
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	shop, blog := site("shop"), site("blog")
	treekit.WriteSite(t, b.st, shop.ID, "package-lock.json", treekit.Tree(t, "node_modules/a 1.0.0"), nil)
	treekit.WriteSite(t, b.st, blog.ID, "pnpm-lock.yaml", treekit.Tree(t, "node_modules/x 2.0.0", "node_modules/a 1.0.0 by=x"), nil)
	treekit.WriteFindings(t, b.st, []store.TreeFinding{treekit.Finding(t, "a", "1.0.0",
		release.AdvisoryMatch{Advisory: release.Advisory{ID: "GHSA-aaaa", Severity: "high", Affected: "<1.0.1", FixedIn: "1.0.1"}}, false)}, nil)
	for _, s := range []store.Site{shop, blog} {
		rows, err := b.st.TreeFindings(ctx, s.ID, "separate")
		if err != nil || len(rows) != 1 || rows[0].Instances != 1 {
			t.Errorf("%s's findings: %+v, %v; want a@1.0.0's, on its one instance", s.Name, rows, err)
		}
	}
	if rows, err := b.st.TreeFindings(ctx, store.LocalSite, "separate"); err != nil || len(rows) != 0 {
		t.Errorf("the local site's findings: %+v, %v; want none", rows, err)
	}

	in, err := b.st.TreeFixInput(ctx, shop.ID)
	if err != nil || len(in.Findings) != 1 {
		t.Fatalf("shop's fix input: %+v, %v", in, err)
	}
	// A push moves shop's a to the fixed version (the same instance id).
	treekit.WriteSite(t, b.st, shop.ID, "package-lock.json", treekit.Tree(t, "node_modules/a 1.0.1"), nil)
	fix := store.TreeFix{PackageID: "node_modules/a", AdvisoryID: "GHSA-aaaa", Fix: []byte(`{"kind":"in_range"}`)}
	var wrote bool
	if err := b.st.WithTx(ctx, func(tx *store.Tx) error {
		wrote, err = tx.TreeFixesSave(ctx, shop.ID, in.TreeHash, []store.TreeFix{fix}, 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if fixes, err := b.st.TreeFixes(ctx, shop.ID); wrote || err != nil || len(fixes) != 0 {
		t.Errorf("fixes decided on shop's old tree: wrote %v, stored %+v (%v); want none", wrote, fixes, err)
	}
	treekit.WriteSiteFixes(t, b.st, blog.ID, fix)
	if fixes, err := b.st.TreeFixes(ctx, blog.ID); err != nil || len(fixes) != 1 {
		t.Errorf("blog's fixes: %+v, %v", fixes, err)
	}
}
