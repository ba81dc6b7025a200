package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// whyDoc is an update document of the packages given, unsigned.
func whyDoc(seq int, packages map[string]string) []byte {
	var parts []string
	for code, body := range packages {
		parts = append(parts, fmt.Sprintf("%q: %s", code, body))
	}
	return fmt.Appendf(nil, `{"format": 1, "publisher": "acme", "sequence": %d, "expires": "2099-01-01T00:00:00Z", "packages": {%s}}`,
		seq, strings.Join(parts, ","))
}

// policySite installs, through the manifest sync, a core and components at
// 2.3.0 under policies: blog soaks 3 days (2.4.0 was released an hour
// ago), gallery holds the major, shop takes security updates only, forms
// skips 2.4.0 in the manifest; wiki's source was pinned to the
// publisher's key, and is no longer when pinWiki is false.
func (b *bundle) policySite(released time.Time, pinWiki bool) {
	b.t.Helper()
	u := b.publisher.URL
	b.publisher.Set("/why/core.json", whyDoc(1, map[string]string{"core": `{"releases": [{"version": "1.9.0"}]}`}))
	b.publisher.Set("/why/acme.json", whyDoc(1, map[string]string{
		"blog": fmt.Sprintf(`{"releases": [{"version": "2.3.5", "released": "2026-01-01T00:00:00Z"},
			{"version": "2.4.0", "released": %q}]}`, released.Format(time.RFC3339)),
		"gallery": `{"releases": [{"version": "2.4.0"}, {"version": "3.0.0"}]}`,
		"shop":    `{"releases": [{"version": "2.6.0"}]}`,
		"forms":   `{"releases": [{"version": "2.4.0"}]}`,
	}))
	b.publisher.Set("/why/wiki.json", whyDoc(1, map[string]string{"wiki": `{"releases": [{"version": "1.0.0"}]}`}))
	wiki := manifest.Component{Code: "wiki", Name: "Wiki", Version: "1.0.0", Source: u + "/why/wiki.json"}
	if pinWiki {
		wiki.Key = b.publisher.Key().String()
	}
	m := &manifest.Manifest{
		Skips: []manifest.Skip{{Component: "forms", Version: "2.4.0", Reason: "breaks our theme"}},
		Components: []manifest.Component{
			{Code: "core", Name: "Core", Version: "1.9.0", Source: u + "/why/core.json"},
			{Code: "blog", Name: "Blog", Version: "2.3.0", Source: u + "/why/acme.json", Policy: release.Policy{Soak: "3d"}},
			{Code: "gallery", Name: "Gallery", Version: "2.3.0", Source: u + "/why/acme.json", Policy: release.Policy{Hold: "<3.0.0"}},
			{Code: "shop", Name: "Shop", Version: "2.3.0", Source: u + "/why/acme.json", Policy: release.Policy{Offer: release.OfferSecurity}},
			{Code: "forms", Name: "Forms", Version: "2.3.0", Source: u + "/why/acme.json"},
			wiki,
		}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(context.Background(), m); err != nil {
		b.t.Fatal(err)
	}
}

// whyItem is a catalog item's members that say why.
type whyItem struct {
	Code            string
	UpdateVersion   *string `json:"update_version"`
	UpdateAvailable bool    `json:"update_available"`
	Policy          *release.Policy
	Waiting         *struct {
		Version    string
		Until      *time.Time
		Reason     string
		ReasonKind release.ReasonKind `json:"reason_kind"`
	}
	Held *struct {
		Version, Reason string
		ReasonKind      release.ReasonKind `json:"reason_kind"`
	}
	Skipped *struct {
		Version, Reason, By string
		At                  time.Time
		FromManifest        bool `json:"from_manifest"`
	}
	NewPublisher *struct{ Version, Account string } `json:"new_publisher"`
	PinDowngrade *struct {
		Reason string
		At     time.Time
	} `json:"pin_downgrade"`
}

// The catalog API, the summary and the catalog page say why a release is
// not offered, from a real check under each policy: a release waiting for
// its soak (and until when), one held by the hold range, one outside the
// security tier, one skipped in the manifest (by the manifest) and one by
// an admin (by the admin's email, once evaluated again), and the
// trust downgrades (a lowered pin by a real sync; a new publisher as the
// result stores it). update_version is the offered update, and the
// summary counts offered updates only, and the waiting one apart. Every
// answer is held to openapi.json (client.do).
func TestCatalogSaysWhyAReleaseIsNotOffered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	released := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	b.policySite(released, true)
	b.policySite(released, false) // wiki's pin is dropped: a trust downgrade
	ctx := context.Background()
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil || res.Status != updatecheck.Completed {
		t.Fatalf("check: %+v, %v", res, err)
	}
	b.db.MustExec(t, `UPDATE component_results SET new_publisher_version = '2.4.0', new_publisher = 'mallory' WHERE code = 'gallery'`)
	admin := b.login("admin@example.test")

	r := admin.do("GET", "/api/admin/plugins/updates", "", "", nil)
	wantStatus(t, "catalog", r, 200)
	var cat struct{ Components []whyItem }
	if err := json.Unmarshal([]byte(r.body), &cat); err != nil {
		t.Fatal(err)
	}
	items := map[string]whyItem{}
	for _, c := range cat.Components {
		items[c.Code] = c
	}
	offered := func(code string) string {
		if v := items[code].UpdateVersion; v != nil {
			return *v
		}
		return ""
	}
	soaks := released.Add(72 * time.Hour)
	blog := items["blog"]
	if offered("blog") != "2.3.5" || blog.Waiting == nil || blog.Waiting.Version != "2.4.0" || blog.Waiting.Until == nil ||
		!blog.Waiting.Until.Equal(soaks) || blog.Waiting.Reason != "waits until "+soaks.Format("2 Jan 15:04")+" UTC (soak 3 days)" ||
		blog.Policy == nil || blog.Policy.Soak != "3d" || blog.Held != nil || blog.Skipped != nil {
		t.Errorf("blog, soaking: offered %q, %s", offered("blog"), r.body)
	}
	if g := items["gallery"]; offered("gallery") != "2.4.0" || g.Held == nil || g.Held.Version != "3.0.0" ||
		g.Held.Reason != "held by the policy <3.0.0" || g.Waiting != nil {
		t.Errorf("gallery, held: offered %q, held %+v", offered("gallery"), g.Held)
	}
	if g := items["gallery"]; g.NewPublisher == nil || g.NewPublisher.Version != "2.4.0" || g.NewPublisher.Account != "mallory" {
		t.Errorf("gallery's new publisher: %+v", g.NewPublisher)
	}
	if s := items["shop"]; offered("shop") != "" || s.UpdateAvailable || s.Held == nil || s.Held.Version != "2.6.0" ||
		s.Held.Reason != "not offered: this site takes security updates only" || s.Policy == nil || s.Policy.Offer != release.OfferSecurity {
		t.Errorf("shop, security only: offered %q, held %+v", offered("shop"), s.Held)
	}
	if f := items["forms"]; offered("forms") != "" || f.Skipped == nil || f.Skipped.Version != "2.4.0" || f.Skipped.Reason != "breaks our theme" ||
		f.Skipped.By != "the manifest" || !f.Skipped.FromManifest || f.Skipped.At.IsZero() || f.Policy != nil {
		t.Errorf("forms, skipped in the manifest: offered %q, skipped %+v", offered("forms"), f.Skipped)
	}
	// A script reads why by its kind too.
	if blog.Waiting == nil || blog.Waiting.ReasonKind != release.ReasonSoaking || items["gallery"].Held == nil ||
		items["gallery"].Held.ReasonKind != release.ReasonHeld || items["shop"].Held == nil || items["shop"].Held.ReasonKind != release.ReasonNotOffered {
		t.Errorf("the reasons' kinds: %s", r.body)
	}
	if w := items["wiki"]; w.PinDowngrade == nil || w.PinDowngrade.Reason != "the manifest pins no key any more: documents are no longer verified" {
		t.Errorf("wiki, its pin dropped: %+v", w.PinDowngrade)
	}
	for _, code := range []string{"core", "blog", "gallery", "shop", "forms"} {
		if items[code].PinDowngrade != nil {
			t.Errorf("%s has a pin downgrade: %+v", code, items[code].PinDowngrade)
		}
	}

	r = admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)
	wantStatus(t, "summary", r, 200)
	var sum struct {
		UpdatesAvailable int `json:"updates_available"`
		Waiting          int
		TrustDowngrades  int `json:"trust_downgrades"`
		Attention        []struct {
			Code, Kind   string
			NewPublisher *struct{ Version, Account string } `json:"new_publisher"`
			PinDowngrade *struct{ Reason string }           `json:"pin_downgrade"`
		}
	}
	if err := json.Unmarshal([]byte(r.body), &sum); err != nil {
		t.Fatal(err)
	}
	// blog (2.3.5) and gallery (2.4.0) are offered updates; shop's and
	// forms' releases are not offered, blog's 2.4.0 waits.
	if sum.UpdatesAvailable != 2 || sum.Waiting != 1 || sum.TrustDowngrades != 2 {
		t.Errorf("summary: %d updates available, %d waiting, %d trust downgrades; want 2, 1, 2: %s",
			sum.UpdatesAvailable, sum.Waiting, sum.TrustDowngrades, r.body)
	}
	kinds := map[string]string{}
	for _, a := range sum.Attention {
		kinds[a.Code] = a.Kind
		if a.Kind == "new_publisher" && (a.NewPublisher == nil || a.NewPublisher.Account != "mallory") ||
			a.Kind == "pin_downgrade" && (a.PinDowngrade == nil || a.PinDowngrade.Reason == "") {
			t.Errorf("attention item %+v", a)
		}
	}
	if kinds["gallery"] != "new_publisher" || kinds["wiki"] != "pin_downgrade" || len(kinds) != 2 {
		t.Errorf("attention kinds %v, want gallery new_publisher and wiki pin_downgrade", kinds)
	}

	// An admin's skip of blog's offered 2.3.5: once evaluated again, blog
	// is offered nothing, says who skipped it, and is no longer counted.
	if err := b.store.WithTx(ctx, func(tx *store.Tx) error {
		return tx.SkipPut(ctx, store.Skip{Site: store.LocalSite, Code: "blog", Version: "2.3.5", Reason: "we wait for 2.4.0", By: "admin@example.test"})
	}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil || res.Status != updatecheck.Completed {
		t.Fatalf("check after the skip: %+v, %v", res, err)
	}
	// The check wrote every result of the source again: the new publisher
	// is set once more, as the result would store it.
	b.db.MustExec(t, `UPDATE component_results SET new_publisher_version = '2.4.0', new_publisher = 'mallory' WHERE code = 'gallery'`)
	r = admin.do("GET", "/api/admin/plugins/updates", "", "", nil)
	wantStatus(t, "catalog after the skip", r, 200)
	cat.Components = nil
	if err := json.Unmarshal([]byte(r.body), &cat); err != nil {
		t.Fatal(err)
	}
	for _, c := range cat.Components {
		if c.Code != "blog" {
			continue
		}
		if c.UpdateVersion != nil || c.Skipped == nil || c.Skipped.Version != "2.3.5" || c.Skipped.By != "admin@example.test" ||
			c.Skipped.FromManifest || c.Skipped.Reason != "we wait for 2.4.0" || c.Waiting == nil || c.Waiting.Version != "2.4.0" {
			t.Errorf("blog after an admin's skip: %s", r.body)
		}
	}
	r = admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)
	if err := json.Unmarshal([]byte(r.body), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.UpdatesAvailable != 1 || sum.Waiting != 1 {
		t.Errorf("summary after the skip: %d updates available, %d waiting; want 1 (gallery), 1 (blog's 2.4.0)", sum.UpdatesAvailable, sum.Waiting)
	}

	page := admin.do("GET", "/admin/plugins", "", "", nil)
	wantStatus(t, "catalog page", page, 200)
	for _, want := range []string{
		"No update offered · 2.3.5 skipped · 2.4.0 waits until " + soaks.Format("2 Jan 15:04") + " UTC (soak 3 days)",
		"Update to 2.4.0 · 3.0.0 held by the policy &lt;3.0.0",
		"No update offered · 2.6.0 not offered: this site takes security updates only",
		"No update offered · 2.4.0 skipped",
		"Trust downgrade: 2.4.0 was published by an account new to this package (mallory)",
		"Trust downgrade: the manifest lowered the trust of this source&#39;s keys: the manifest pins no key any more",
		// The banner names both, the new publisher first.
		`Gallery 2.3.0</a><span class="attention-problem">: trust downgrade: 2.4.0 was published by an account new to this package (mallory)</span>`,
		`Wiki 1.0.0</a><span class="attention-problem">: trust downgrade: the manifest lowered the trust of this source&#39;s keys`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the catalog page does not say %q", want)
		}
	}
}
