package views

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The catalog marks a deprecated installed version (with the publisher's
// message, escaped and cut) and a trust downgrade; neither reads as "Up to
// date".
func TestCatalogMarksDeprecatedAndTrustDowngrade(t *testing.T) {
	t.Parallel()
	rows := []readmodel.CatalogRow{
		{Code: "acme-old", Name: "Old", Installed: "1.0.0", SourceURL: "npm:@acme/old", SourceKind: readmodel.SourceNpm,
			Package: "@acme/old", Evaluated: true, LastSuccessAt: ago(0), Deprecated: "<b>gone</b> use @acme/new" + strings.Repeat(" x", 200)},
		{Code: "acme-blog", Name: "Blog", Installed: "2.3.0", SourceURL: "npm:@acme/blog", SourceKind: readmodel.SourceNpm,
			Package: "@acme/blog", Evaluated: true, LastSuccessAt: ago(0), UpdateAvailable: true, UpdateVersion: "2.5.0",
			ProvenanceLost: "2.5.0"},
	}
	page := render(t, Catalog(CatalogProps{Layout: layout(calm(), true), Rows: rows, Page: 1, Total: 2}))
	root := doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Rows: rows, Page: 1, Total: 2}))
	got := byTestID(root, "catalog-status")
	old, blog := text(got[0]), text(got[1])
	if !strings.Contains(old, "Deprecated") || strings.Contains(old, "Up to date") {
		t.Errorf("deprecated row's status: %q", old)
	}
	msg := text(one(t, root, "catalog-deprecated"))
	if !strings.HasPrefix(msg, "Deprecated by its publisher: <b>gone</b> use @acme/new") || len([]rune(msg)) > 230 || !strings.HasSuffix(msg, "…") {
		t.Errorf("deprecation line %q", msg)
	}
	if strings.Contains(page, "<b>gone") {
		t.Error("the publisher's message is not escaped")
	}
	if !strings.Contains(blog, "Trust downgrade: 2.5.0 lost provenance") {
		t.Errorf("trust downgrade row's status: %q", blog)
	}
	if rowState(rows[0]) != rowProblem {
		t.Errorf("the deprecated row's state is %s, want %s", rowState(rows[0]), rowProblem)
	}
}
