package web_test

import (
	"encoding/json"
	"html"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// What lockfile changes brought (docs/npm.md "What a lockfile change
// brought"), as a check stores it: on the package's page each change
// with its signals, worded once, or why it was not read (never
// "nothing"); on the Packages list the filter brings and the row's badge;
// in the API the package's changes and the row's brings, as openapi.json
// says (client.do checks every answer); counted in the summary and named
// in the attention banner, by its signal, after the advisories.
func TestWhatLockfileChangesBroughtIsShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	viewer := b.login("viewer@example.test")
	writeTree(t, b, "node_modules/blog 2.3.0", "node_modules/lib 1.0.0", "node_modules/calm 1.0.0")
	writeTree(t, b, "node_modules/blog 2.3.0", "node_modules/lib 1.1.0", "node_modules/calm 1.0.1", "node_modules/young 1.0.0")
	signals, _ := json.Marshal([]readmodel.Signal{
		{Kind: readmodel.SignalInstallScript, Args: readmodel.SignalArgs{Version: "1.1.0", Name: "postinstall", Text: "node <x>.js", Added: true}}})
	b.db.MustExec(t, `UPDATE tree_brings SET state = 'read', compared = '1.0.0', signals = $1, read_at = clock_timestamp() WHERE name = 'lib'`, signals)
	b.db.MustExec(t, `UPDATE tree_brings SET state = 'unread', unread = 'past_bound' WHERE name = 'calm'`)
	b.reads.Changed()

	want := map[string][]string{
		"/admin/packages/lib": {"What lockfile changes brought", "1.0.0 → 1.1.0",
			html.EscapeString(`1.1.0 adds a postinstall script: "node <x>.js"`)},
		"/admin/packages/calm":  {"1.0.0 → 1.0.1", "Not read: the check had read as many changed packages"},
		"/admin/packages/young": {"brought in 1.0.0", "Not read yet: the next check reads what it brought."},
		"/admin/packages?filter=brings": {`data-name="lib"`, "Brought by a change (1)",
			html.EscapeString(`Change brought: 1.1.0 adds a postinstall script: "node <x>.js"`)},
	}
	for path, wants := range want {
		r := viewer.do("GET", path, "", "", nil)
		wantStatus(t, path, r, 200)
		for _, w := range wants {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
		if strings.Contains(r.body, "It brought none") {
			t.Errorf("%s says a change brought nothing", path)
		}
	}
	if r := viewer.do("GET", "/admin/packages?filter=brings", "", "", nil); strings.Contains(r.body, `data-name="calm"`) {
		t.Errorf("the filter brings lists calm, whose change was not read")
	}

	a := viewer.packages(t, "filter=brings")
	if len(a.Packages) != 1 || a.Packages[0].Name != "lib" || a.Packages[0].Brings == nil || a.Packages[0].Brings.Kind != readmodel.SignalInstallScript || a.Total != 1 {
		t.Errorf("the API's filter brings: %+v", a)
	}
	r := viewer.do("GET", "/api/admin/packages/calm", "", "", nil)
	wantStatus(t, "calm", r, 200)
	var p struct {
		Changes []readmodel.PackageChange `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].State != readmodel.ChangeUnread || p.Changes[0].Unread != readmodel.UnreadPastBound ||
		len(p.Changes[0].Previous) != 1 || p.Changes[0].Previous[0] != "1.0.0" {
		t.Errorf("calm's changes: %+v", p.Changes)
	}

	sum := decodeJSON[map[string]any](t, viewer.do("GET", "/api/admin/plugins/updates/summary", "", "", nil))
	counts, _ := sum["tree_counts"].(map[string]any)
	if counts == nil || counts["brings"] != 1.0 || counts["total"] != 1.0 {
		t.Errorf("tree_counts %v, want brings 1 of total 1", counts)
	}
	items, _ := sum["tree_attention"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["kind"] != "brings" || items[0].(map[string]any)["name"] != "lib" {
		t.Errorf("tree_attention %v", items)
	}
	page := viewer.do("GET", "/admin/plugins", "", "", nil).body
	if named := texts(t, page, "attention-banner-items"); len(named) != 1 ||
		!strings.Contains(named[0], `lib 1.1.0: in the dependencies, installed by a lockfile change: 1.1.0 adds a postinstall script: "node <x>.js"`) {
		t.Errorf("banner names %q", named)
	}
	if alert := texts(t, page, "security-alert-text"); len(alert) != 1 || !strings.Contains(alert[0], "1 dependency a lockfile change brought with a signal needs attention.") {
		t.Errorf("banner %q", alert)
	}
}
