package views

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The markup's guarantees: the CSP, landmarks, times, paths and words of outcomes.

// TestCSP: nothing the Content-Security-Policy would block, nothing
// javascript: — scripts come from files, styles from the stylesheet.
func TestCSP(t *testing.T) {
	t.Parallel()
	for name, c := range pages() {
		root := doc(t, c)
		walk(root, func(n *html.Node) {
			if n.Type != html.ElementNode {
				return
			}
			switch n.Data {
			case "script":
				if src, ok := attr(n, "src"); !ok || src == "" || n.FirstChild != nil {
					t.Errorf("%s: inline script", name)
				}
			case "style":
				t.Errorf("%s: <style> element", name)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Errorf("%s: inline event handler %s on <%s>", name, a.Key, n.Data)
				}
				if a.Key == "style" {
					t.Errorf("%s: style attribute on <%s>", name, n.Data)
				}
				if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
					t.Errorf("%s: javascript: URL in %s", name, a.Key)
				}
			}
		})
	}
}

// TestLandmarks: every page has a skip link to <main>, one h1 and labelled
// inputs; signed-in pages have a header and a labelled navigation.
func TestLandmarks(t *testing.T) {
	t.Parallel()
	for name, c := range pages() {
		root := doc(t, c)
		skip := findAll(root, func(n *html.Node) bool { h, _ := attr(n, "href"); return n.Data == "a" && h == "#main" })
		mains := findAll(root, func(n *html.Node) bool { id, _ := attr(n, "id"); return n.Data == "main" && id == "main" })
		if len(skip) != 1 || len(mains) != 1 {
			t.Errorf("%s: %d skip links, %d <main id=main>", name, len(skip), len(mains))
		}
		if h1 := findAll(root, func(n *html.Node) bool { return n.Data == "h1" }); len(h1) != 1 {
			t.Errorf("%s: %d h1", name, len(h1))
		}
		if len(findAll(root, func(n *html.Node) bool { return n.Data == "header" })) != 1 {
			t.Errorf("%s: no header", name)
		}
		ids := map[string]bool{}
		for _, n := range findAll(root, func(n *html.Node) bool { _, ok := attr(n, "id"); return ok }) {
			id, _ := attr(n, "id")
			if ids[id] {
				t.Errorf("%s: duplicate id %q", name, id)
			}
			ids[id] = true
		}
		labels := map[string]bool{}
		for _, l := range findAll(root, func(n *html.Node) bool { return n.Data == "label" }) {
			f, _ := attr(l, "for")
			labels[f] = true
		}
		for _, in := range findAll(root, func(n *html.Node) bool { return n.Data == "input" }) {
			if typ, _ := attr(in, "type"); typ == "hidden" {
				continue
			}
			if id, _ := attr(in, "id"); !labels[id] {
				t.Errorf("%s: input %q has no label", name, id)
			}
		}
	}
	signedIn := doc(t, pages()["catalog"])
	navs := findAll(signedIn, func(n *html.Node) bool { l, _ := attr(n, "aria-label"); return n.Data == "nav" && l == "Main" })
	if len(navs) != 1 {
		t.Fatalf("no main navigation")
	}
	current := findAll(navs[0], func(n *html.Node) bool { v, _ := attr(n, "aria-current"); return v == "page" })
	if len(current) != 1 || !strings.HasPrefix(text(current[0]), "Plugins") {
		t.Errorf("catalog does not mark Plugins as the current page")
	}
	meta := findAll(signedIn, func(n *html.Node) bool { nm, _ := attr(n, "name"); return n.Data == "meta" && nm == "csrf-token" })
	if len(meta) != 1 {
		t.Fatal("no csrf-token meta")
	}
	if v, _ := attr(meta[0], "content"); v != "csrf-TOKEN-123" {
		t.Errorf("csrf-token meta %q", v)
	}
}

// TestTimes: relative times from LayoutProps.Now, exact time in datetime.
func TestTimes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{59 * time.Minute, "59 minutes ago"},
		{3 * time.Hour, "3 hours ago"},
		{47 * time.Hour, "1 day ago"},
		{72 * time.Hour, "3 days ago"},
		{40 * 24 * time.Hour, "20 Oct 2026"},
		{-30 * time.Second, "in under a minute"},
		{-30 * 24 * time.Hour, "29 Dec 2026"},
		{-2 * 24 * time.Hour, "in 2 days"},
	} {
		if got := readmodel.AgoText(now, now.Add(-tc.d)); got != tc.want {
			t.Errorf("%v ago: %q, want %q", tc.d, got, tc.want)
		}
	}
	root := doc(t, pages()["dashboard"])
	times := findAll(one(t, root, "widget-last-check"), func(n *html.Node) bool { return n.Data == "time" })
	if len(times) != 1 {
		t.Fatal("no <time> in the last check")
	}
	if dt, _ := attr(times[0], "datetime"); dt != "2026-11-29T09:00:00Z" {
		t.Errorf("datetime %q", dt)
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		ComponentPath("blog"):                                    "/admin/plugins/blog",
		ComponentPath("a b/c"):                                   "/admin/plugins/a%20b%2Fc",
		AdvisoryDismissPath("", "blog", "GHSA-1"):                "/admin/plugins/blog/advisories/GHSA-1/dismiss",
		AdvisoryUndismissPath("", "blog", "GHSA-1"):              "/admin/plugins/blog/advisories/GHSA-1/undismiss",
		AdvisoryDismissPath("acme", "blog", "GHSA-1"):            "/sites/acme/plugins/blog/advisories/GHSA-1/dismiss",
		SiteComponentPath("acme", "a b/c"):                       "/sites/acme/plugins/a%20b%2Fc",
		SiteCatalogPath("acme", "", "", 1):                       "/sites/acme/plugins",
		SiteCatalogPath("acme", readmodel.FilterSecurity, "", 2): "/sites/acme/plugins?page=2&status=security",
		ComponentSkipPath("acme", "blog"):                        "/sites/acme/plugins/blog/skip",
		ComponentApprovePath("acme", "blog"):                     "/sites/acme/plugins/blog/approve",
		CatalogPath("", "", 1):                                   "/admin/plugins",
		CatalogPath(readmodel.FilterSecurity, "", 0):             "/admin/plugins?status=security",
		CatalogPath(readmodel.FilterUpdates, "a&b", 2):           "/admin/plugins?page=2&q=a%26b&status=updates",
		CatalogPath("", "", 3):                                   "/admin/plugins?page=3",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// TestDefaultAsset: without an Asset function the pages link the
// fingerprinted static files.
func TestDefaultAsset(t *testing.T) {
	t.Parallel()
	out := render(t, ErrorPage(ErrorProps{Status: 500}))
	if !regexp.MustCompile(`href="/static/css/app\.[0-9a-f]{12}\.css"`).MatchString(out) {
		t.Errorf("stylesheet not fingerprinted:\n%s", out)
	}
	if !strings.Contains(out, "Something went wrong") {
		t.Errorf("500 page without default title")
	}
}
