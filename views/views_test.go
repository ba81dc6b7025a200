package views

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// now is the fixed clock of every render.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) *time.Time {
	t := now.Add(-d)
	return &t
}

func in(d time.Duration) *time.Time {
	t := now.Add(d)
	return &t
}

// testAsset keeps golden files independent of the static files' hashes.
func testAsset(name string) string { return "/static/" + name }

func layout(s readmodel.Summary, canManage bool) LayoutProps {
	role := "viewer"
	if canManage {
		role = "admin"
	}
	return LayoutProps{
		User:      User{Email: "ops@example.org", Role: role, CanManage: canManage},
		CSRFToken: "csrf-TOKEN-123",
		Summary:   s,
		Asset:     testAsset,
		Now:       now,
	}
}

// attention is a summary with everything to report.
func attention() readmodel.Summary {
	return readmodel.Summary{
		Components: 5, UpdatesAvailable: 3, Waiting: 1, SecurityUpdates: 2, Vulnerable: 1,
		FailingSources: 1, UntrustedSources: 2, UnsignedSources: 3, Stale: 2, NotificationsFailing: 2,
		OldestSuccessAt: ago(72 * time.Hour),
		LastCheck:       &readmodel.LastCheck{Status: "completed", Trigger: "manual", FinishedAt: ago(3 * time.Hour)},
		Attention:       attentionFixture(), AttentionTotal: len(attentionFixture()),
		OldestSecuritySince: ago(72 * time.Hour), OldestSecuritySeconds: 72 * 3600,
		NextCheckAt: in(16*time.Hour + 17*time.Minute),
		// An OSV feed was read: no known malicious package is a fact.
		Malicious: new(int), MalwareReadAt: ago(6 * time.Hour),
		// The KEV catalogue was read: nothing exploited is a fact.
		KnownExploited: new(int), ExploitedReadAt: ago(5 * time.Hour),
		// The lockfile's tree was read.
		TreePackages: ptr(212), TreeReadAt: ago(3 * time.Hour),
	}
}

// calm is a summary with nothing to report.
func calm() readmodel.Summary {
	return readmodel.Summary{
		Components:      4,
		OldestSuccessAt: ago(5 * time.Hour),
		LastCheck:       &readmodel.LastCheck{Status: "completed", Trigger: "scheduled", FinishedAt: ago(5 * time.Hour)},
		Attention:       []readmodel.AttentionItem{},
		NextCheckAt:     in(4*time.Hour + 17*time.Minute),
	}
}

func catalogRows() []readmodel.CatalogRow {
	return []readmodel.CatalogRow{
		{Code: "blog", Name: "Blog", Installed: "2.3.0", Latest: "2.4.0", UpdateVersion: "2.4.0",
			UpdateAvailable: true, Security: true, Vulnerable: true, SecuritySince: ago(72 * time.Hour),
			ReleaseURL: "https://acme.example/blog/2.4.0", SourceURL: "https://acme.example/updates.json",
			LastSuccessAt: ago(3 * time.Hour), LastAttemptAt: ago(3 * time.Hour), Evaluated: true},
		{Code: "gallery", Name: "Gallery", Installed: "1.0.0", Latest: "1.2.0", Security: true,
			NeedsNewerCore: true, RequiredCore: ">=2.0.0", Vulnerable: true, VulnerableNoFix: true, SecuritySince: ago(2 * time.Hour),
			SourceURL: "https://acme.example/updates.json", LastSuccessAt: ago(3 * time.Hour), Evaluated: true},
		{Code: "forum", Name: "Forum", Installed: "3.1.0", Latest: "3.1.0",
			SourceURL: "https://forum.example/feed.json", LastSuccessAt: ago(50 * time.Hour),
			LastAttemptAt: ago(3 * time.Hour), LastError: "fetch: 503 Service Unavailable", Stale: true, Evaluated: true,
			LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArgs: readmodel.FailureArgs{Status: 503}},
		{Code: "core", Name: "Core", Installed: "1.9.0", Latest: "1.9.0",
			SourceURL: "https://updates.example.org/core.json", LastSuccessAt: ago(3 * time.Hour), Evaluated: true,
			Dismissed: 1, DismissedUntil: in(21 * 24 * time.Hour)},
		{Code: "local", Name: "Local tweaks", Installed: "0.1.0"},
		{Code: "shop", Name: "Shop", Installed: "1.0.0", SourceURL: "https://shop.example/u.json"},
	}
}

