package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// What an offered update brings is a section of the detail page and a
// badge of the catalog's row, each signal worded by readmodel.SignalText,
// most pressing first; a script's text is escaped.
func TestPagesSayWhatAnUpdateBrings(t *testing.T) {
	t.Parallel()
	first := time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)
	released := first.Add(41 * time.Minute)
	signals := []readmodel.Signal{
		{Kind: readmodel.SignalInstallScript, Args: readmodel.SignalArgs{Version: "2.5.0", Name: "postinstall", Added: true,
			Text: `node -e "<script>alert(1)</script>"`, SHA256: strings.Repeat("a", 64)}},
		{Kind: readmodel.SignalYoungDependency, Args: readmodel.SignalArgs{Version: "2.5.0", Name: "plain-crypto-js",
			DependencyVersion: "4.2.1", FirstPublished: &first, Released: &released}},
	}
	p := npmDetail()
	p.Registry.Brings = signals
	root := doc(t, ComponentDetail(p))
	items := byTestID(root, "brings-signal")
	if len(items) != 2 {
		t.Fatalf("%d signals shown, want 2", len(items))
	}
	if got := text(items[0]); got != `2.5.0 adds a postinstall script: "node -e \"<script>alert(1)</script>\""` {
		t.Errorf("script: %q", got)
	}
	if got := text(items[1]); got != "2.5.0 adds plain-crypto-js 4.2.1, a package first published 41 minutes before this release" {
		t.Errorf("dependency: %q", got)
	}
	if strings.Contains(render(t, ComponentDetail(p)), "<script>alert") {
		t.Error("a script's text reaches the page unescaped")
	}
	p.Registry.Brings = nil
	if got := byTestID(doc(t, ComponentDetail(p)), "detail-brings"); len(got) != 0 {
		t.Error("the section is shown for an update that brings nothing")
	}
	// An added dependency whose age is not known is said so, never left
	// out: the section shows for it alone.
	p.Registry.BringsUnread = []readmodel.UnreadDependency{{Version: "2.5.0", Name: "left-pad", Section: "dependencies",
		Spec: "^1.3.0", Reason: readmodel.UnreadPastBound}}
	unread := byTestID(doc(t, ComponentDetail(p)), "brings-unread")
	if len(unread) != 1 || text(unread[0]) != `2.5.0 adds left-pad ("^1.3.0"), a package whose age is not known: `+
		"the check had read as many dependencies' documents as it may; a later check reads it" {
		t.Errorf("unread dependency: %d shown", len(unread))
		for _, u := range unread {
			t.Log(text(u))
		}
	}
	// So is a version whose provenance's repository was not compared,
	// and a provenance naming another repository is said with both.
	p.Registry.BringsUnread = nil
	p.Registry.ProvenanceUnread = []readmodel.ProvenanceUnread{{Version: "2.5.0", Reason: readmodel.ProvenanceFailed}}
	p.Registry.Brings = []readmodel.Signal{{Kind: readmodel.SignalProvenanceRepository, Args: readmodel.SignalArgs{Version: "2.5.0",
		Repository: "https://git.example.test/evil/blog", PackageRepository: "https://git.example.test/acme/blog"}}}
	page := doc(t, ComponentDetail(p))
	prov := byTestID(page, "provenance-unread")
	if len(prov) != 1 || text(prov[0]) != "2.5.0 was published with provenance; the repository it names was not compared with the package's: "+
		"its attestation bundle could not be read" {
		t.Errorf("provenance not read: %d shown", len(prov))
	}
	if s := byTestID(page, "brings-signal"); len(s) != 1 || text(s[0]) != "2.5.0's provenance says it was built from "+
		"https://git.example.test/evil/blog, not from the package's repository https://git.example.test/acme/blog" {
		t.Errorf("provenance repository: %d shown", len(s))
	}

	rows := []readmodel.CatalogRow{{Code: "acme-blog", Name: "Blog", Installed: "2.3.0", SourceURL: "npm:@acme/blog",
		SourceKind: readmodel.SourceNpm, Package: "@acme/blog", Evaluated: true, LastSuccessAt: ago(0), UpdateAvailable: true,
		UpdateVersion: "2.5.0", Brings: signals}}
	status := text(one(t, doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Rows: rows, Page: 1, Total: 1})), "catalog-status"))
	if !strings.Contains(status, `Update brings: 2.5.0 adds a postinstall script`) || !strings.Contains(status, "(and 1 more)") {
		t.Errorf("catalog row: %q", status)
	}
}
