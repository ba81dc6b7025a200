package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"golang.org/x/net/html"
)

// The detail page opens with the state and the next step, the most urgent
// first, and never claims "up to date" without a current evaluation of a
// source read recently.
func TestDetailHeadline(t *testing.T) {
	t.Parallel()
	src := "https://acme.example/u.json"
	sec := &ReleaseRow{Version: "2.4.0", Security: true, Severity: "high", RequiresCore: ">=1.8.0"}
	blocked := &ReleaseRow{Version: "5.1.0", RequiresCore: ">=2.0.0"}
	for _, c := range []struct {
		name string
		p    DetailProps
		want string
	}{
		{"security", DetailProps{DetailRow: readmodel.DetailRow{Name: "Blog", SourceURL: src, Evaluated: true, Security: true,
			UpdateAvailable: true, UpdateVersion: "2.4.0", Vulnerable: true}, SecurityRelease: sec},
			"Security update: update to 2.4.0 (high)"},
		{"security needs a newer core", DetailProps{DetailRow: readmodel.DetailRow{Name: "Blog", SourceURL: src, Evaluated: true,
			Security: true, CoreVersion: "1.9.0", UpdateAvailable: true, UpdateVersion: "2.4.1", SecurityNeedsNewerCore: true},
			SecurityRelease: &ReleaseRow{Version: "3.0.0", Severity: "critical", RequiresCore: ">=2.0.0"}},
			"Security update: the fix in 3.0.0 (critical) needs core 2.0.0 or newer (installed 1.9.0): update the core first; 2.4.1 can be installed meanwhile"},
		{"no fix", DetailProps{DetailRow: readmodel.DetailRow{Name: "Gallery", SourceURL: src, Evaluated: true, Vulnerable: true,
			VulnerableNoFix: true, Security: true, UpdateVersion: "2.4.0", UpdateAvailable: true}, SecurityRelease: sec},
			"Vulnerable, no fix yet: consider disabling Gallery until a fix is published"},
		{"vulnerable with an update", DetailProps{DetailRow: readmodel.DetailRow{Name: "Chat", SourceURL: src, Evaluated: true,
			Vulnerable: true, UpdateAvailable: true, UpdateVersion: "1.0.1"}},
			"Vulnerable: update to 1.0.1"},
		{"vulnerable, fix not released", DetailProps{DetailRow: readmodel.DetailRow{Name: "Chat", SourceURL: src, Evaluated: true,
			Vulnerable: true}, Advisories: []AdvisoryRow{{ID: "A", FixedIn: "1.0.0", Dismissed: true}, {ID: "B", FixedIn: "1.0.2"}}},
			"Vulnerable: the fix is announced for 1.0.2, which is not an installable release yet"},
		{"update", DetailProps{DetailRow: readmodel.DetailRow{Name: "Core", SourceURL: src, Evaluated: true, UpdateAvailable: true,
			UpdateVersion: "1.10.0"}},
			"Update available: update to 1.10.0"},
		{"update and a blocked one", DetailProps{DetailRow: readmodel.DetailRow{Name: "News", SourceURL: src, Evaluated: true,
			UpdateAvailable: true, UpdateVersion: "5.0.1", NeedsNewerCore: true, CoreVersion: "1.9.0"}, BlockedRelease: blocked},
			"Update available: update to 5.0.1; update to 5.1.0 needs core 2.0.0 or newer (installed 1.9.0)"},
		{"blocked", DetailProps{DetailRow: readmodel.DetailRow{Name: "News", SourceURL: src, Evaluated: true, NeedsNewerCore: true,
			CoreVersion: "1.9.0"}, BlockedRelease: blocked},
			"Update to 5.1.0 needs core 2.0.0 or newer (installed 1.9.0)"},
		{"up to date", DetailProps{DetailRow: readmodel.DetailRow{Name: "Forms", SourceURL: src, Evaluated: true, LastSuccessAt: ago(time.Hour)}},
			"Up to date"},
		{"stale", DetailProps{DetailRow: readmodel.DetailRow{Name: "Forms", SourceURL: src, Evaluated: true, Stale: true}},
			"No update known: but the update source has not been read successfully for over 48 hours, so a newer release or advisory may be missing"},
		{"never read", DetailProps{DetailRow: readmodel.DetailRow{Name: "Shop", SourceURL: src, LastError: "HTTP 503"}},
			"Unknown: the update source has never been read successfully, so nothing is known about releases or advisories for this version."},
		{"offline, never imported", DetailProps{DetailRow: readmodel.DetailRow{Name: "Mirrored", SourceURL: "offline:acme"}},
			"Unknown: the offline update source is waiting for its first import, so nothing is known about releases or advisories for this version. An admin imports its document from Source health."},
		{"offline, document expired", DetailProps{DetailRow: readmodel.DetailRow{Name: "Mirrored", SourceURL: "offline:acme",
			Evaluated: true, LastSuccessAt: ago(time.Hour), Stale: true}},
			"No update known: but the imported document has expired, so a newer release or advisory may be missing: import a newer one"},
		// Flags without a current evaluation are not trusted.
		{"not evaluated", DetailProps{DetailRow: readmodel.DetailRow{Name: "Shop", SourceURL: src, LastSuccessAt: ago(time.Hour),
			UpdateAvailable: true, UpdateVersion: "2.0.0"}},
			"Unknown: the installed version (or the core's) changed, or the pinned key did, since the source was last read; the next check evaluates it."},
		{"no source", DetailProps{DetailRow: readmodel.DetailRow{Name: "Theme"}},
			"Not tracked: nobody publishes updates for this component, so upcheck cannot tell whether it is up to date"},
	} {
		h := detailHeadline(c.p)
		if got := h.Title + h.rest(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	// On the page, with the exposure clock.
	p := DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "blog", Name: "Blog", SourceURL: src,
		Evaluated: true, Security: true, UpdateAvailable: true, UpdateVersion: "2.4.0", SecuritySince: ago(72 * time.Hour)},
		SecurityRelease: sec}
	if got := text(one(t, doc(t, ComponentDetail(p)), "detail-headline")); got != "Security update: update to 2.4.0 (high) Security fix available for 3 days" {
		t.Errorf("headline on the page %q", got)
	}
}

