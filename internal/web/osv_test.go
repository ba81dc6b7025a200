package web_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/web"
)

// The catalog finds a component by the CVE id of an advisory affecting
// it, and its page shows the score next to the vector and the alias's
// public record where the operator's advisory links say (the demo's blog:
// ACME-2026-007, CVE-2026-99007).
func TestCatalogSearchByCVEAndDetailScore(t *testing.T) {
	t.Parallel()
	b := setup(t, func(_ *bundle, d *web.Deps) {
		d.AdvisoryLinks = readmodel.AdvisoryLinks{{Prefix: "CVE-", Template: "https://cve.example/record?id={id}"}}
	})
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	page := admin.do("GET", "/admin/plugins?q="+url.QueryEscape("cve-2026-99007"), "", "", nil)
	wantStatus(t, "catalog search", page, 200)
	rows := regexp.MustCompile(`data-testid="catalog-row" data-code="([^"]*)"`).FindAllStringSubmatch(page.body, -1)
	if len(rows) != 1 || rows[0][1] != "blog" {
		t.Errorf("search by CVE id finds %v, want blog alone", rows)
	}
	api := admin.do("GET", "/api/admin/plugins/updates?q=CVE-2026-99007", "", "", nil)
	wantStatus(t, "catalog API search", api, 200)
	if !strings.Contains(api.body, `"code":"blog"`) || strings.Contains(api.body, `"code":"gallery"`) {
		t.Errorf("API search by CVE id: %s", api.body)
	}
	detail := admin.do("GET", "/admin/plugins/blog", "", "", nil)
	wantStatus(t, "detail", detail, 200)
	for _, want := range []string{
		"8.7 high · CVSS:3.1/AV:N/AC:L/PR:L/UI:R/S:C/C:H/I:H/A:N",
		`<a href="https://cve.example/record?id=CVE-2026-99007" rel="noreferrer noopener" class="external">CVE-2026-99007</a>`,
		"Modified on 2026-11-20",
		"Fix: example.org/acme/blog-2.4.0",
	} {
		if !strings.Contains(detail.body, want) {
			t.Errorf("the detail page lacks %q", want)
		}
	}
}
