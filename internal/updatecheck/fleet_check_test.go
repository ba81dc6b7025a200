package updatecheck

import (
	"context"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// siteOffer is what the read model offers site's component code now: its
// installed version, whether it is evaluated from the current inputs,
// and the update offered ("" none).
func (b *bundle) siteOffer(site int64, code string) (installed string, evaluated bool, update string) {
	b.t.Helper()
	b.db.QueryRow(b.t, `SELECT installed_version, evaluated, coalesce(update_version, '')
	                    FROM component_state WHERE site_id = $1 AND code = $2`, site, code).Scan(&installed, &evaluated, &update)
	return
}

// Two sites push lockfiles with the same direct dependency at different
// versions (a real Verdaccio, counted): a check fetches its document once
// for both and writes each site's own offer; a skip on one site hides
// nothing of the other's; a third site installing nothing new is
// evaluated at its push from the stored document, with no fetch, and the
// next check fetches the document once again for the three.
func TestSitesShareOneFetchAndKeepTheirOffers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, true)
	ctx := context.Background()
	shop, blog := b.addSite("shop"), b.addSite("blog")
	b.push(shop, "package-lock.json", fr.lockfile) // xpress 4.17.1, sock 4.0.0
	if _, err := b.checker.Push(ctx, blog, "package-lock.json", pushLock("xpress@4.20.0")); err != nil {
		t.Fatal(err)
	}

	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}
	if a := fr.answers("xpress"); !slices.Equal(a, []int{http.StatusOK}) {
		t.Errorf("xpress answered %v for two sites' components, want one 200", a)
	}
	for _, c := range []struct {
		site              store.Site
		installed, update string
	}{{shop, "4.17.1", "4.21.0"}, {blog, "4.20.0", "4.21.0"}} {
		installed, evaluated, update := b.siteOffer(c.site.ID, "xpress")
		if installed != c.installed || !evaluated || update != c.update {
			t.Errorf("%s's xpress: installed %s, evaluated %v, offered %q; want %s offered %s", c.site.Name, installed, evaluated,
				update, c.installed, c.update)
		}
	}
	if _, evaluated, update := b.siteOffer(shop.ID, "sock"); !evaluated || update != "4.1.0" {
		t.Errorf("shop's sock: evaluated %v, offered %q, want 4.1.0", evaluated, update)
	}

	// shop skips 4.21.0 (and so every plain release at or below it): it
	// is offered nothing; blog is still offered 4.21.0, the skip shop's
	// own.
	if _, err := NewSkips(b.checker).Skip(ctx, SkipRequest{Site: shop.ID, Code: "xpress", Version: "4.21.0", Reason: "breaks our theme",
		By: "ops@example.org"}); err != nil {
		t.Fatal(err)
	}
	if _, evaluated, update := b.siteOffer(shop.ID, "xpress"); !evaluated || update != "" {
		t.Errorf("shop's xpress after its skip of 4.21.0: evaluated %v, offered %q, want nothing", evaluated, update)
	}
	if _, evaluated, update := b.siteOffer(blog.ID, "xpress"); !evaluated || update != "4.21.0" {
		t.Errorf("blog's xpress after shop's skip: evaluated %v, offered %q, want 4.21.0", evaluated, update)
	}
	if _, ok, err := b.store.SkipOf(ctx, blog.ID, "xpress"); err != nil || ok {
		t.Errorf("blog's skip of xpress: %v, %v, want none", ok, err)
	}

	// A third site that installs nothing new costs no fetch: evaluated at
	// its push from the document the check stored.
	news := b.addSite("news")
	rep, err := b.checker.Push(ctx, news, "package-lock.json", pushLock("xpress@4.19.2"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Components.Added != 1 || rep.Components.Reevaluated != 1 {
		t.Errorf("news's push: components %+v, want 1 added and evaluated", rep.Components)
	}
	if _, evaluated, update := b.siteOffer(news.ID, "xpress"); !evaluated || update != "4.21.0" {
		t.Errorf("news's xpress after its push: evaluated %v, offered %q, want 4.21.0", evaluated, update)
	}
	if a := fr.answers("xpress"); len(a) != 1 {
		t.Errorf("xpress answered %v after a push of a version the fleet has read, want no request", a)
	}
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("second check: %+v", res)
	}
	if a := fr.answers("xpress"); len(a) != 2 {
		t.Errorf("xpress answered %v after a second check of three sites, want one more", a)
	}
	if _, evaluated, update := b.siteOffer(shop.ID, "xpress"); !evaluated || update != "" {
		t.Errorf("shop's xpress after the second check: evaluated %v, offered %q, want nothing (its skip stands)", evaluated, update)
	}
	if _, evaluated, update := b.siteOffer(blog.ID, "xpress"); !evaluated || update != "4.21.0" {
		t.Errorf("blog's xpress after the second check: evaluated %v, offered %q, want 4.21.0", evaluated, update)
	}
	// The local site has no component: nothing of the fleet's is its.
	var local int
	b.db.QueryRow(t, `SELECT count(*) FROM component_results WHERE site_id = $1`, store.LocalSite).Scan(&local)
	if local != 0 {
		t.Errorf("%d results of the local site, which installs nothing", local)
	}
}