func TestDismissButtonsOnlyForManagers(t *testing.T) {
	t.Parallel()
	p := DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "blog", Installed: "1.0.0", Evaluated: true},
		Advisories: []AdvisoryRow{
			{ID: "A-1", Severity: "high"}, {ID: "A/2", Severity: "low", Dismissed: true},
		}}
	p.CanManage = true
	root := doc(t, ComponentDetail(p))
	dismiss := one(t, root, "dismiss-form")
	if a, _ := attr(dismiss, "action"); a != "/admin/plugins/blog/advisories/A-1/dismiss" {
		t.Errorf("dismiss action %q", a)
	}
	undismiss := one(t, root, "advisory-undismiss")
	if a, _ := attr(undismiss, "action"); a != "/admin/plugins/blog/advisories/A%2F2/undismiss" {
		t.Errorf("undismiss action %q", a)
	}
	p.CanManage = false
	root = doc(t, ComponentDetail(p))
	if n := len(byTestID(root, "advisory-dismiss")) + len(byTestID(root, "dismiss-form")) + len(byTestID(root, "advisory-undismiss")); n != 0 {
		t.Errorf("viewer sees %d dismiss forms", n)
	}
}

// A component with no update source says so once; nothing on its page
// says its source "has not been read yet".
func TestNoSourcePageSaysItOnce(t *testing.T) {
	t.Parallel()
	shown := visibleText(doc(t, ComponentDetail(DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "local",
		Name: "Local tweaks", Installed: "0.1.0"}})))
	if strings.Contains(shown, "not been read yet") || strings.Contains(shown, "next check will fetch") {
		t.Errorf("the page of a component without a source speaks of reading it:\n%s", shown)
	}
	if n := strings.Count(shown, "nobody publishes updates"); n != 1 {
		t.Errorf("the page says %d times that nobody publishes updates:\n%s", n, shown)
	}
}

// On the page of a component never read successfully, why nothing is
// known is said once, in the headline; a component installed a moment
// ago is not called stale.
func TestUnknownSentenceOnce(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]DetailProps{
		"never read, failing": {DetailRow: readmodel.DetailRow{SourceURL: "https://shop.example/u.json", LastError: "fetch: 503",
			LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArgs: readmodel.FailureArgs{Status: 503}}},
		"never read, stale": {DetailRow: readmodel.DetailRow{SourceURL: "https://shop.example/u.json", LastError: "fetch: 503",
			Stale: true, LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArgs: readmodel.FailureArgs{Status: 503}}},
		"not evaluated": {DetailRow: readmodel.DetailRow{SourceURL: "https://shop.example/u.json", LastSuccessAt: ago(time.Hour),
			Evaluated: true, EvalError: `no package "shop"`}},
	} {
		p.Layout, p.Code, p.Name, p.Installed = layout(calm(), true), "shop", "Shop", "0.9.1"
		shown := visibleText(doc(t, ComponentDetail(p)))
		if n := strings.Count(shown, "nothing is known"); n != 1 {
			t.Errorf("%s: “nothing is known” said %d times:\n%s", name, n, shown)
		}
		if !p.Stale && strings.Contains(shown, "48 hours") {
			t.Errorf("%s: a component that is not stale is said to be 48 hours old:\n%s", name, shown)
		}
	}
	row := readmodel.CatalogRow{Code: "shop", Installed: "1.0", SourceURL: "https://shop.example/u.json", LastError: "fetch: 503",
		LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArgs: readmodel.FailureArgs{Status: 503}}
	var words []string
	for _, b := range rowBadges(row, now) {
		words = append(words, b.Text)
	}
	if got := strings.Join(words, ", "); got != "Check failing, Never read successfully" {
		t.Errorf("a new component whose source failed: %q", got)
	}
}

