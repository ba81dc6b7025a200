package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// policyDetailJSON is what the tests read of the detail API's policy
// members.
type policyDetailJSON struct {
	UpdateVersion *string `json:"update_version"`
	Policy        struct {
		Offer string  `json:"offer"`
		Hold  *string `json:"hold"`
		Soak  *string `json:"soak"`
		Text  string  `json:"text"`
	} `json:"policy"`
	Waiting *struct {
		Version    string     `json:"version"`
		Until      *time.Time `json:"until"`
		Reason     string     `json:"reason"`
		ReasonKind string     `json:"reason_kind"`
	} `json:"waiting"`
	Held *struct {
		Version    string `json:"version"`
		Reason     string `json:"reason"`
		ReasonKind string `json:"reason_kind"`
	} `json:"held"`
	Skipped *struct {
		Version      string    `json:"version"`
		Reason       string    `json:"reason"`
		By           string    `json:"by"`
		At           time.Time `json:"at"`
		FromManifest bool      `json:"from_manifest"`
		Hides        bool      `json:"hides"`
	} `json:"skipped"`
	ReleasesBetween []struct {
		Version  string     `json:"version"`
		Released *time.Time `json:"released"`
		Kind     string     `json:"kind"`
		Summary  *string    `json:"summary"`
		URL      *string    `json:"url"`
		Offer    string     `json:"offer"`
		Reason   *string    `json:"reason"`
	} `json:"releases_between"`
	PinDowngrade *struct {
		Reason string `json:"reason"`
		Text   string `json:"text"`
	} `json:"pin_downgrade"`
	NewPublisher *struct {
		Version string `json:"version"`
		Account string `json:"account"`
	} `json:"new_publisher"`
	Advisories []struct {
		ID        string `json:"id"`
		Dismissed bool   `json:"dismissed"`
		Dismissal *struct {
			By           *string `json:"by"`
			FromManifest bool    `json:"from_manifest"`
		} `json:"dismissal"`
	} `json:"advisories"`
}

// policySite installs, from its own publisher, a core and:
//   - blog 2.3.0 under {soak 3d, hold <3.0.0}: 2.3.1, 2.3.2 and 2.4.0 soaked
//     (2.4.0 offered), 2.5.0 published an hour ago (waiting), 3.0.0 held;
//   - gallery 1.0.0 with 1.1.0 skipped in the manifest (1.2.0 offered) and
//     an advisory the manifest dismisses;
//   - forms 1.0.0 with 1.1.0, skipped by the admin: up to date.
//
// then checks.
func policySite(t *testing.T, b *bundle) *publisher.Publisher {
	t.Helper()
	pub := publisher.New(t)
	day := func(n int) string {
		return time.Now().UTC().Add(time.Duration(-n) * 24 * time.Hour).Format(time.RFC3339)
	}
	notes := func(v string) string { return pub.URL + "/notes/blog-" + v }
	blog := fmt.Sprintf(`{"releases": [
		{"version": "2.3.1", "released": %q, "summary": "Fixes the editor's toolbar", "url": %q},
		{"version": "2.3.2", "released": %q, "summary": "Faster <b>comments</b>", "url": %q},
		{"version": "2.4.0", "released": %q, "summary": "A new editor", "url": %q},
		{"version": "2.5.0", "released": %q, "summary": "Galleries in posts"},
		{"version": "3.0.0", "released": %q, "summary": "A new theme engine"}]}`,
		day(10), notes("2.3.1"), day(9), notes("2.3.2"), day(8), notes("2.4.0"),
		time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), day(20))
	gallery := `{"releases": [{"version": "1.1.0"}, {"version": "1.2.0"}],
		"advisories": [{"id": "ACME-9", "severity": "high", "affected": "<=1.2.0", "summary": "Open redirect"}]}`
	forms := `{"releases": [{"version": "1.1.0"}]}`
	body := func(pkgs map[string]string) []byte {
		var parts []string
		for code, p := range pkgs {
			parts = append(parts, fmt.Sprintf("%q: %s", code, p))
		}
		return fmt.Appendf(nil, `{"format": 1, "publisher": "acme", "sequence": 1, "expires": "2099-01-01T00:00:00Z", "packages": {%s}}`,
			strings.Join(parts, ","))
	}
	pub.Set("/core.json", body(map[string]string{"core": `{"releases": [{"version": "1.9.0"}]}`}))
	pub.Set("/acme.json", body(map[string]string{"blog": blog, "gallery": gallery, "forms": forms}))
	m := &manifest.Manifest{
		Skips:      []manifest.Skip{{Component: "gallery", Version: "1.1.0", Reason: "breaks our theme"}},
		Dismissals: []manifest.Dismissal{{Component: "gallery", Advisory: "ACME-9", Reason: "the redirect module is disabled"}},
		Components: []manifest.Component{
			{Code: "core", Name: "Core", Version: "1.9.0", Source: pub.URL + "/core.json"},
			{Code: "blog", Name: "Blog", Version: "2.3.0", Source: pub.URL + "/acme.json",
				Policy: release.Policy{Soak: "3d", Hold: "<3.0.0"}},
			{Code: "gallery", Name: "Gallery", Version: "1.0.0", Source: pub.URL + "/acme.json"},
			{Code: "forms", Name: "Forms", Version: "1.0.0", Source: pub.URL + "/acme.json"},
		}}
	ctx := context.Background()
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := b.store.WithTx(ctx, func(tx *store.Tx) error {
		return tx.SkipPut(ctx, store.Skip{Site: store.LocalSite, Code: "forms", Version: "1.1.0", Reason: "waits for our theme", By: "admin@example.test"})
	}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "check", b.login("admin@example.test").postCheck(true), 200)
	return pub
}