// pages is every page with representative props, by golden file name.
func pages() map[string]templ.Component {
	return map[string]templ.Component{
		"login":       Login(LoginProps{Next: "/admin/plugins", CSRFToken: "csrf-TOKEN-123", Asset: testAsset}),
		"login_error": Login(LoginProps{Error: "Wrong email or password.", Email: "ops@example.org", Asset: testAsset}),
		"dashboard": Dashboard(DashboardProps{
			Layout: layout(attention(), true), CanManage: true,
			Flash:     CheckOutcomeMessage(CheckOutcome{Status: "completed_with_failures", Fetched: 3, NotModified: 1, Failed: 1}),
			FlashTone: CheckOutcomeTone("completed_with_failures"),
		}),
		"dashboard_viewer": Dashboard(DashboardProps{Layout: layout(calm(), false)}),
		"dashboard_never": Dashboard(DashboardProps{
			Layout: layout(readmodel.Summary{Components: 2, CheckRunning: true,
				NeverSucceeded: &readmodel.ComponentRef{Code: "shop", Name: "Shop"}}, true), CanManage: true,
		}),
		"catalog": Catalog(CatalogProps{
			Layout: layout(attention(), true), Rows: catalogRows(),
			Page: 3, PageSize: 6, Total: 3000,
			Counts: map[readmodel.Filter]int{readmodel.FilterAll: 3000, readmodel.FilterAttention: 3, readmodel.FilterUpdates: 3, readmodel.FilterSecurity: 2, readmodel.FilterVulnerable: 1, readmodel.FilterFailing: 1,
				readmodel.FilterStale: 1, readmodel.FilterDismissed: 1},
		}),
		"catalog_policy": Catalog(CatalogProps{
			Layout: layout(calm(), true), Rows: policyRows(), Page: 1, Total: 6,
			Counts: map[readmodel.Filter]int{readmodel.FilterAll: 6, readmodel.FilterUpdates: 2, readmodel.FilterWaiting: 1, readmodel.FilterSkipped: 1},
		}),
		"catalog_empty": Catalog(CatalogProps{
			Layout: layout(calm(), false), Filter: readmodel.FilterSecurity,
		}),
		"catalog_search": Catalog(CatalogProps{
			Layout: layout(calm(), false), Filter: readmodel.FilterUpdates, Query: "gal",
			Rows: catalogRows()[1:2], Page: 1, Total: 1,
		}),
		"detail": ComponentDetail(DetailProps{Layout: layout(attention(), true), DetailRow: readmodel.DetailRow{Code: "blog",
			Name: "Blog", Installed: "2.3.0", Latest: "2.5.0", Evaluated: true, SourceURL: "https://acme.example/updates.json",
			LastSuccessAt: ago(3 * time.Hour), UpdateAvailable: true, UpdateVersion: "2.4.0", Security: true, Vulnerable: true,
			VulnerableNoFix: true, NeedsNewerCore: true, CoreVersion: "1.9.0", SecuritySince: ago(72 * time.Hour)}, CanManage: true,
			SecurityRelease: &ReleaseRow{Version: "2.4.0", Security: true, Severity: "high", RequiresCore: ">=1.8.0"}, BlockedRelease: &ReleaseRow{Version: "2.5.0",
				RequiresCore: ">=2.0.0"}, Releases: []ReleaseRow{
				{Version: "2.5.0", Released: "2026-11-25", Summary: "New editor", RequiresCore: ">=2.0.0",
					URL: "https://acme.example/blog/2.5.0"},
				{Version: "2.4.0", Released: "2026-11-20", Security: true, Severity: "high",
					Summary: "Fixes stored XSS in comments", RequiresCore: ">=1.8.0", Installable: true,
					URL: "https://acme.example/blog/2.4.0"},
				{Version: "2.3.0", Released: "2026-10-01", Installable: true},
			}, Advisories: []AdvisoryRow{
				{ID: "ACME-2026-007", Severity: "critical", Summary: "Stored XSS in comments",
					URL: "https://acme.example/adv/7", Affected: "<2.4.0", FixedIn: "2.4.0", OSV: osvFixture()},
				{ID: "ACME-2026-009", Severity: "medium", Summary: "Open redirect", NoFix: true},
				{ID: "ACME-2025-101", Severity: "low", Summary: "Verbose errors", FixedIn: "2.4.0", Dismissed: true,
					Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now.Add(-26 * time.Hour),
						Reason: "Debug output is off in production", ExpiresAt: in(36 * time.Hour)}},
				{ID: "ACME-2025-102", Severity: "high", Summary: "Session fixation", Affected: "<2.5.0", FixedIn: "2.5.0",
					Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now.Add(-72 * time.Hour), Reason: "Single sign-on only",
						Changes: []AdvisoryChange{{ChangeSeverity, "medium", "high"}, {ChangeAffected, "<2.4.0", "<2.5.0"}, {ChangeFixedIn, "", "2.5.0"}}}},
			}, Withdrawn: []AdvisoryRow{{ID: "ACME-2026-004", Severity: "high", Summary: "Duplicate of ACME-2026-007",
				OSV: AdvisoryOSV{Aliases: []string{"GHSA-35c4-f3rq-f9g3"}, Withdrawn: "2026-11-02"}}}, DismissForm: DismissForm{AdvisoryID: "ACME-2026-009", Reason: "", Expires: "2026-11-01",
				Error: "The expiry date has passed. Pick today or a later day, or leave it empty to dismiss the advisory until someone restores it."}}),
		"detail_viewer": ComponentDetail(DetailProps{Layout: layout(calm(), false), DetailRow: readmodel.DetailRow{Code: "forum",
			Name: "Forum", Installed: "3.1.0", SourceURL: "https://forum.example/feed.json", LastSuccessAt: ago(50 * time.Hour),
			LastError: "fetch: 503 Service Unavailable", Stale: true, Evaluated: true, LastErrorKind: string(readmodel.ErrorHTTPStatus),
			LastErrorArgs: readmodel.FailureArgs{Status: 503}, Vulnerable: true, SecuritySince: ago(2 * time.Hour), CoreVersion: "1.9.0"},
			Advisories: []AdvisoryRow{{ID: "F-1", Severity: "high", Summary: "SQL injection", FixedIn: "3.2.0"}}}),
		"history": History(HistoryProps{Layout: layout(attention(), true), Runs: []readmodel.RunRow{
			{ID: 9, Trigger: "manual", Actor: "ops@example.org", Status: "running", StartedAt: now.Add(-20 * time.Second)},
			{ID: 8, Trigger: "manual", Actor: "ops@example.org", Status: "cooldown", StartedAt: now.Add(-time.Minute),
				FinishedAt: ago(time.Minute), Repeats: 7, FirstStartedAt: now.Add(-4 * time.Minute)},
			{ID: 7, Trigger: "manual", Actor: "ops@example.org", Status: "completed_with_failures", StartedAt: now.Add(-3 * time.Hour),
				FinishedAt: ago(3 * time.Hour), DurationMS: 4230, Fetched: 3, NotModified: 1, Failed: 1},
			{ID: 6, Trigger: "scheduled", Actor: "cron", Status: "skipped", StartedAt: now.Add(-5 * time.Hour)},
			{ID: 5, Trigger: "scheduled", Actor: "cron", Status: "busy", StartedAt: now.Add(-6 * time.Hour)},
			{ID: 4, Trigger: "scheduled", Actor: "cron", Status: "lease_lost", StartedAt: now.Add(-6 * time.Hour),
				FinishedAt: ago(6 * time.Hour), DurationMS: 301000, Fetched: 1, Skipped: 3, Unwritten: 1, Error: "lease lost"},
			{ID: 40, Trigger: "import", Actor: "ops@example.org", Status: "completed_with_failures", StartedAt: now.Add(-7 * time.Hour),
				FinishedAt: ago(7 * time.Hour), DurationMS: 40, Failed: 1,
				Error: "signature: bad signature: does not match the document and key ed25519:AAAA"},
			{ID: 39, Trigger: "operator", Actor: "cli", Status: "completed", StartedAt: now.Add(-8 * time.Hour),
				FinishedAt: ago(8 * time.Hour), DurationMS: 1200, Fetched: 2},
			{ID: 3, Trigger: "operator", Actor: "demo", Status: "cancelled", StartedAt: now.Add(-30 * time.Hour),
				FinishedAt: ago(30 * time.Hour), DurationMS: 850},
			{ID: 2, Trigger: "scheduled", Actor: "cron", Status: "failed", StartedAt: now.Add(-54 * time.Hour),
				FinishedAt: ago(54 * time.Hour), DurationMS: 120, Error: "database unreachable"},
			{ID: 1, Trigger: "scheduled", Actor: "cron", Status: "abandoned", StartedAt: now.Add(-80 * 24 * time.Hour)},
		}}),
		"history_empty":        History(HistoryProps{Layout: layout(calm(), false)}),
		"packages":             Packages(packagesProps()),
		"packages_not_checked": Packages(PackagesProps{Layout: layout(calm(), false)}),
		"package":              Package(packageProps()),
		"detail_npm":           ComponentDetail(npmDetail()),
		"detail_policy":        ComponentDetail(policyDetail()),
		"sources_npm":          SourceHealth(SourceHealthProps{Layout: layout(calm(), true), Sources: npmSources()}),
		"sources": SourceHealth(SourceHealthProps{Layout: layout(attention(), true), Sources: []readmodel.SourceRow{
			{URL: "https://acme.example/updates.json", Components: 2, LastSuccessAt: ago(3 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), ExpiresAt: in(30 * 24 * time.Hour), SignatureState: "verified",
				Pin: "ed25519:test", TrustedCount: 2, KeyVersion: 3, Sequence: seq(41), VerifiedBy: []string{"ab12cd34…ef01"}},
			{URL: "https://keys.example/feed.json", Components: 1, LastSuccessAt: ago(30 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), ExpiresAt: in(6*24*time.Hour + time.Hour), ExpiresSoon: true, SignatureState: "verified",
				Pin: "ed25519:test", TrustedCount: 3, Sequence: seq(12), VerifiedBy: []string{"0a1b2c3d…4e5f", "99887766…5544"},
				LastError: "the document does not verify under the keys trusted now, and key statement refused", Failing: true,
				ConsecutiveFailures: 1, LastErrorKind: string(readmodel.ErrorKeyStatement), LastErrorArgs: readmodel.FailureArgs{Statement: readmodel.StatementUnsigned}, Untrusted: true},
			{URL: "https://replay.example/feed.json", Components: 1, LastSuccessAt: ago(30 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), SignatureState: "unsigned", Sequence: seq(11), Failing: true, ConsecutiveFailures: 1,
				LastError: "update document rolled back", LastErrorKind: string(readmodel.ErrorRollback), LastErrorArgs: readmodel.RollbackArgs(9, 11), Untrusted: true,
				Unsigned: true},
			{URL: "https://old.example/feed.json", Components: 1, LastSuccessAt: ago(3 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), ExpiresAt: ago(24 * time.Hour), SignatureState: "unsigned",
				Stale: true, Expired: true, Unsigned: true},
			{URL: "https://new.example/feed.json", Components: 1, SignatureState: "unsigned", Unsigned: true},
			{URL: "https://forum.example/feed.json", Components: 1, LastSuccessAt: ago(50 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), LastError: "fetch: 503 Service Unavailable",
				ConsecutiveFailures: 3, Stale: true, Failing: true, SignatureState: "unsigned",
				LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArgs: readmodel.FailureArgs{Status: 503}, Unsigned: true},
			{URL: "offline:acme-mirror", Components: 2, Offline: true, SignatureState: "unsigned", Unsigned: true},
			{URL: "offline:forum", Components: 1, Offline: true, LastSuccessAt: ago(20 * 24 * time.Hour),
				LastAttemptAt: ago(20 * 24 * time.Hour), ExpiresAt: in(10 * 24 * time.Hour), SignatureState: "verified",
				Pin: "ed25519:test", TrustedCount: 1, Sequence: seq(7), VerifiedBy: []string{"5e6f7a8b…9c0d"}},
		}}),
		"source_import": SourceImport(SourceImportProps{Layout: layout(calm(), true), MaxBytes: 2 << 20,
			Source: readmodel.SourceRow{URL: "offline:forum", Components: 1, Offline: true, LastSuccessAt: ago(20 * 24 * time.Hour),
				ExpiresAt: in(10 * 24 * time.Hour), SignatureState: "verified"},
			Outcome: &ImportOutcome{Status: "refused", Kind: string(readmodel.ErrorRollback), Args: readmodel.RollbackArgs(41, 42),
				Detail: "update document rolled back: sequence 41 is lower than the stored sequence 42"}}),
		"notifications": Notifications(NotificationsProps{
			Layout: layout(attention(), true), CanManage: true, MayChooseLocal: true, NewSecret: "whsec_c2VjcmV0",
			Notice: "Channel added; 2 outstanding events are on their way to it.",
			Channels: []readmodel.ChannelRow{
				{ID: 1, Name: "Ops", Kind: "webhook", Target: "https://hooks.example/upcheck", Events: "security", Enabled: true},
				{ID: 2, Name: "chat", Kind: "slack", Target: "https://chat.example/hooks/x", Events: "all",
					DisabledReason: "the receiver answered 410 Gone: it no longer accepts these notifications"},
			},
			Deliveries: []readmodel.DeliveryRow{
				{ID: uuid.MustParse("0b7a2f7e-5c1e-4c55-9d55-000000000001"), ChannelName: "Ops", Type: "security_update.available",
					Key: "security_update.available:blog@2.4.0", State: "delivered", Attempts: 1, LastAttemptAt: ago(time.Hour)},
				{ID: uuid.MustParse("0b7a2f7e-5c1e-4c55-9d55-000000000002"), ChannelName: "Ops", Type: "advisory.unfixed",
					Key: "advisory.unfixed:gallery@3.0.0/ACME-2", State: "failed", Attempts: 8, LastAttemptAt: ago(2 * time.Hour),
					LastError: "the receiver answered 503 Service Unavailable"},
				{ID: uuid.MustParse("0b7a2f7e-5c1e-4c55-9d55-000000000003"), ChannelName: "chat", Type: "update.available",
					Key: "update.available:forms@1.1.0", State: "pending", Attempts: 2, LastAttemptAt: ago(time.Minute),
					NextAttemptAt: in(9 * time.Minute), LastError: "not sent: post https://chat.example/hooks/x: no answer within 15s"},
			},
		}),
		"audit_empty": Audit(AuditProps{Layout: auditLayout(), Kind: string(readmodel.AuditKindCheck), Page: 1}),
		"audit": Audit(AuditProps{Layout: auditLayout(), Kind: "", Page: 2, PageSize: 4, Total: 9, Rows: []readmodel.AuditRow{
			{At: now.Add(-time.Hour), Kind: string(readmodel.AuditKindDismissal), Action: "advisory.dismiss", Actor: "ada@example.org",
				Component: "gallery", Advisory: "ACME-2026-011", Reason: "Metadata is stripped by the CDN", ExpiresAt: in(48 * time.Hour)},
			{At: now.Add(-2 * time.Hour), Kind: string(readmodel.AuditKindDismissal), Action: "advisory.expire", Component: "blog",
				Advisory: "ACME-2025-101", Reason: "Debug output is off"},
			{At: now.Add(-3 * time.Hour), Kind: string(readmodel.AuditKindCheck), Action: "check", Actor: "cron", Trigger: "scheduled",
				Status: "completed", DetailText: "3 fetched, 1 unchanged, 1 failed"},
			{At: now.Add(-4 * time.Hour), Kind: string(readmodel.AuditKindAccount), Action: "token.create", Actor: "ada@example.org", DetailText: "name: ci, token id: 3"},
			{At: now.Add(-5 * time.Hour), Kind: string(readmodel.AuditKindCheck), Action: "check", Actor: "cli", Trigger: "operator",
				Status: "completed", DetailText: "2 fetched, 0 unchanged, 0 failed"},
		}}),
		"notifications_viewer": Notifications(NotificationsProps{Layout: layout(calm(), false)}),
		"tokens":               Tokens(tokensProps()),
		"tokens_empty":         Tokens(tokensEmptyProps()),
		"error_404":            ErrorPage(ErrorProps{Status: 404, Message: "Not Found", Asset: testAsset}),
		"error_503":            ErrorPage(ErrorProps{Status: 503, Asset: testAsset}),
		"error_403":            ErrorPage(ErrorProps{Status: 403, Title: "Not for viewers", Message: "Only administrators can dismiss advisories.", Asset: testAsset}),
	}
}

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	return b.String()
}

