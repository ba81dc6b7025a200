package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// What an offered update brings is queued with the check that finds it,
// once per channel, signal and script text (trust_downgrade of the
// signal's kind, with the signal): a postinstall added in a patch release
// is told once however many checks see it, and again when the offered
// release changes the script's text.
func TestUpdateBringsEventsAreQueued(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	ctx := context.Background()
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	reg.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	hulud := map[string]npmreg.Version{"1.0.0": {Published: day(2)},
		"1.0.1": {Published: day(3), Scripts: map[string]string{"postinstall": "node bundle.js"}}}
	reg.Publish("@acme/hulud", "1.0.1", hulud)
	u, err := npm.ParseRegistryURL(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}})
	m := &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		{Code: "acme--hulud", Name: "Hulud", Version: "1.0.0", Source: "npm:@acme/hulud"},
	}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	added, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "slack", Target: "http://127.0.0.1:1/", Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	b.check()
	b.check()
	hash := npm.ScriptOf("node bundle.js").SHA256
	key := fmt.Sprintf("%d trust_downgrade:acme--hulud@1.0.1/install_script/postinstall@%s", added.ID, hash)
	if got := b.events(); len(got) != 1 || got[key] == "" {
		t.Fatalf("events %v, want the one %q", got, key)
	}
	var kind string
	var signal readmodel.Signal
	var raw []byte
	b.db.QueryRow(t, `SELECT payload->>'kind', payload->'signal' FROM notification_events WHERE type = 'trust_downgrade'`).Scan(&kind, &raw)
	if err := json.Unmarshal(raw, &signal); err != nil || kind != "install_script" || signal.Args.Text != "node bundle.js" {
		t.Errorf("payload: kind %q, signal %+v (%v)", kind, signal, err)
	}
	if text := readmodel.SignalText(signal); !strings.Contains(text, `adds a postinstall script: "node bundle.js"`) {
		t.Errorf("worded %q", text)
	}

	hulud["1.0.2"] = npmreg.Version{Published: day(4), Scripts: map[string]string{"postinstall": "node bundle.js --spread"}}
	reg.Publish("@acme/hulud", "1.0.2", hulud)
	b.check()
	if got := b.events(); len(got) != 2 {
		t.Errorf("events after a new script text %v, want two", got)
	}
}
