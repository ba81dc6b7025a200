package views

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
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
		Components: 5, UpdatesAvailable: 3, SecurityUpdates: 2, Vulnerable: 1,
		FailingSources: 1, Stale: 2, NotificationsFailing: 2,
		OldestSuccessAt:     ago(72 * time.Hour),
		LastCheck:           &readmodel.LastCheck{Status: "completed", Trigger: "manual", FinishedAt: ago(3 * time.Hour)},
		Attention:           attentionFixture(),
		OldestSecuritySince: ago(72 * time.Hour), OldestSecuritySeconds: 72 * 3600,
		NextCheckAt: in(16*time.Hour + 17*time.Minute),
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

func catalogRows() []CatalogRow {
	return []CatalogRow{
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
			LastErrorKind: readmodel.ErrorHTTPStatus, LastErrorArg: "503"},
		{Code: "core", Name: "Core", Installed: "1.9.0", Latest: "1.9.0",
			SourceURL: "https://updates.example.org/core.json", LastSuccessAt: ago(3 * time.Hour), Evaluated: true},
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
			Counts: map[string]int{FilterAll: 3000, FilterAttention: 3, FilterUpdates: 3, FilterSecurity: 2, FilterVulnerable: 1, FilterFailing: 1},
		}),
		"catalog_empty": Catalog(CatalogProps{
			Layout: layout(calm(), false), Filter: FilterSecurity,
		}),
		"catalog_search": Catalog(CatalogProps{
			Layout: layout(calm(), false), Filter: FilterUpdates, Query: "gal",
			Rows: catalogRows()[1:2], Page: 1, Total: 1,
		}),
		"detail": ComponentDetail(DetailProps{
			Layout: layout(attention(), true), CanManage: true,
			Code: "blog", Name: "Blog", Installed: "2.3.0", Latest: "2.5.0", Evaluated: true,
			SourceURL: "https://acme.example/updates.json", LastSuccessAt: ago(3 * time.Hour),
			UpdateAvailable: true, UpdateVersion: "2.4.0", Security: true, Vulnerable: true, VulnerableNoFix: true,
			NeedsNewerCore: true, CoreInstalled: "1.9.0", SecurityInstallable: true, SecuritySince: ago(72 * time.Hour),
			SecurityRelease: &ReleaseRow{Version: "2.4.0", Security: true, Severity: "high", RequiresCore: ">=1.8.0"},
			BlockedRelease:  &ReleaseRow{Version: "2.5.0", RequiresCore: ">=2.0.0"},
			Releases: []ReleaseRow{
				{Version: "2.5.0", Released: "2026-11-25", Summary: "New editor", RequiresCore: ">=2.0.0",
					URL: "https://acme.example/blog/2.5.0"},
				{Version: "2.4.0", Released: "2026-11-20", Security: true, Severity: "high",
					Summary: "Fixes stored XSS in comments", RequiresCore: ">=1.8.0", Installable: true,
					URL: "https://acme.example/blog/2.4.0"},
				{Version: "2.3.0", Released: "2026-10-01", Installable: true},
			},
			Advisories: []AdvisoryRow{
				{ID: "ACME-2026-007", Severity: "critical", Summary: "Stored XSS in comments",
					URL: "https://acme.example/adv/7", Affected: "<2.4.0", FixedIn: "2.4.0"},
				{ID: "ACME-2026-009", Severity: "medium", Summary: "Open redirect", NoFix: true},
				{ID: "ACME-2025-101", Severity: "low", Summary: "Verbose errors", FixedIn: "2.4.0", Dismissed: true,
					Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now.Add(-26 * time.Hour),
						Reason: "Debug output is off in production", ExpiresAt: in(36 * time.Hour)}},
				{ID: "ACME-2025-102", Severity: "high", Summary: "Session fixation", Affected: "<2.5.0", FixedIn: "2.5.0",
					Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now.Add(-72 * time.Hour), Reason: "Single sign-on only",
						Changes: []AdvisoryChange{{ChangeSeverity, "medium", "high"}, {ChangeAffected, "<2.4.0", "<2.5.0"}, {ChangeFixedIn, "", "2.5.0"}}}},
			},
			DismissForm: DismissForm{AdvisoryID: "ACME-2026-009", Reason: "", Expires: "2026-11-01",
				Error: "The expiry date has passed. Pick today or a later day, or leave it empty to dismiss the advisory until someone restores it."},
		}),
		"detail_viewer": ComponentDetail(DetailProps{
			Layout: layout(calm(), false), Code: "forum", Name: "Forum", Installed: "3.1.0",
			SourceURL: "https://forum.example/feed.json", LastSuccessAt: ago(50 * time.Hour),
			LastError: "fetch: 503 Service Unavailable", Stale: true, Evaluated: true,
			LastErrorKind: readmodel.ErrorHTTPStatus, LastErrorArg: "503",
			Vulnerable: true, SecuritySince: ago(2 * time.Hour), CoreInstalled: "1.9.0",
			Advisories: []AdvisoryRow{{ID: "F-1", Severity: "high", Summary: "SQL injection", FixedIn: "3.2.0"}},
		}),
		"history": History(HistoryProps{Layout: layout(attention(), true), Runs: []RunRow{
			{ID: 9, Trigger: "manual", Actor: "ops@example.org", Status: "running", StartedAt: now.Add(-20 * time.Second)},
			{ID: 8, Trigger: "manual", Actor: "ops@example.org", Status: "cooldown", StartedAt: now.Add(-time.Minute),
				FinishedAt: ago(time.Minute), Repeats: 7, FirstStartedAt: now.Add(-4 * time.Minute)},
			{ID: 7, Trigger: "manual", Actor: "ops@example.org", Status: "completed_with_failures", StartedAt: now.Add(-3 * time.Hour),
				FinishedAt: ago(3 * time.Hour), DurationMS: 4230, Fetched: 3, NotModified: 1, Failed: 1},
			{ID: 6, Trigger: "scheduled", Actor: "cron", Status: "skipped", StartedAt: now.Add(-5 * time.Hour)},
			{ID: 5, Trigger: "scheduled", Actor: "cron", Status: "busy", StartedAt: now.Add(-6 * time.Hour)},
			{ID: 4, Trigger: "scheduled", Actor: "cron", Status: "lease_lost", StartedAt: now.Add(-6 * time.Hour),
				FinishedAt: ago(6 * time.Hour), DurationMS: 301000, Fetched: 1, Skipped: 2, Error: "lease lost"},
			{ID: 3, Trigger: "operator", Actor: "demo", Status: "cancelled", StartedAt: now.Add(-30 * time.Hour),
				FinishedAt: ago(30 * time.Hour), DurationMS: 850},
			{ID: 2, Trigger: "scheduled", Actor: "cron", Status: "failed", StartedAt: now.Add(-54 * time.Hour),
				FinishedAt: ago(54 * time.Hour), DurationMS: 120, Error: "database unreachable"},
			{ID: 1, Trigger: "scheduled", Actor: "cron", Status: "abandoned", StartedAt: now.Add(-80 * 24 * time.Hour)},
		}}),
		"history_empty": History(HistoryProps{Layout: layout(calm(), false)}),
		"sources": SourceHealth(SourceHealthProps{Layout: layout(attention(), true), Sources: []SourceRow{
			{URL: "https://acme.example/updates.json", Components: 2, LastSuccessAt: ago(3 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), ExpiresAt: in(30 * 24 * time.Hour), SignatureState: "verified"},
			{URL: "https://old.example/feed.json", Components: 1, LastSuccessAt: ago(3 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), ExpiresAt: ago(24 * time.Hour), SignatureState: "unsigned",
				Stale: true, Expired: true},
			{URL: "https://new.example/feed.json", Components: 1, SignatureState: "unsigned", Stale: true},
			{URL: "https://forum.example/feed.json", Components: 1, LastSuccessAt: ago(50 * time.Hour),
				LastAttemptAt: ago(3 * time.Hour), LastError: "fetch: 503 Service Unavailable",
				ConsecutiveFailures: 3, Stale: true, Failing: true, SignatureState: "unsigned",
				LastErrorKind: readmodel.ErrorHTTPStatus, LastErrorArg: "503"},
		}}),
		"notifications": Notifications(NotificationsProps{
			Layout: layout(attention(), true), CanManage: true, NewSecret: "whsec_c2VjcmV0",
			Notice: "Channel added; 2 outstanding events are on their way to it.",
			Channels: []ChannelRow{
				{ID: 1, Name: "Ops", Kind: "webhook", Target: "https://hooks.example/upcheck", Events: "security", Enabled: true},
				{ID: 2, Name: "chat", Kind: "slack", Target: "https://chat.example/hooks/x", Events: "all",
					DisabledReason: "the receiver answered 410 Gone: it no longer accepts these notifications"},
			},
			Deliveries: []DeliveryRow{
				{ID: "0b7a2f7e-5c1e-4c55-9d55-000000000001", ChannelName: "Ops", Type: "security_update.available",
					Subject: "blog@2.4.0", State: "delivered", Attempts: 1, LastAttempt: ago(time.Hour)},
				{ID: "0b7a2f7e-5c1e-4c55-9d55-000000000002", ChannelName: "Ops", Type: "advisory.unfixed",
					Subject: "gallery@3.0.0/ACME-2", State: "failed", Attempts: 8, LastAttempt: ago(2 * time.Hour),
					LastError: "the receiver answered 503 Service Unavailable"},
				{ID: "0b7a2f7e-5c1e-4c55-9d55-000000000003", ChannelName: "chat", Type: "update.available",
					Subject: "forms@1.1.0", State: "pending", Attempts: 2, LastAttempt: ago(time.Minute),
					NextAttempt: in(9 * time.Minute), LastError: "not sent: post https://chat.example/hooks/x: no answer within 15s"},
			},
		}),
		"audit_empty": Audit(AuditProps{Layout: auditLayout(), Kind: AuditKindCheck, Page: 1}),
		"audit": Audit(AuditProps{Layout: auditLayout(), Kind: "", Page: 2, PageSize: 4, Total: 9, Rows: []AuditRow{
			{At: now.Add(-time.Hour), Kind: AuditKindDismissal, Action: "advisory.dismiss", Actor: "ada@example.org",
				Component: "gallery", Advisory: "ACME-2026-011", Reason: "Metadata is stripped by the CDN", ExpiresAt: in(48 * time.Hour)},
			{At: now.Add(-2 * time.Hour), Kind: AuditKindDismissal, Action: "advisory.expire", Component: "blog",
				Advisory: "ACME-2025-101", Reason: "Debug output is off"},
			{At: now.Add(-3 * time.Hour), Kind: AuditKindCheck, Action: "check", Actor: "cron", Trigger: "scheduled",
				Status: "completed", Detail: "3 fetched, 1 unchanged, 1 failed"},
			{At: now.Add(-4 * time.Hour), Kind: AuditKindAccount, Action: "token.create", Actor: "ada@example.org", Detail: "name: ci, token id: 3"},
		}}),
		"notifications_viewer": Notifications(NotificationsProps{Layout: layout(calm(), false)}),
		"tokens":               Tokens(tokensProps()),
		"tokens_empty":         Tokens(tokensEmptyProps()),
		"error_404":            ErrorPage(ErrorProps{Status: 404, Asset: testAsset}),
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
// testdata/<name>.golden.html; run `go test ./views -update` to rewrite them
// after a deliberate change.
func TestGolden(t *testing.T) {
	t.Parallel()
	for name, c := range pages() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := prettyHTML(render(t, c))
			if err != nil {
				t.Fatal(err)
			}
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
		})
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