// TestGolden compares every page, pretty-printed (prettyHTML), with
// testdata/<name>.golden.html: its title, its active navigation link and
// its <main> (pageGolden); the frame around them is held once, by
// TestLayoutGolden. Run `go test ./views -update` to rewrite them after a
// deliberate change.
func TestGolden(t *testing.T) {
	t.Parallel()
	for name, c := range pages() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := prettyHTML(render(t, c))
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, name, pageGolden(t, got))
		})
	}
}

// TestLayoutGolden holds the frame every page shares, once: the signed-in
// layout (with every banner) and the bare frame of login and error pages,
// each around a placeholder <main>.
func TestLayoutGolden(t *testing.T) {
	t.Parallel()
	placeholder := templ.Raw("<p>the page</p>")
	p := layout(attention(), true)
	p.Title, p.Nav = "A page", NavPlugins
	p.User.CanManageTokens, p.User.CanAudit = true, true
	signedIn, err := prettyHTML(render(t, Layout(p, placeholder)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := bare("A page", testAsset).Render(templ.WithChildren(context.Background(), placeholder), &b); err != nil {
		t.Fatal(err)
	}
	bareFrame, err := prettyHTML(b.String())
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, "layout", "<!-- signed in -->\n"+signedIn+"<!-- bare -->\n"+bareFrame)
}

// pageGolden is the part of a page that is the page's own: its <title>, the
// navigation link marked current (when there is one) and its <main>,
// un-indented.
func pageGolden(t *testing.T, pretty string) string {
	t.Helper()
	lines := strings.Split(pretty, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l := strings.TrimSpace(l); strings.HasPrefix(l, "<title>") || strings.Contains(l, `aria-current="page"`) {
			b.WriteString(l + "\n")
		}
	}
	begin := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "<main ") })
	if begin < 0 {
		t.Fatal("the page has no <main>")
	}
	indent := lines[begin][:len(lines[begin])-len(strings.TrimLeft(lines[begin], " "))]
	end := slices.Index(lines[begin:], indent+"</main>")
	if end < 0 {
		t.Fatal("the page's <main> is not closed")
	}
	for _, l := range lines[begin : begin+end+1] {
		b.WriteString(strings.TrimPrefix(l, indent) + "\n")
	}
	return b.String()
}

