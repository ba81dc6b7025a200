package views

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Behaviour of the pages' parts: the badge, the alert, the widget, the catalog, the history's words, forms.

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
	if got := strings.Join(order, " "); got != "failing failing failing stale unfetched unfetched healthy healthy" {
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
		history := doc(t, History(HistoryProps{Layout: layout(sum, true), Runs: []readmodel.RunRow{{ID: 1, Trigger: "operator", Actor: actor,
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