func TestNavBadge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n      int
		hidden bool
		words  string
	}{
		{0, true, "0 updates available"},
		{1, false, "1 update available"},
		{3, false, "3 updates available"},
	} {
		s := calm()
		s.UpdatesAvailable = tc.n
		badge := one(t, doc(t, Dashboard(DashboardProps{Layout: layout(s, false)})), "nav-updates-badge")
		if hidden(badge) != tc.hidden {
			t.Errorf("%d updates: badge hidden = %v, want %v", tc.n, hidden(badge), tc.hidden)
		}
		if got := text(badge); !strings.Contains(got, tc.words) {
			t.Errorf("%d updates: badge text %q, want it to say %q", tc.n, got, tc.words)
		}
		if !tc.hidden && !strings.HasPrefix(text(badge), strings.Fields(tc.words)[0]) {
			t.Errorf("%d updates: badge %q does not show the count", tc.n, text(badge))
		}
	}
}

func TestSecurityAlert(t *testing.T) {
	t.Parallel()
	items := attentionFixture()
	for _, tc := range []struct {
		security, vulnerable int
		items                []readmodel.AttentionItem
		want                 string // "" means no alert
	}{
		{0, 0, nil, ""},
		{2, 1, items, "2 security updates and 1 vulnerable component need attention."},
		{1, 0, items[1:2], "1 security update needs attention."},
		{0, 1, items[:1], "1 vulnerable component needs attention."},
		{0, 4, items[:1], "4 vulnerable components need attention."},
		{1, 1, items[:2], "1 security update and 1 vulnerable component need attention."},
	} {
		s := calm()
		s.SecurityUpdates, s.Vulnerable, s.Attention = tc.security, tc.vulnerable, tc.items
		l := layout(s, true)
		// Every page with the layout carries the alert.
		for name, c := range map[string]templ.Component{
			"dashboard": Dashboard(DashboardProps{Layout: l}),
			"catalog":   Catalog(CatalogProps{Layout: l}),
			"detail":    ComponentDetail(DetailProps{Layout: l, Code: "x"}),
			"history":   History(HistoryProps{Layout: l}),
			"sources":   SourceHealth(SourceHealthProps{Layout: l}),
		} {
			alerts := byTestID(doc(t, c), "security-alert")
			if tc.want == "" {
				if len(alerts) != 0 {
					t.Errorf("%s %d/%d: security alert shown, want none", name, tc.security, tc.vulnerable)
				}
				continue
			}
			if len(alerts) != 1 {
				t.Fatalf("%s %d/%d: %d security alerts, want 1", name, tc.security, tc.vulnerable, len(alerts))
			}
			if role, _ := attr(alerts[0], "role"); role != "alert" {
				t.Errorf("%s: alert role = %q", name, role)
			}
			if got := text(alerts[0]); !strings.Contains(got, tc.want) {
				t.Errorf("%s: alert says %q, want %q", name, got, tc.want)
			}
			// A link to the page of each component it names.
			var hrefs, want []string
			for _, a := range findAll(alerts[0], func(n *html.Node) bool { return n.Data == "a" }) {
				h, _ := attr(a, "href")
				hrefs = append(hrefs, h)
			}
			for _, it := range tc.items {
				want = append(want, "/admin/plugins/"+it.Code)
			}
			if strings.Join(hrefs, " ") != strings.Join(want, " ") {
				t.Errorf("%s: alert links to %q, want %q", name, hrefs, want)
			}
		}
	}
}

