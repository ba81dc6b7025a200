package updatecheck

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
)

// setPolicy sets site's policy to body and fails the test on an error.
func (b *bundle) setPolicy(site store.Site, body string) SitePolicyReport {
	b.t.Helper()
	rep, err := b.checker.SetSitePolicy(context.Background(), SitePolicyRequest{Site: site, Body: []byte(body)})
	if err != nil {
		b.t.Fatalf("policy %s of %s: %v", body, site.Name, err)
	}
	return rep
}

// componentPolicies are site's components' stored policies, "code policy"
// a line ("" the default).
func (b *bundle) componentPolicies(site int64) string {
	b.t.Helper()
	var out string
	b.db.QueryRow(b.t, `SELECT coalesce(string_agg(code || ' ' || coalesce(policy, ''), E'\n' ORDER BY code), '')
	                    FROM components WHERE site_id = $1`, site).Scan(&out)
	return out
}

// Two sites install the same version of xpress (a real Verdaccio,
// counted): blog takes security updates only, set before its first push,
// so its push writes its components under that policy and the check,
// reading one document for both, offers shop 4.21.0 and blog nothing. A
// change of a site's policy evaluates its components again at once from
// the stored document, with no request to the registry: shop under a
// patch tier and then a soak is offered nothing, blog back on the default
// is offered 4.21.0; the next check evaluates under the policies as they
// are.
func TestASitesPolicyDecidesItsOffer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, false)
	ctx := context.Background()
	shop, blog := b.addSite("shop"), b.addSite("blog")
	if rep := b.setPolicy(blog, `{"offer": "security"}`); rep.Components != 0 || rep.Unchanged {
		t.Errorf("blog's policy before its first push: %+v, want changed, no component", rep)
	}
	for _, s := range []store.Site{shop, blog} {
		if _, err := b.checker.Push(ctx, s, "package-lock.json", pushLock("xpress@4.17.1")); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.componentPolicies(blog.ID); got != `xpress {"offer":"security"}` {
		t.Errorf("blog's components after its push: %q, want xpress under its policy", got)
	}
	if got := b.componentPolicies(shop.ID); got != "xpress " {
		t.Errorf("shop's components after its push: %q, want xpress under the default", got)
	}
	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}
	if a := fr.answers("xpress"); len(a) != 1 {
		t.Fatalf("xpress answered %v for two sites, want one request", a)
	}
	offers := func(when, wantShop, wantBlog string) {
		t.Helper()
		for _, c := range []struct {
			site store.Site
			want string
		}{{shop, wantShop}, {blog, wantBlog}} {
			if _, evaluated, update := b.siteOffer(c.site.ID, "xpress"); !evaluated || update != c.want {
				t.Errorf("%s: %s's xpress evaluated %v, offered %q; want %q", when, c.site.Name, evaluated, update, c.want)
			}
		}
	}
	offers("after the check", "4.21.0", "")

	rep := b.setPolicy(shop, `{"offer": "patch"}`)
	if rep.Components != 1 || rep.Reevaluated != 1 || rep.Unchanged {
		t.Errorf("shop's patch tier: %+v, want 1 component evaluated again", rep)
	}
	offers("shop on patch updates", "", "")
	b.setPolicy(blog, `{}`)
	offers("blog back on the default", "", "4.21.0")
	b.setPolicy(shop, `{"soak": "3d"}`)
	offers("shop soaking 3 days", "", "4.21.0")
	if rep := b.setPolicy(shop, `{"soak":"3d"}`); !rep.Unchanged || rep.Components != 0 || rep.Reevaluated != 0 {
		t.Errorf("the same policy again: %+v, want unchanged", rep)
	}
	if a := fr.answers("xpress"); len(a) != 1 {
		t.Errorf("xpress answered %v after three policy changes, want no more requests", a)
	}
	var audited int
	b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'site.policy'`).Scan(&audited)
	if audited != 4 {
		t.Errorf("%d site.policy audit rows, want 4 (one a change)", audited)
	}

	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("second check: %+v", res)
	}
	if a := fr.answers("xpress"); len(a) != 2 {
		t.Errorf("xpress answered %v after the second check, want one more", a)
	}
	offers("after the second check", "", "4.21.0")
}

// A policy the manifest's parser refuses is refused in its words and
// changes nothing (the site's policy, its components', the audit log);
// the local site's policy is its manifest's, never set here.
func TestASitePolicyRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.addSite("shop")
	b.setPolicy(shop, `{"offer": "minor"}`)
	if _, err := b.checker.Push(ctx, shop, "package-lock.json", pushLock("left-pad@1.3.0")); err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		`{"offer": "weekly"}`:          `offer "weekly" is not one of all, minor, patch, security`,
		`{"soak": "3d", "hodl": "<2"}`: "hodl",
		`{"soak": "2y"}`:               `soak "2y" is not a duration`,
		`{"offer": "patch"} {}`:        "unexpected data after the policy",
		`not json`:                     "malformed JSON at line 1",
	} {
		_, err := b.checker.SetSitePolicy(ctx, SitePolicyRequest{Site: shop, Body: []byte(body)})
		var pe *SitePolicyError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("policy %s: %v, want a refusal saying %q", body, err, want)
		}
	}
	if p, err := b.checker.SitePolicy(ctx, shop); err != nil || p.Text() != `{"offer":"minor"}` {
		t.Errorf("shop's policy after the refusals: %+v, %v, want minor", p, err)
	}
	if got := b.componentPolicies(shop.ID); got != `left-pad {"offer":"minor"}` {
		t.Errorf("shop's components after the refusals: %q", got)
	}
	var audited int
	b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'site.policy'`).Scan(&audited)
	if audited != 1 {
		t.Errorf("%d site.policy audit rows, want the one change", audited)
	}
	local := store.Site{ID: store.LocalSite, Name: store.LocalSiteName}
	if _, err := b.checker.SetSitePolicy(ctx, SitePolicyRequest{Site: local, Body: []byte(`{"offer":"patch"}`)}); !errors.Is(err, ErrSitePolicyLocal) {
		t.Errorf("a policy of the local site: %v, want ErrSitePolicyLocal", err)
	}
	var localPolicy string
	b.db.QueryRow(t, `SELECT policy FROM sites WHERE id = 1`).Scan(&localPolicy)
	if localPolicy != "" {
		t.Errorf("the local site's stored policy: %q", localPolicy)
	}
}