// Pushes racing checks: a site's pushes switch its xpress between 4.17.1
// (offered 4.21.0) and 4.21.0 (offered nothing) under the lease's lock
// while checks evaluate every site's components and write their results,
// fenced. Whatever the interleaving, no result is ever written that was
// evaluated from the other inventory than the one it is written beside
// (every write is logged, with the component's version at that moment),
// and the last check leaves the component evaluated at its installed
// version.
func TestPushesRacingChecksNeverMixInventories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, true)
	shop := b.addSite("shop")
	lock, err := os.ReadFile(fr.lockfile)
	if err != nil {
		t.Fatal(err)
	}
	latest := []byte(replaceVersion(t, string(lock), "xpress", "4.17.1", "4.21.0"))
	b.db.MustExec(t, `CREATE TABLE result_log (installed text, offered text)`)
	b.db.MustExec(t, `CREATE FUNCTION log_result() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO result_log SELECT c.installed_version, NEW.update_version
			FROM components c WHERE c.site_id = NEW.site_id AND c.code = NEW.code;
			RETURN NULL;
		END $$`)
	b.db.MustExec(t, `CREATE TRIGGER log_result AFTER INSERT OR UPDATE ON component_results
		FOR EACH ROW WHEN (NEW.code = 'xpress') EXECUTE FUNCTION log_result()`)
	ctx := context.Background()
	b.push(shop, "package-lock.json", fr.lockfile)
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("first check: %+v", res)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 12 {
			body := latest
			if i%2 == 1 {
				body = lock
			}
			if _, err := b.checker.Push(ctx, shop, "package-lock.json", body); err != nil {
				t.Errorf("push %d: %v", i, err)
				return
			}
		}
	}()
	for range 4 {
		if res := b.run(lease.Operator); !res.Status.RanToEnd() && res.Status != readmodel.CheckBusy {
			t.Errorf("check: %+v", res)
		}
	}
	wg.Wait()
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("last check: %+v", res)
	}
	var writes, mixed int
	b.db.QueryRow(t, `SELECT count(*), count(*) FILTER (WHERE (installed = '4.21.0' AND offered IS NOT NULL)
	                                                     OR (installed = '4.17.1' AND offered IS DISTINCT FROM '4.21.0'))
	                  FROM result_log`).Scan(&writes, &mixed)
	t.Logf("%d results of xpress written", writes)
	if mixed != 0 {
		t.Errorf("%d of %d results of xpress were written beside the other inventory than the one they were evaluated from", mixed, writes)
	}
	// The last push was lock (i = 11): xpress 4.17.1.
	if installed, evaluated, update := b.siteOffer(shop.ID, "xpress"); installed != "4.17.1" || !evaluated || update != "4.21.0" {
		t.Errorf("shop's xpress after the race: installed %s, evaluated %v, offered %q; want 4.17.1 offered 4.21.0",
			installed, evaluated, update)
	}
}