// compareGolden compares got with testdata/<name>.golden.html, or writes
// it there under -update.
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.html")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./views -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test ./views -update after a deliberate change)\n%s",
			path, lineDifference(string(want), got))
	}
}

// doc parses a render, so the assertions below see elements and
// attributes the way a browser does.
func doc(t *testing.T, c templ.Component) *html.Node {
	t.Helper()
	n, err := html.Parse(strings.NewReader(render(t, c)))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return n
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func findAll(root *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(root, func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	})
	return out
}

func byTestID(root *html.Node, id string) []*html.Node {
	return findAll(root, func(n *html.Node) bool {
		v, _ := attr(n, "data-testid")
		return v == id
	})
}

func one(t *testing.T, root *html.Node, id string) *html.Node {
	t.Helper()
	ns := byTestID(root, id)
	if len(ns) != 1 {
		t.Fatalf("want one data-testid=%q, found %d", id, len(ns))
	}
	return ns[0]
}

var space = regexp.MustCompile(`\s+`)

// text is a node's text content with whitespace collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
	})
	return strings.TrimSpace(space.ReplaceAllString(b.String(), " "))
}

func hidden(n *html.Node) bool {
	_, ok := attr(n, "hidden")
	return ok
}

func seq(n int64) *int64 { return &n }