// A policy changed while a push is on its way (after it read the site's
// components, before its transaction) is the one the push writes them
// under: the push reads the policy under the lease's lock, which the
// change takes too.
func TestAPushWritesUnderThePolicyOfItsTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.addSite("shop")
	b.setPolicy(shop, `{"offer":"patch"}`)
	b.checker.beforePushWrite = func() { b.setPolicy(shop, `{"soak":"2d"}`) }
	if _, err := b.checker.Push(ctx, shop, "package-lock.json", pushLock("left-pad@1.3.0")); err != nil {
		t.Fatal(err)
	}
	if got := b.componentPolicies(shop.ID); got != `left-pad {"soak":"2d"}` {
		t.Errorf("shop's components: %q, want under the policy set before the push's transaction", got)
	}
}

// Pushes racing changes of the site's policy: each push writes the
// site's components under the policy it reads under the lease's lock,
// which the change takes too, so whatever the interleaving every
// component ends under the site's policy as it stands.
func TestPushesRacingPolicyChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.addSite("shop")
	locks := [][]byte{pushLock("left-pad@1.3.0", "is-odd@3.0.0"), pushLock("left-pad@1.3.1", "is-even@1.0.0")}
	policies := []string{`{"offer":"patch"}`, `{}`, `{"soak":"2d"}`}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20 {
			if _, err := b.checker.Push(ctx, shop, "package-lock.json", locks[i%2]); err != nil {
				t.Errorf("push %d: %v", i, err)
				return
			}
		}
	}()
	for i := range 20 {
		if _, err := b.checker.SetSitePolicy(ctx, SitePolicyRequest{Site: shop, Body: []byte(policies[i%3])}); err != nil {
			t.Errorf("policy %d: %v", i, err)
		}
	}
	wg.Wait()
	var stray int
	b.db.QueryRow(t, `SELECT count(*) FROM components c JOIN sites s ON s.id = c.site_id
	                  WHERE s.id = $1 AND coalesce(c.policy, '') <> s.policy`, shop.ID).Scan(&stray)
	if stray != 0 {
		t.Errorf("%d of shop's components under another policy than the site's %s", stray, policies[19%3])
	}
}
