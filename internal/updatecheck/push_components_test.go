package updatecheck

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// pushLock is a package-lock.json whose site depends on each of deps
// ("name@version"), installed at the top level.
func pushLock(deps ...string) []byte {
	var root, pkgs []string
	for _, d := range deps {
		name, version, _ := strings.Cut(d, "@")
		root = append(root, fmt.Sprintf("%q:%q", name, "^"+version))
		pkgs = append(pkgs, fmt.Sprintf(`"node_modules/%s":{"version":%q,"resolved":"http://127.0.0.1/%s/-/%s-%s.tgz"}`,
			name, version, name, name, version))
	}
	return []byte(`{"name":"site","lockfileVersion":3,"requires":true,"packages":{"":{"name":"site","dependencies":{` +
		strings.Join(root, ",") + `}},` + strings.Join(pkgs, ",") + `}}`)
}

// componentsOf are site's components as "code name@version source".
func (b *bundle) componentsOf(site int64) []string {
	b.t.Helper()
	comps, err := b.store.Components(context.Background(), site)
	if err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, c := range comps {
		out = append(out, c.Code+" "+c.Name+"@"+c.InstalledVersion+" "+c.SourceURL)
	}
	return out
}

// A registered site's push is that site's lockfile sync: its direct
// dependencies become its components, as the local site's lockfile sync
// makes them (each its npm package's, the default policy), in the push's
// transaction and beside its tree, which names them; a later push
// changes and removes them; the local site's are not touched; removing
// the site removes them.
func TestAPushWritesTheSitesComponents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.addSite("shop")

	rep, err := b.checker.Push(ctx, shop, "package-lock.json", pushLock("left-pad@1.3.0", "is-odd@3.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Components; c.Components != 2 || c.Added != 2 || c.Changed != 0 || c.Removed != 0 {
		t.Errorf("first push's components: %+v, want 2 added", c)
	}
	want := []string{"is-odd is-odd@3.0.0 npm:is-odd", "left-pad left-pad@1.3.0 npm:left-pad"}
	if got := b.componentsOf(shop.ID); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shop's components:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := b.componentsOf(store.LocalSite); len(got) != 0 {
		t.Errorf("the local site's components after shop's push: %v, want none", got)
	}
	var policies, named int
	b.db.QueryRow(t, `SELECT count(*) FILTER (WHERE policy IS NOT NULL) FROM components WHERE site_id = $1`, shop.ID).Scan(&policies)
	b.db.QueryRow(t, `SELECT count(*) FROM tree_packages WHERE site_id = $1 AND components = ARRAY[name]`, shop.ID).Scan(&named)
	if policies != 0 || named != 2 {
		t.Errorf("%d components with a policy (want 0: the default), %d instances naming their component (want 2)", policies, named)
	}

	rep, err = b.checker.Push(ctx, shop, "package-lock.json", pushLock("left-pad@1.3.1"))
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Components; c.Components != 1 || c.Added != 0 || c.Changed != 1 || c.Removed != 1 {
		t.Errorf("second push's components: %+v, want 1 changed, 1 removed", c)
	}
	if got := b.componentsOf(shop.ID); len(got) != 1 || got[0] != "left-pad left-pad@1.3.1 npm:left-pad" {
		t.Errorf("shop's components after the second push: %v", got)
	}

	if _, err := b.store.SiteDelete(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	var left int
	b.db.QueryRow(t, `SELECT count(*) FROM components WHERE site_id = $1`, shop.ID).Scan(&left)
	if left != 0 {
		t.Errorf("%d components of the removed site left", left)
	}
}

// A push refused by its tree's write (another push of the site wrote
// since its state was read) writes no component either: the components
// are written in the tree's transaction.
func TestAPushsComponentsAreWrittenWithItsTree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.addSite("shop")
	if _, err := b.checker.Push(ctx, shop, "package-lock.json", pushLock("left-pad@1.3.0")); err != nil {
		t.Fatal(err)
	}
	// The tree's write fails in the push's transaction (the site's tree
	// state is locked out by a check constraint the test adds): the
	// components of the refused push must not stay.
	b.db.MustExec(t, `ALTER TABLE tree_state ADD CONSTRAINT no_more CHECK (packages < 2) NOT VALID`)
	if _, err := b.checker.Push(ctx, shop, "package-lock.json", pushLock("left-pad@1.3.1", "is-odd@3.0.0")); err == nil {
		t.Fatal("a push whose tree could not be written was accepted")
	}
	if got := b.componentsOf(shop.ID); len(got) != 1 || got[0] != "left-pad left-pad@1.3.0 npm:left-pad" {
		t.Errorf("shop's components after a refused push: %v, want the first push's", got)
	}
}
