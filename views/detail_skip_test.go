package views

import (
	"github.com/upcheck/upcheck/internal/readmodel"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// skipStates are the skip section's states, by name.
func skipStates() map[string]SkipProps {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return map[string]SkipProps{
		"offered":  {Code: "blog", CanManage: true, Offer: "2.4.0"},
		"viewer":   {Code: "blog", Offer: "2.4.0"},
		"security": {Code: "blog", CanManage: true, Offer: "2.4.1", OfferSecurity: true},
		"refused": {Code: "blog", CanManage: true, Offer: "2.4.0",
			Form: SkipForm{Version: "2.9.9", Reason: "breaks <our> theme", Error: "The update source publishes no release “2.9.9”."}},
		"skipped": {Code: "blog", CanManage: true, Notice: "2.4.0 is skipped.",
			Standing: &DetailSkip{SkippedVersion: readmodel.SkippedVersion{Version: "2.4.0", Reason: "breaks <our> theme", By: "ada@example.org", SkippedAt: at}}},
		"manifest": {Code: "blog", CanManage: true, Offer: "2.5.0",
			Standing: &DetailSkip{SkippedVersion: readmodel.SkippedVersion{Version: "2.4.0", Reason: "reviewed", By: "the manifest", SkippedAt: at, FromManifest: true}}},
		"nothing": {Code: "blog", CanManage: true},
		"both": {Code: "blog", CanManage: true, Offer: "2.5.0",
			Standing: &DetailSkip{SkippedVersion: readmodel.SkippedVersion{Version: "2.4.0", Reason: "breaks our theme", By: "ada@example.org", SkippedAt: at}}},
	}
}

// Each state shows what a manager may do, and only that: the form presets
// the offered plain update; a security release, a viewer and the
// manifest's skip get no form; the standing skip says who, why, and is
// ended by a button unless the manifest declares it. The sections are
// compared with testdata/detail_skip.golden.html (-update rewrites it).
func TestSkipSection(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	states := skipStates()
	out := map[string]string{}
	for name, p := range states {
		out[name] = render(t, skipSection(p, "csrf-TOKEN", now))
	}
	for _, tc := range []struct {
		state      string
		has, hasnt []string
	}{
		{"offered", []string{`data-testid="skip-form"`, `action="/admin/plugins/blog/skip"`, `value="2.4.0"`, `name="csrf_token" value="csrf-TOKEN"`},
			[]string{`data-testid="skip" open`, `skip-standing`}},
		{"viewer", nil, []string{`skip-section`}},
		{"security", []string{`data-testid="skip-security"`, "2.4.1 is a security release"}, []string{`skip-form`}},
		{"refused", []string{`data-testid="skip" open`, `value="2.9.9"`, "breaks &lt;our&gt; theme</textarea>", `data-testid="skip-error"`}, nil},
		{"skipped", []string{`data-testid="skip-notice"`, "2.4.0 is skipped: no plain release at or below it is offered", "ada@example.org",
			"breaks &lt;our&gt; theme", `action="/admin/plugins/blog/unskip"`, "Offer 2.4.0 again"}, []string{`skip-form`}},
		{"manifest", []string{`data-testid="skip-from-manifest"`, "the manifest"}, []string{`skip-form`, `skip-undo`}},
		{"nothing", nil, []string{`skip-section`}},
		{"both", []string{`data-testid="skip-why">breaks our theme<`, `data-testid="skip-reason"></textarea>`, `value="2.5.0"`, `skip-undo`}, nil},
	} {
		for _, want := range tc.has {
			if !strings.Contains(out[tc.state], want) {
				t.Errorf("%s: no %s in\n%s", tc.state, want, out[tc.state])
			}
		}
		for _, unwanted := range tc.hasnt {
			if strings.Contains(out[tc.state], unwanted) {
				t.Errorf("%s: %s in\n%s", tc.state, unwanted, out[tc.state])
			}
		}
	}
	// A refused form's error is said once on the page: by the form.
	if n := strings.Count(out["refused"], "The update source publishes no release"); n != 1 {
		t.Errorf("refused: the error is said %d times, want once:\n%s", n, out["refused"])
	}
	var all strings.Builder
	for _, name := range []string{"offered", "security", "refused", "skipped", "manifest"} {
		pretty, err := prettyHTML(out[name])
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("<!-- " + name + " -->\n" + pretty)
	}
	path := filepath.Join("testdata", "detail_skip.golden.html")
	if *update {
		if err := os.WriteFile(path, []byte(all.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./views -update)", err)
	}
	if all.String() != string(want) {
		t.Errorf("%s differs from the golden file (run go test ./views -update after a deliberate change)\n%s", path, lineDifference(string(want), all.String()))
	}
}
