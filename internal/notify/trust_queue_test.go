package notify_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// A manifest sync that lowers a source's pin queues one trust_downgrade
// event per channel and downgrade, naming the source, its components and
// what changed; the same manifest synced again queues nothing more, and
// a second downgrade is an event of its own. Pinning keys for the first
// time is no downgrade.
func TestPinDowngradeIsNotifiedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	ctx := context.Background()
	ch, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: "http://127.0.0.1:1/", Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for range 2 {
		pub, _, err := updatedoc.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, pub.String())
	}
	const src = "https://acme.example/updates.json"
	sync := func(keys []string, threshold int) {
		t.Helper()
		comps := []manifest.Component{{Code: "core", Name: "Core", Version: "1.0.0", Source: "https://core.example/updates.json"}}
		for _, code := range []string{"gallery", "blog"} {
			comps = append(comps, manifest.Component{Code: code, Name: code, Version: "1.0.0", Source: src, Keys: keys, Threshold: threshold})
		}
		if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: comps}); err != nil {
			t.Fatal(err)
		}
	}
	type payload struct {
		Kind       string   `json:"kind"`
		Source     string   `json:"source"`
		Reason     string   `json:"reason"`
		Components []string `json:"components"`
	}
	downgrades := func() []payload {
		t.Helper()
		rows, err := b.db.Pool.Query(ctx, `SELECT key, payload FROM notification_events
			WHERE type = 'trust_downgrade' AND channel_id = $1 ORDER BY created_at`, ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []payload
		for rows.Next() {
			var key string
			var raw []byte
			if err := rows.Scan(&key, &raw); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(key, "trust_downgrade:"+src+"@") || !strings.HasSuffix(key, "/pin") {
				t.Errorf("key %q", key)
			}
			var p payload
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}

	sync(keys, 2)
	if got := downgrades(); len(got) != 0 {
		t.Fatalf("keys pinned for the first time: %+v, want no downgrade", got)
	}
	sync(keys, 1)
	sync(keys, 1)
	got := downgrades()
	if len(got) != 1 {
		t.Fatalf("%d trust_downgrade events after a lowered threshold synced twice, want 1: %+v", len(got), got)
	}
	if p := got[0]; p.Kind != "pin" || p.Source != src || !slices.Equal(p.Components, []string{"blog", "gallery"}) ||
		!strings.Contains(p.Reason, "requires 1 signature where it required 2") {
		t.Errorf("payload %+v", p)
	}
	sync(keys[:1], 0) // no longer pins the second key
	got = downgrades()
	if len(got) != 2 || !strings.Contains(got[1].Reason, "no longer pins") {
		t.Errorf("a second downgrade: %+v, want a second event saying the key is no longer pinned", got)
	}
}
