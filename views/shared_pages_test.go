package views

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		{0, true, "0 components need attention"},
		{1, false, "1 component needs attention"},
		{3, false, "3 components need attention"},
	} {
		// The badge counts what needs attention, not the updates: a site
		// with updates and nothing to look at shows none.
		s := calm()
		s.AttentionTotal, s.UpdatesAvailable = tc.n, 5
		badge := one(t, doc(t, Dashboard(DashboardProps{Layout: layout(s, false)})), "nav-attention-badge")
		if hidden(badge) != tc.hidden {
			t.Errorf("%d need attention: badge hidden = %v, want %v", tc.n, hidden(badge), tc.hidden)
		}
		if got := text(badge); !strings.Contains(got, tc.words) {
			t.Errorf("%d need attention: badge text %q, want it to say %q", tc.n, got, tc.words)
		}
		if title, _ := attr(badge, "title"); title != tc.words {
			t.Errorf("%d need attention: badge title %q, want %q", tc.n, title, tc.words)
		}
		if !tc.hidden && !strings.HasPrefix(text(badge), strings.Fields(tc.words)[0]) {
			t.Errorf("%d need attention: badge %q does not show the count", tc.n, text(badge))
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
		s.SecurityUpdates, s.Vulnerable, s.Attention, s.AttentionTotal = tc.security, tc.vulnerable, tc.items, len(tc.items)
		l := layout(s, true)
		// Every page with the layout carries the alert.
		for name, c := range map[string]templ.Component{
			"dashboard": Dashboard(DashboardProps{Layout: l}),
			"catalog":   Catalog(CatalogProps{Layout: l}),
			"detail":    ComponentDetail(DetailProps{Layout: l, DetailRow: readmodel.DetailRow{Code: "x"}}),
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
				if name != "dashboard" { // its "Needs attention" names them, once
					want = append(want, "/admin/plugins/"+it.Code)
				}
			}
			if strings.Join(hrefs, " ") != strings.Join(want, " ") {
				t.Errorf("%s: alert links to %q, want %q", name, hrefs, want)
			}
		}
	}
}

// TestStatusWords: the widget's words that change with the summary (the
// last check's note, the stale warning) are the server's: app.js takes
// them from the page it fetches again (data-live), and keeps no copy of
// the status, trigger or actor words, nor of a time or duration rule.
func TestStatusWords(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["dashboard"])
	for _, id := range []string{"widget-last-check", "widget-oldest-success", "widget-next-check"} {
		if v, _ := attr(one(t, root, id), "data-live"); v != id {
			t.Errorf("%s is not rendered by the server after a check (data-live %q)", id, v)
		}
	}
	stale := findAll(one(t, root, "widget-stale"), func(n *html.Node) bool {
		v, _ := attr(n, "data-live")
		return v == "widget-stale-text"
	})
	if len(stale) != 1 {
		t.Errorf("the stale warning's words are not rendered by the server after a check")
	}
	if got := lastCheckText("lease_lost", "operator", readmodel.ActorCLI); got != "interrupted, command line check" {
		t.Errorf("lastCheckText = %q", got)
	}
	if got := lastCheckText("completed", "scheduled", readmodel.ActorDemo); got != "completed, demo start check" {
		t.Errorf("lastCheckText = %q", got)
	}
	js, err := os.ReadFile(filepath.Join("..", "static", "js", "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, copied := range []string{"command line", "demo start", "abandoned", "STATUS_WORDS", "TRIGGER_WORDS",
		"data-status-words", "data-stale-age", "function relTime", "function absTime", "function secondsText",
		"function staleText", "function lastCheckText", "function spokenSeconds", `"minutes"`, `"hours"`, `"days"`,
		"ago", "toISOString", `" min "`} {
		if strings.Contains(strings.ToLower(string(js)), strings.ToLower(copied)) {
			t.Errorf("app.js has its own copy of the server's words (%q)", copied)
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
