package updatecheck

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
)

// addSite registers a site as site add does (its token's hash only).
func (b *bundle) addSite(name string) store.Site {
	b.t.Helper()
	hash := sha256.Sum256([]byte("ups_" + name))
	s, err := b.store.SiteCreate(context.Background(), name, "", hash[:])
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// push pushes the lockfile at file as site's, named name.
func (b *bundle) push(site store.Site, name, file string) PushReport {
	b.t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		b.t.Fatal(err)
	}
	rep, err := b.checker.Push(context.Background(), site, name, body)
	if err != nil {
		b.t.Fatalf("push of %s: %v", site.Name, err)
	}
	return rep
}

// Two sites push lockfiles of the same packages, one written by the real
// npm, the other by the real pnpm: the second push's evaluation matches
// no version (each was matched for the first), the check that follows
// (the feeds moved: every version again) matches each distinct version
// once, and its fix step fetches each package's document once for both
// sites (counted at the registry), deciding each site's fixes in its
// client's words.
func TestTwoSitesPushTheSamePackagesReadOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, true)
	fs := feedserver.New(t)
	fs.SetRecords(records(osvgen.Record("GHSA-p2r0-0000-0001", "p2r", osvgen.KindVuln, "", "0.1.10")))
	b.checker.UseFeeds(NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	shop, blog := b.addSite("shop"), b.addSite("blog")

	first := b.push(shop, "package-lock.json", fr.lockfile)
	if !first.Evaluated || first.Packages != 7 {
		t.Fatalf("shop's push: %+v, want 7 packages evaluated", first)
	}
	matched := b.checker.matched.Load()
	if matched != 7 {
		t.Fatalf("shop's push matched %d versions, want its 7", matched)
	}
	second := b.push(blog, "pnpm-lock.yaml", fr.pnpmLock)
	if second.Packages != 7 {
		t.Fatalf("blog's push: %+v", second)
	}
	if got := b.checker.matched.Load() - matched; got != 0 {
		t.Errorf("blog's push of versions shop has matched %d versions, want none", got)
	}

	matched = b.checker.matched.Load()
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}
	if got := b.checker.matched.Load() - matched; got != 7 {
		t.Errorf("the check matched %d versions for two sites of the same 7, want 7", got)
	}
	for _, name := range []string{"xpress", "p2r"} {
		if a := fr.answers(name); !slices.Equal(a, []int{http.StatusOK}) {
			t.Errorf("%s answered %v for two sites, want one 200", name, a)
		}
	}
	for _, s := range []store.Site{shop, blog} {
		fixes, err := b.store.TreeFixes(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(fixes) != 1 || fixes[0].PackageID == "" || fixes[0].AdvisoryID != "GHSA-p2r0-0000-0001" {
			t.Errorf("%s's fixes: %+v, want p2r's", s.Name, fixes)
		}
		findings, err := b.store.TreeFindings(context.Background(), s.ID, readmodel.DevSeparate)
		if err != nil || len(findings) != 1 || findings[0].Name != "p2r" {
			t.Errorf("%s's findings: %+v, %v", s.Name, findings, err)
		}
	}
	// The local site installs nothing: none of it is the local site's.
	if findings, err := b.store.TreeFindings(context.Background(), store.LocalSite, readmodel.DevSeparate); err != nil || len(findings) != 0 {
		t.Errorf("the local site's findings: %+v, %v", findings, err)
	}
}

