package views

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// goish are fragments of Go error strings that no operator should have to
// read on a page (they may sit behind a "Technical detail" disclosure).
var goish = []string{"dial tcp", "context deadline exceeded", "x509:", "fetch http", "unexpected http status",
	"connect: connection refused", "SQLSTATE", "lease lost"}

// visibleText is what a page shows before anything is unfolded: the text
// outside <details>, plus each <details>' <summary>.
func visibleText(n *html.Node) string {
	var b strings.Builder
	var visit func(n *html.Node, folded bool)
	visit = func(n *html.Node, folded bool) {
		switch {
		case n.Type == html.TextNode && !folded:
			b.WriteString(n.Data + " ")
		case n.Type == html.ElementNode && n.Data == "details":
			folded = true
		case n.Type == html.ElementNode && n.Data == "summary":
			folded = false
		case n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style"):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, folded)
		}
	}
	visit(n, false)
	return strings.Join(strings.Fields(b.String()), " ")
}

// Pages that show stored failures, each with the raw errors a check or a
// delivery really records: the catalog, a component, the sources, the
// history and the notifications. None shows Go's words; the detail is one
// click away.
func TestNoGoErrorOnAnyPage(t *testing.T) {
	t.Parallel()
	refused := "fetch http://10.0.0.7/u.json: dial tcp 10.0.0.7:80: connect: connection refused"
	deadline := "fetch https://slow.example/u.json: request timed out after 15s: context deadline exceeded"
	cert := "fetch https://self.example/u.json: tls: failed to verify certificate: x509: certificate signed by unknown authority"
	status := "fetch https://acme.example/u.json: unexpected http status 503 Service Unavailable"
	for name, c := range map[string]templ.Component{
		"catalog": Catalog(CatalogProps{Layout: layout(attention(), true), Page: 1, Total: 3, Rows: []readmodel.CatalogRow{
			{Code: "shop", Name: "Shop", Installed: "0.9.1", SourceURL: "http://10.0.0.7/u.json", Stale: true,
				LastError: refused, LastErrorKind: string(readmodel.ErrorConnect), LastAttemptAt: ago(time.Minute)},
			{Code: "slow", Name: "Slow", Installed: "1.0.0", SourceURL: "https://slow.example/u.json", Stale: true,
				LastError: deadline, LastErrorKind: string(readmodel.ErrorTimeout), LastErrorArgs: readmodel.FailureArgs{Timeout: 15 * time.Second}},
			{Code: "old", Name: "Old", Installed: "1.0.0", SourceURL: "https://old.example/u.json", Stale: true,
				LastError: "fetch https://old.example/u.json: EOF"}, // recorded before kinds were
		}}),
		"detail": ComponentDetail(DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "self", Name: "Self",
			Installed: "1.0.0", SourceURL: "https://self.example/u.json", Stale: true, LastError: cert, LastErrorKind: string(readmodel.ErrorTLS)}}),
		"sources": SourceHealth(SourceHealthProps{Layout: layout(attention(), true), Sources: []readmodel.SourceRow{
			{URL: "https://acme.example/u.json", Components: 3, Failing: true, ConsecutiveFailures: 2, LastError: status,
				LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArgs: readmodel.FailureArgs{Status: 503}, SignatureState: "unsigned"},
			{URL: "http://10.0.0.7/u.json", Components: 1, Failing: true, ConsecutiveFailures: 1, SignatureState: "unsigned",
				LastError:     "fetch http://10.0.0.7/u.json: dial tcp 10.0.0.7:80: refusing to connect to a private address 10.0.0.7",
				LastErrorKind: string(readmodel.ErrorPrivateAddress), LastErrorArgs: readmodel.FailureArgs{Address: "10.0.0.7"}},
		}}),
		"history": History(HistoryProps{Layout: layout(calm(), true), Runs: []readmodel.RunRow{
			{ID: 2, Trigger: "scheduled", Actor: "cron", Status: "failed", StartedAt: now.Add(-time.Hour), FinishedAt: ago(time.Hour),
				Error: "write source: ERROR: canceling statement due to statement timeout (SQLSTATE 57014)"},
			{ID: 1, Trigger: "scheduled", Actor: "cron", Status: "lease_lost", StartedAt: now.Add(-2 * time.Hour),
				FinishedAt: ago(2 * time.Hour), Error: "lease lost"},
		}}),
	} {
		root := doc(t, c)
		shown := visibleText(root)
		for _, g := range goish {
			if strings.Contains(shown, g) {
				t.Errorf("%s shows %q:\n%s", name, g, shown)
			}
		}
		// The technical text is still there, folded away.
		if all := text(root); !strings.Contains(all, "Technical detail") {
			t.Errorf("%s has no technical detail to unfold", name)
		}
	}
}

// hasClass is whether n's class attribute names c.
func hasClass(n *html.Node, c string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), c)
}