// The detail API and page say why through real PostgreSQL: the policy,
// the release that waits and the one held with their reasons, every
// release in between newest first with its summary and notes link, the
// skips (a manifest's cannot be undone on the page), the trust
// downgrades, and a manifest dismissal without a restore button.
func TestDetailSaysWhy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := policySite(t, b)
	viewer := b.login("viewer@example.test")

	blog := decodeJSON[policyDetailJSON](t, viewer.do("GET", "/api/admin/plugins/blog", "", "", nil))
	if blog.UpdateVersion == nil || *blog.UpdateVersion != "2.4.0" {
		t.Fatalf("blog offers %v, want 2.4.0 (2.5.0 waits, 3.0.0 held)", blog.UpdateVersion)
	}
	if p := blog.Policy; p.Offer != "all" || p.Hold == nil || *p.Hold != "<3.0.0" || p.Soak == nil || *p.Soak != "3d" ||
		p.Text != "takes every update · soak 3 days · hold <3.0.0" {
		t.Errorf("blog's policy %+v", p)
	}
	if w := blog.Waiting; w == nil || w.Version != "2.5.0" || w.Until == nil || !strings.HasPrefix(w.Reason, "waits until ") ||
		!strings.HasSuffix(w.Reason, " UTC (soak 3 days)") {
		t.Errorf("blog's waiting release %+v, want 2.5.0 with when it soaks", w)
	}
	if h := blog.Held; h == nil || h.Version != "3.0.0" || h.Reason != "held by the policy <3.0.0" {
		t.Errorf("blog's held release %+v", h)
	}
	if w, h := blog.Waiting, blog.Held; w == nil || w.ReasonKind != string(release.ReasonSoaking) || h == nil || h.ReasonKind != string(release.ReasonHeld) {
		t.Errorf("blog's reasons' kinds: waiting %+v, held %+v", w, h)
	}
	var got []string
	for _, r := range blog.ReleasesBetween {
		got = append(got, fmt.Sprintf("%s %s %s %s", r.Version, r.Kind, r.Offer, orEmpty(r.Summary)))
		if r.URL == nil || *r.URL != pub.URL+"/notes/blog-"+r.Version || r.Released == nil {
			t.Errorf("release %s: notes %v, released %v; want its notes link and date", r.Version, r.URL, r.Released)
		}
	}
	if want := []string{"2.4.0 plain offered A new editor", "2.3.2 plain superseded Faster <b>comments</b>",
		"2.3.1 plain superseded Fixes the editor's toolbar"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("blog's releases in between:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	gallery := decodeJSON[policyDetailJSON](t, viewer.do("GET", "/api/admin/plugins/gallery", "", "", nil))
	if s := gallery.Skipped; s == nil || s.Version != "1.1.0" || s.Reason != "breaks our theme" || !s.FromManifest ||
		s.By != readmodel.SkippedByText(store.ManifestActor, true) || s.Hides {
		// 1.2.0 is offered: the skip of 1.1.0 hides nothing that would be.
		t.Errorf("gallery's skip %+v, want 1.1.0 from the manifest, hiding nothing now that 1.2.0 is offered", s)
	}
	if len(gallery.ReleasesBetween) != 2 || gallery.ReleasesBetween[1].Offer != string(release.ReleaseSkipped) {
		t.Errorf("gallery's releases in between %+v, want 1.2.0 offered, 1.1.0 skipped", gallery.ReleasesBetween)
	}
	if len(gallery.Advisories) != 1 || !gallery.Advisories[0].Dismissed || gallery.Advisories[0].Dismissal == nil ||
		!gallery.Advisories[0].Dismissal.FromManifest {
		t.Errorf("gallery's advisories %+v, want ACME-9 dismissed from the manifest", gallery.Advisories)
	}
	forms := decodeJSON[policyDetailJSON](t, viewer.do("GET", "/api/admin/plugins/forms", "", "", nil))
	if s := forms.Skipped; s == nil || s.By != "admin@example.test" || s.FromManifest || !s.Hides || forms.UpdateVersion != nil {
		t.Errorf("forms' skip %+v (update %v), want the admin's, hiding 1.1.0, nothing offered", s, forms.UpdateVersion)
	}

	// The page, to a manager.
	admin := b.login("admin@example.test")
	page := admin.do("GET", "/admin/plugins/blog", "", "", nil)
	wantStatus(t, "blog's page", page, 200)
	for _, want := range []string{
		"Policy: this site takes every update · soak 3 days · hold &lt;3.0.0",
		"2.5.0 " + blog.Waiting.Reason + ".",
		"3.0.0 held by the policy &lt;3.0.0.",
		"Faster &lt;b&gt;comments&lt;/b&gt;",
		`href="` + pub.URL + `/notes/blog-2.3.1"`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("blog's page does not say %q", want)
		}
	}
	if i, j, k := strings.Index(page.body, `data-testid="between-row" data-version="2.4.0"`),
		strings.Index(page.body, `data-testid="between-row" data-version="2.3.2"`),
		strings.Index(page.body, `data-testid="between-row" data-version="2.3.1"`); i < 0 || !(i < j && j < k) {
		t.Errorf("blog's page lists the releases in between at %d, %d, %d; want 2.4.0, 2.3.2, 2.3.1 in that order", i, j, k)
	}
	page = admin.do("GET", "/admin/plugins/gallery", "", "", nil)
	for _, want := range []string{"1.1.0 is skipped", `data-testid="skip-from-manifest"`, "change it in the manifest",
		`data-testid="dismissal-manifest"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("gallery's page does not say %q", want)
		}
	}
	if strings.Contains(page.body, `data-testid="advisory-undismiss"`) || strings.Contains(page.body, `data-testid="dismiss-form"`) ||
		strings.Contains(page.body, `data-testid="skip-undo"`) {
		t.Error("gallery's page offers to restore or replace the manifest's dismissal, or to end its skip")
	}
	// Posted all the same, the AdminCP's changes are refused in words, and
	// the manifest's dismissal stands.
	const api = "/api/admin/plugins/gallery/advisories/ACME-9/dismissal"
	wantError(t, "API dismiss of a manifest dismissal", admin.sendJSON("POST", api, map[string]any{"reason": "other"}, true, nil),
		409, "The manifest declares this dismissal")
	wantError(t, "API restore of a manifest dismissal", admin.sendJSON("DELETE", api, nil, true, nil), 409, "The manifest declares this dismissal")
	for _, action := range []string{"dismiss", "undismiss"} {
		r := admin.postForm("/admin/plugins/gallery/advisories/ACME-9/"+action, url.Values{"reason": {"other"}})
		if r.status != 422 || !strings.Contains(r.body, "The manifest declares this dismissal") {
			t.Errorf("the page's %s of a manifest dismissal: %d, want 422 saying the manifest declares it", action, r.status)
		}
	}
	if g := decodeJSON[policyDetailJSON](t, viewer.do("GET", "/api/admin/plugins/gallery", "", "", nil)); len(g.Advisories) != 1 ||
		!g.Advisories[0].Dismissed {
		t.Errorf("gallery's advisories after the refused changes %+v, want ACME-9 still dismissed", g.Advisories)
	}
	page = admin.do("GET", "/admin/plugins/forms", "", "", nil)
	if !strings.Contains(page.body, "No update offered · 1.1.0 skipped") || !strings.Contains(page.body, `<dd data-testid="skip-by">admin@example.test</dd>`) {
		t.Errorf("forms' page does not say its skip:\n%s", page.body)
	}

	// Trust going down: a manifest sync lowered blog's pin, and the offered
	// version came from an account new to the package.
	b.db.MustExec(t, `INSERT INTO pin_downgrades (code, source_url, pin, reason) VALUES ('blog', $1, '', $2)`,
		pub.URL+"/acme.json", "the manifest requires 1 signature where it required 2")
	b.db.MustExec(t, `UPDATE component_results SET new_publisher_version = '2.4.0', new_publisher = 'mallory' WHERE code = 'blog'`)
	blog = decodeJSON[policyDetailJSON](t, viewer.do("GET", "/api/admin/plugins/blog", "", "", nil))
	if d := blog.PinDowngrade; d == nil || d.Reason != "the manifest requires 1 signature where it required 2" ||
		!strings.Contains(d.Text, "the manifest lowered the trust of this source's keys") {
		t.Errorf("blog's pin downgrade %+v", d)
	}
	if n := blog.NewPublisher; n == nil || n.Version != "2.4.0" || n.Account != "mallory" {
		t.Errorf("blog's new publisher %+v", n)
	}
	page = viewer.do("GET", "/admin/plugins/blog", "", "", nil)
	for _, want := range []string{`data-testid="detail-pin-downgrade"`, "the manifest lowered the trust of this source&#39;s keys: the manifest requires 1 signature where it required 2",
		readmodel.NewPublisherText("2.4.0", "mallory")} {
		if !strings.Contains(page.body, want) {
			t.Errorf("blog's page does not warn %q", want)
		}
	}
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
