package views

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// hasClass is whether n's class attribute names c.
func hasClass(n *html.Node, c string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), c)
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

// A webhook's signing secret, shown once, wraps on a phone as an API
// token's does (notice-secret).
func TestWebhookSecretWraps(t *testing.T) {
	t.Parallel()
	if n := one(t, doc(t, pages()["notifications"]), "notify-secret"); !hasClass(n, "notice-secret") {
		t.Error("the webhook secret's notice has no notice-secret class")
	}
}