func TestCheckButton(t *testing.T) {
	t.Parallel()
	manager := doc(t, Dashboard(DashboardProps{Layout: layout(calm(), true), CanManage: true}))
	form := one(t, manager, "check-form")
	if m, _ := attr(form, "method"); m != "post" {
		t.Errorf("check form method %q", m)
	}
	if a, _ := attr(form, "action"); a != PathCheck {
		t.Errorf("check form action %q", a)
	}
	if b := one(t, form, "check-button"); text(b) != "Check for updates" {
		t.Errorf("button says %q", text(b))
	}
	outcome := one(t, manager, "check-outcome")
	if v, _ := attr(outcome, "aria-live"); v != "polite" {
		t.Errorf("outcome aria-live = %q", v)
	}

	viewer := doc(t, Dashboard(DashboardProps{Layout: layout(calm(), false), CanManage: false}))
	if n := len(byTestID(viewer, "check-button")) + len(byTestID(viewer, "check-form")); n != 0 {
		t.Errorf("viewer sees the check button")
	}
}

func TestDismissButtonsOnlyForManagers(t *testing.T) {
	t.Parallel()
	p := DetailProps{Layout: layout(calm(), true), Code: "blog", Installed: "1.0.0", Evaluated: true, Advisories: []AdvisoryRow{
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

func TestWidget(t *testing.T) {
	t.Parallel()
	root := doc(t, Dashboard(DashboardProps{Layout: layout(attention(), true), CanManage: true}))
	for id, want := range map[string]string{
		"widget-updates":        "3",
		"widget-security":       "2",
		"widget-vulnerable":     "1",
		"widget-failing":        "1",
		"widget-last-check":     "3 hours ago (completed, manual check)",
		"widget-oldest-success": "3 days ago",
		"widget-stale":          "2 components have not been checked successfully for over 48 hours.",
	} {
		if got := text(one(t, root, id)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if hidden(one(t, root, "widget-stale")) {
		t.Error("stale warning hidden with 2 stale components")
	}
	if !hidden(one(t, root, "widget-check-running")) {
		t.Error("running indicator shown while no check runs")
	}

	never := doc(t, Dashboard(DashboardProps{Layout: layout(readmodel.Summary{Components: 2, CheckRunning: true}, true)}))
	for _, id := range []string{"widget-last-check", "widget-oldest-success"} {
		if got := text(one(t, never, id)); !strings.HasPrefix(got, "never") {
			t.Errorf("never checked: %s = %q", id, got)
		}
	}
	if !hidden(one(t, never, "widget-stale")) {
		t.Error("stale warning shown with no stale components")
	}
	if hidden(one(t, never, "widget-check-running")) {
		t.Error("running indicator hidden while a check runs")
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	root := doc(t, Catalog(CatalogProps{Layout: layout(attention(), true), Rows: catalogRows(), Page: 3, PageSize: 6, Total: 3000}))
	rows := byTestID(root, "catalog-row")
	if len(rows) != len(catalogRows()) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range catalogRows() {
		if code, _ := attr(rows[i], "data-code"); code != r.Code {
			t.Errorf("row %d data-code %q, want %q", i, code, r.Code)
		}
		links := findAll(rows[i], func(n *html.Node) bool {
			h, _ := attr(n, "href")
			return n.Data == "a" && h == "/admin/plugins/"+r.Code
		})
		if len(links) != 1 {
			t.Errorf("row %s does not link to its page", r.Code)
		}
	}
	if got := text(one(t, root, "catalog-count")); got != "Showing 13–18 of 3,000 components" {
		t.Errorf("count line %q", got)
	}
	pager := one(t, root, "catalog-pagination")
	var items []string
	for _, li := range findAll(pager, func(n *html.Node) bool { return n.Data == "li" }) {
		items = append(items, text(li))
	}
	if got := strings.Join(items, " | "); got != "‹ Previous | Page 1 | Page 2 | Page 3 | Page 4 | Page 5 | … | Page 500 | Next ›" {
		t.Errorf("pagination %q", got)
	}
	current := findAll(pager, func(n *html.Node) bool { v, _ := attr(n, "aria-current"); return v == "page" })
	if len(current) != 1 || text(current[0]) != "Page 3" {
		t.Errorf("current page not marked")
	}

	// Security and vulnerability are said in words, not colour.
	if got := text(rows[1]); !strings.Contains(got, "Security update") || !strings.Contains(got, "Vulnerable, no fix yet") ||
		!strings.Contains(got, "Needs core 2.0.0 or newer") {
		t.Errorf("gallery row %q", got)
	}
}

func TestPager(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		page, size, total int
		want              string
		links             string
	}{
		{1, 50, 0, "Showing 0 of 0", "1"},
		{1, 50, 3000, "Showing 1–50 of 3,000", "1 2 3 … 60"},
		{60, 50, 3000, "Showing 2,951–3,000 of 3,000", "1 … 58 59 60"},
		{30, 0, 3000, "Showing 1,451–1,500 of 3,000", "1 … 28 29 30 31 32 … 60"},
		{99, 10, 15, "Showing 11–15 of 15", "1 2"},
		{-1, 10, 15, "Showing 1–10 of 15", "1 2"},
	} {
		pg := newPager(CatalogProps{Page: tc.page, PageSize: tc.size, Total: tc.total})
		if got := pg.showingText(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc, got, tc.want)
		}
		var links []string
		for _, l := range pg.Links {
			if l.Gap {
				links = append(links, "…")
			} else {
				links = append(links, strconv.Itoa(l.Number))
			}
		}
		if got := strings.Join(links, " "); got != tc.links {
			t.Errorf("%+v: links %q, want %q", tc, got, tc.links)
		}
	}
}

func TestSourcesFailingFirst(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["sources"])
	var order []string
	for _, r := range byTestID(root, "source-row") {
		state, _ := attr(r, "data-state")
		order = append(order, state)
	}
	if got := strings.Join(order, " "); got != "failing stale unfetched healthy" {
		t.Errorf("source order %q", got)
	}
}

func TestHistoryStatusesInWords(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["history"])
	want := map[string]string{
		"running": "Running", "cooldown": "Cooldown", "completed": "Completed", "skipped": "Skipped",
		"busy": "Busy", "lease_lost": "Interrupted", "cancelled": "Cancelled", "failed": "Failed",
		"abandoned": "Abandoned",
	}
	for _, r := range byTestID(root, "history-row") {
		status, _ := attr(r, "data-status")
		if !strings.Contains(text(r), want[status]) {
			t.Errorf("%s row says %q", status, text(r))
		}
	}
}

// TestStatusWords: the widget hands app.js the words of every check status,
// trigger and actor origin, and they make the same note the page renders;
// app.js keeps no copy of them.
func TestStatusWords(t *testing.T) {
	t.Parallel()
	last := one(t, doc(t, pages()["dashboard"]), "widget-last-check")
	var statuses, triggers, actors map[string]string
	for name, into := range map[string]*map[string]string{"data-status-words": &statuses, "data-trigger-words": &triggers,
		"data-actor-words": &actors} {
		v, ok := attr(last, name)
		if !ok {
			t.Fatalf("widget-last-check has no %s", name)
		}
		if err := json.Unmarshal([]byte(v), into); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if len(statuses) != len(checkStatuses) || len(triggers) != len(triggerLabels) || len(actors) != len(actorOrigins) {
		t.Fatalf("%d status, %d trigger and %d actor words, want %d, %d and %d", len(statuses), len(triggers), len(actors),
			len(checkStatuses), len(triggerLabels), len(actorOrigins))
	}
	for status, w := range statuses {
		for trigger, tw := range triggers {
			// app.js: word(status) + ", " + (actor's word or trigger's word) + " check"
			for _, actor := range []string{"ops@example.org", readmodel.ActorCron, readmodel.ActorCLI, readmodel.ActorDemo} {
				origin := tw
				if aw, ok := actors[actor]; ok {
					origin = aw
				}
				if got, want := w+", "+origin+" check", lastCheckText(status, trigger, actor); got != want {
					t.Errorf("%s/%s/%s: app.js would say %q, the page %q", status, trigger, actor, got, want)
				}
			}
		}
	}
	if statuses["lease_lost"] != "interrupted" || triggers["operator"] != "command line" || actors[readmodel.ActorDemo] != "demo start" {
		t.Errorf("words %v %v %v", statuses, triggers, actors)
	}
	js, err := os.ReadFile(filepath.Join("..", "static", "js", "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, copied := range []string{"command line", "demo start", "abandoned", "STATUS_WORDS", "TRIGGER_WORDS"} {
		if strings.Contains(strings.ToLower(string(js)), strings.ToLower(copied)) {
			t.Errorf("app.js has its own copy of the status words (%q)", copied)
		}
	}
}

// The demo's first check (the operator trigger, actor "demo") is worded in
// the widget's note as the history words it: "Demo start", not "command
// line"; `upcheck check` keeps "command line".
func TestLastCheckNoteNamesTheDemo(t *testing.T) {
	t.Parallel()
	for actor, want := range map[string]string{
		readmodel.ActorDemo: "3 hours ago (completed with failures, demo start check)",
		readmodel.ActorCLI:  "3 hours ago (completed with failures, command line check)",
	} {
		sum := attention()
		sum.LastCheck = &readmodel.LastCheck{Status: "completed_with_failures", Trigger: "operator", Actor: actor, FinishedAt: ago(3 * time.Hour)}
		root := doc(t, Dashboard(DashboardProps{Layout: layout(sum, true), CanManage: true}))
		if got := text(one(t, root, "widget-last-check")); got != want {
			t.Errorf("%s: the widget says %q, want %q", actor, got, want)
		}
		history := doc(t, History(HistoryProps{Layout: layout(sum, true), Runs: []RunRow{{ID: 1, Trigger: "operator", Actor: actor,
			Status: "completed_with_failures", StartedAt: now.Add(-3 * time.Hour), FinishedAt: ago(3 * time.Hour)}}}))
		if origin := strings.ToLower(originLabel("operator", actor)); !strings.Contains(want, origin+" check") ||
			!strings.Contains(strings.ToLower(text(history)), origin) {
			t.Errorf("%s: the history words it %q, the widget %q", actor, origin, want)
		}
	}
}

// TestForms: every form that posts carries the CSRF token.
func TestForms(t *testing.T) {
	t.Parallel()
	for name, c := range pages() {
		for _, form := range findAll(doc(t, c), func(n *html.Node) bool { return n.Data == "form" }) {
			method, _ := attr(form, "method")
			if !strings.EqualFold(method, "post") {
				continue
			}
			action, _ := attr(form, "action")
			fields := findAll(form, func(n *html.Node) bool {
				typ, _ := attr(n, "type")
				nm, _ := attr(n, "name")
				return n.Data == "input" && typ == "hidden" && nm == CSRFField
			})
			if len(fields) != 1 {
				t.Errorf("%s: form %s has %d csrf_token fields", name, action, len(fields))
			}
		}
	}
}

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
		if got := relTime(now, now.Add(-tc.d)); got != tc.want {
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

func TestCheckOutcomeMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    CheckOutcome
		want string
	}{
		{CheckOutcome{Status: "completed", Fetched: 3, NotModified: 1, Failed: 0}, "Check completed: 3 sources fetched, 1 unchanged, 0 failed."},
		{CheckOutcome{Status: "completed", Fetched: 1}, "Check completed: 1 source fetched, 0 unchanged, 0 failed."},
		{CheckOutcome{Status: "busy"}, "A check is already running. Try again in a few minutes."},
		{CheckOutcome{Status: "lease_lost"}, "The check was interrupted (it lost its lock) and will be retried."},
		{CheckOutcome{Status: "interrupted"}, "The check was interrupted (it lost its lock) and will be retried."},
		{CheckOutcome{Status: "cooldown", RetryAfter: 87}, "Checks are limited to one every 2 minutes. You can check again in 1 min 27 s."},
		{CheckOutcome{Status: "cooldown", RetryAfter: 113}, "Checks are limited to one every 2 minutes. You can check again in 1 min 53 s."},
		{CheckOutcome{Status: "cooldown", RetryAfter: 45}, "Checks are limited to one every 2 minutes. You can check again in 45 s."},
		{CheckOutcome{Status: "completed_with_failures", Fetched: 3, Failed: 1},
			"Check completed with failures: 3 sources fetched, 0 unchanged, 1 failed. Source health says why."},
		{CheckOutcome{Status: "failed"}, "The check could not run. Try again later."},
	} {
		if got := CheckOutcomeMessage(tc.o); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		ComponentPath("blog"):                   "/admin/plugins/blog",
		ComponentPath("a b/c"):                  "/admin/plugins/a%20b%2Fc",
		AdvisoryDismissPath("blog", "GHSA-1"):   "/admin/plugins/blog/advisories/GHSA-1/dismiss",
		AdvisoryUndismissPath("blog", "GHSA-1"): "/admin/plugins/blog/advisories/GHSA-1/undismiss",
		CatalogPath("", "", 1):                  "/admin/plugins",
		CatalogPath(FilterSecurity, "", 0):      "/admin/plugins?status=security",
		CatalogPath(FilterUpdates, "a&b", 2):    "/admin/plugins?page=2&q=a%26b&status=updates",
		CatalogPath("", "", 3):                  "/admin/plugins?page=3",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// TestUntrustedText: publisher-supplied text and URLs are escaped, and a
// javascript: URL never becomes a link.
func TestUntrustedText(t *testing.T) {
	t.Parallel()
	out := render(t, ComponentDetail(DetailProps{
		Layout: layout(calm(), true), Code: "x", Name: `<img src=x onerror=alert(1)>`, Installed: "1",
		SourceURL: "javascript:alert(1)",
		Releases:  []ReleaseRow{{Version: "2", URL: "javascript:alert(2)", Summary: `<script>alert(3)</script>`}},
	}))
	if strings.Contains(out, "<img src=x") || strings.Contains(out, "<script>alert") || strings.Contains(out, `href="javascript:`) {
		t.Errorf("untrusted text not escaped:\n%s", out)
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

// TestDetailNeverSaysNoAdvisoryWithoutAnEvaluation: a component whose
// source was never read is unknown, never "no known advisory" or "no
// releases".
func TestDetailNeverSaysNoAdvisoryWithoutAnEvaluation(t *testing.T) {
	t.Parallel()
	out := render(t, ComponentDetail(DetailProps{
		Layout: layout(calm(), true), Code: "shop", Name: "Shop", Installed: "1.0.0",
		SourceURL: "https://shop.example/u.json", LastError: "fetch: 404 Not Found", Stale: true,
	}))
	if strings.Contains(out, "No known advisory") || strings.Contains(out, "lists no releases") {
		t.Errorf("an unevaluated component is said to have no advisory or no releases:\n%s", out)
	}
	if !strings.Contains(out, "never been read successfully") {
		t.Errorf("the page does not say why nothing is known:\n%s", out)
	}
}