// A push refused whole: a malformed lockfile writes nothing, and the
// site's tree stays the last one accepted; the same bytes pushed again
// rewrite nothing but the push's time.
func TestAPushIsRefusedOrAcceptedWhole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.addSite("shop")
	body := []byte(`{"name":"shop","lockfileVersion":3,"requires":true,"packages":{` +
		`"":{"name":"shop","dependencies":{"left-pad":"^1.3.0"}},` +
		`"node_modules/left-pad":{"version":"1.3.0","resolved":"http://127.0.0.1/left-pad/-/left-pad-1.3.0.tgz"}}}`)
	ctx := context.Background()
	rep, err := b.checker.Push(ctx, shop, "package-lock.json", body)
	if err != nil || rep.Packages != 1 || rep.Unchanged {
		t.Fatalf("push = %+v, %v", rep, err)
	}
	state := func() (xmin string, pushed string) {
		b.db.QueryRow(t, `SELECT (SELECT string_agg(xmin::text, ',') FROM tree_state WHERE site_id = $1) || '/' ||
		                         (SELECT string_agg(xmin::text, ',') FROM tree_packages WHERE site_id = $1),
		                         (SELECT pushed_at::text FROM sites WHERE id = $1)`, shop.ID).Scan(&xmin, &pushed)
		return
	}
	rows, pushed := state()

	_, err = b.checker.Push(ctx, shop, "package-lock.json", []byte(`{"lockfileVersion":3,"packages":{"node_modules/x":`))
	if !errors.Is(err, lockfile.ErrInvalid) {
		t.Fatalf("a malformed push: %v, want lockfile.ErrInvalid", err)
	}
	if r, p := state(); r != rows || p != pushed {
		t.Errorf("a refused push wrote: rows %s → %s, pushed %s → %s", rows, r, pushed, p)
	}
	if _, err := b.checker.Push(ctx, shop, "yarn.lock", body); !errors.Is(err, ErrPushName) {
		t.Errorf("a yarn.lock: %v, want ErrPushName", err)
	}

	again, err := b.checker.Push(ctx, shop, "package-lock.json", body)
	if err != nil || !again.Unchanged || again.Packages != 1 {
		t.Fatalf("the same bytes again: %+v, %v", again, err)
	}
	if r, p := state(); r != rows || p == pushed {
		t.Errorf("the same bytes again: rows %s → %s (want none rewritten), pushed %s → %s (want moved)", rows, r, pushed, p)
	}
	var audited int
	b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'site.push'`).Scan(&audited)
	if audited != 2 {
		t.Errorf("%d pushes audited, want the 2 accepted", audited)
	}
}

// A push racing checks: the pushes write the site's tree under the
// lease's lock while checks evaluate it and decide its fixes, fenced.
// Whatever the interleaving, no stored fix is of a finding its instance
// does not have (a fix decided on the old inventory is never written
// beside the new one), and each version the site installs is matched.
func TestAPushRacingAChecksFencedWrites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, true)
	fs := feedserver.New(t)
	fs.SetRecords(records(osvgen.Record("GHSA-p2r0-0000-0001", "p2r", osvgen.KindVuln, "", "0.1.10")))
	b.checker.UseFeeds(NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	shop := b.addSite("shop")
	lock, err := os.ReadFile(fr.lockfile)
	if err != nil {
		t.Fatal(err)
	}
	// The other inventory: p2r at its fixed version, the same ids.
	fixed := []byte(replaceVersion(t, string(lock), "p2r", "0.1.7", "0.1.10"))
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 12 {
			body := lock
			if i%2 == 1 {
				body = fixed
			}
			if _, err := b.checker.Push(ctx, shop, "package-lock.json", body); err != nil {
				t.Errorf("push %d: %v", i, err)
				return
			}
		}
	}()
	// A push that changed the tree evaluates it under the lease when the
	// lease is free: a check begun meanwhile is busy, as it is beside
	// any holder.
	for range 4 {
		if res := b.run(lease.Operator); !res.Status.RanToEnd() && res.Status != readmodel.CheckBusy {
			t.Errorf("check: %+v", res)
		}
	}
	wg.Wait()
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}
	var stray int
	b.db.QueryRow(t, `SELECT count(*) FROM tree_fixes x JOIN tree_packages p ON p.site_id = x.site_id AND p.id = x.package_id
	                  WHERE NOT EXISTS (SELECT 1 FROM tree_findings f WHERE f.name = p.name AND f.version = p.version
	                                    AND f.advisory_id = x.advisory_id AND NOT f.withdrawn)`).Scan(&stray)
	if stray != 0 {
		t.Errorf("%d fixes of findings their instance does not have", stray)
	}
	var unmatched int
	b.db.QueryRow(t, `SELECT count(*) FROM tree_packages p WHERE NOT EXISTS
	                  (SELECT 1 FROM tree_matched m WHERE m.name = p.name AND m.version = p.version)`).Scan(&unmatched)
	if unmatched != 0 {
		t.Errorf("%d installed versions not matched after the last check", unmatched)
	}
	// The last push was the fixed inventory: no finding, no fix.
	if fixes, err := b.store.TreeFixes(ctx, shop.ID); err != nil || len(fixes) != 0 {
		t.Errorf("the fixed inventory's fixes: %+v, %v", fixes, err)
	}
}

// replaceVersion is the npm lockfile lock with the instance
// node_modules/NAME at version to instead of from.
func replaceVersion(t *testing.T, lock, name, from, to string) string {
	t.Helper()
	key := `"node_modules/` + name + `": {`
	at := strings.Index(lock, key)
	if at < 0 {
		t.Fatalf("no %s in the lockfile", key)
	}
	old := `"version": "` + from + `"`
	i := strings.Index(lock[at:], old)
	if i < 0 {
		t.Fatalf("no %s after %s", old, key)
	}
	return lock[:at+i] + `"version": "` + to + `"` + lock[at+i+len(old):]
}