// TestDetailNeverSaysNoAdvisoryWithoutAnEvaluation: a component whose
// source was never read is unknown, never "no known advisory" or "no
// releases".
func TestDetailNeverSaysNoAdvisoryWithoutAnEvaluation(t *testing.T) {
	t.Parallel()
	out := render(t, ComponentDetail(DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "shop",
		Name: "Shop", Installed: "1.0.0", SourceURL: "https://shop.example/u.json", LastError: "fetch: 404 Not Found", Stale: true}}))
	if strings.Contains(out, "No known advisory") || strings.Contains(out, "lists no releases") {
		t.Errorf("an unevaluated component is said to have no advisory or no releases:\n%s", out)
	}
	if !strings.Contains(out, "never been read successfully") {
		t.Errorf("the page does not say why nothing is known:\n%s", out)
	}
}

// A component whose source has never been read, or whose document could
// not be evaluated for it, has no known releases or advisories: the page
// never says "none".
func TestNothingKnownIsNeverNone(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]DetailProps{
		"never read": {DetailRow: readmodel.DetailRow{SourceURL: "https://shop.example/u.json", Stale: true,
			LastError: "fetch https://shop.example/u.json: unexpected http status 503 Service Unavailable", LastErrorKind: string(readmodel.ErrorHTTPStatus),
			LastErrorArgs: readmodel.FailureArgs{Status: 503}}},
		"not evaluated": {DetailRow: readmodel.DetailRow{SourceURL: "https://shop.example/u.json", LastSuccessAt: ago(time.Hour),
			Evaluated: true, EvalError: `the update document has no package "shop"`}},
		"not evaluated, source failing now": {DetailRow: readmodel.DetailRow{SourceURL: "https://shop.example/u.json", LastSuccessAt: ago(time.Hour),
			Evaluated: true, EvalError: "the document could not be evaluated for it", LastError: "fetch https://shop.example/u.json: unexpected http status 502 Bad Gateway",
			LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArgs: readmodel.FailureArgs{Status: 502}}},
	} {
		p.Layout, p.Code, p.Name, p.Installed = layout(calm(), true), "shop", "Shop", "0.9.1"
		shown := visibleText(doc(t, ComponentDetail(p)))
		for _, never := range []string{"No known advisory", "lists no releases", "comes from the last document"} {
			if strings.Contains(shown, never) {
				t.Errorf("%s: the page says %q:\n%s", name, never, shown)
			}
		}
		if !strings.Contains(shown, "nothing is known") {
			t.Errorf("%s: the page does not say that nothing is known:\n%s", name, shown)
		}
	}
}

// The detail page shows values as the rest of the AdminCP does: the update
// source as a URL that wraps at sensible points (URLLink), an empty
// release summary as "—", an advisory's affected range in words.
func TestDetailValuesInWords(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["detail"])

	src := one(t, root, "detail-source")
	links := findAll(src, func(n *html.Node) bool { return n.Data == "a" })
	if len(links) != 1 || text(links[0]) != "https://acme.example/updates.json" {
		t.Fatalf("update source = %q, want one link showing the URL", text(src))
	}
	if href, _ := attr(links[0], "href"); href != "https://acme.example/updates.json" {
		t.Errorf("update source links to %q", href)
	}
	if len(findAll(src, func(n *html.Node) bool { return hasClass(n, "url") })) != 1 ||
		len(findAll(src, func(n *html.Node) bool { return n.Data == "wbr" })) == 0 {
		t.Errorf("the update source does not wrap at sensible points (URLLink): %q", render(t, URLLink("x")))
	}

	for _, r := range byTestID(root, "release-row") {
		if v, _ := attr(r, "data-version"); v != "2.3.0" {
			continue
		}
		summary := findAll(r, func(n *html.Node) bool { v, _ := attr(n, "data-label"); return v == "Summary" })
		if len(summary) != 1 || !strings.HasPrefix(text(summary[0]), "—") {
			t.Errorf("2.3.0 has no summary; its cell says %q, want —", text(r))
		}
	}

	var affected string
	for _, a := range byTestID(root, "advisory-row") {
		if v, _ := attr(a, "data-id"); v == "ACME-2026-007" {
			affected = text(a)
		}
	}
	if !strings.Contains(affected, "Affects versions before 2.4.0") || strings.Contains(affected, "<2.4.0") {
		t.Errorf("ACME-2026-007 (affected <2.4.0) reads %q, want “Affects versions before 2.4.0”", affected)
	}
}
