package notify_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
)

// intelResults gives the check's results the facts the advisory feeds add
// (as the check's evaluation writes them): blog is matched by a malicious
// package record, gallery has an advisory exploited in the wild with a low
// EPSS score beside an unfixed one with a low score, and forms one unfixed
// advisory with a high score and one with none.
func intelResults(t *testing.T, b *bundle) {
	t.Helper()
	b.db.MustExec(t, `UPDATE component_results SET
		advisories = '[{"id": "MAL-2025-1", "aliases": ["GHSA-mal1-xxxx-yyyy"], "severity": "critical", "summary": "Steals tokens", "no_fix": true, "malicious": true, "origins": ["osv"]}]',
		advisory_ids = '{MAL-2025-1}', no_fix_ids = '{MAL-2025-1}', malicious_ids = '{MAL-2025-1}' WHERE code = 'blog'`)
	b.db.MustExec(t, `UPDATE component_results SET
		advisories = '[{"id": "ACME-2", "aliases": ["CVE-2026-1111"], "severity": "high", "summary": "Open redirect", "no_fix": true,
		                "known_exploited": true, "kev": {"cve": "CVE-2026-1111", "date_added": "2026-11-01", "due_date": "2026-11-22",
		                "required_action": "Apply mitigations per vendor instructions.", "ransomware": "Known"},
		                "epss": {"cve": "CVE-2026-1111", "score": 0.002, "percentile": 0.4}, "origins": ["publisher", "osv"]},
		               {"id": "ACME-3", "aliases": ["CVE-2026-2222"], "severity": "low", "summary": "Low chance", "no_fix": true,
		                "epss": {"cve": "CVE-2026-2222", "score": 0.01, "percentile": 0.5}}]',
		advisory_ids = '{ACME-2,ACME-3}', no_fix_ids = '{ACME-2,ACME-3}', exploited_ids = '{ACME-2}' WHERE code = 'gallery'`)
	b.db.MustExec(t, `UPDATE component_results SET
		advisories = '[{"id": "F-1", "aliases": ["CVE-2026-3333"], "severity": "high", "summary": "Likely", "no_fix": true,
		                "epss": {"cve": "CVE-2026-3333", "score": 0.943, "percentile": 0.99}},
		               {"id": "F-2", "severity": "medium", "summary": "Unscored", "no_fix": true}]',
		advisory_ids = '{F-1,F-2}', no_fix_ids = '{F-1,F-2}' WHERE code = 'forms'`)
}

// A malicious package and an exploited advisory each notify once, with
// their own events, to every channel whatever its EPSS threshold; an
// exploited or malicious advisory is not also an unfixed one; a channel's
// min_epss holds back an unfixed advisory scored below it, and sends one
// above it or without a score. The check's cheap question agrees.
func TestIntelEventsAndEPSSThreshold(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	b.site()
	b.check()
	intelResults(t, b)
	ctx := context.Background()
	plain, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "plain", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	half := 0.5
	picky, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "picky", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security", MinEPSS: &half})
	if err != nil {
		t.Fatal(err)
	}
	codes := []string{"core", "blog", "gallery", "forms"}
	for range 3 {
		if err := b.store.WithTx(ctx, func(tx *store.Tx) error {
			_, err := b.notify.Queue(ctx, tx, codes, 0, 0)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	got := b.events()
	p, q := fmt.Sprint(plain.ID)+" ", fmt.Sprint(picky.ID)+" "
	want := map[string]bool{
		p + "malicious_package:blog@2.3.0/MAL-2025-1": true, q + "malicious_package:blog@2.3.0/MAL-2025-1": true,
		p + "advisory.exploited:gallery/ACME-2": true, q + "advisory.exploited:gallery/ACME-2": true,
		p + "advisory.unfixed:gallery@3.0.0/ACME-3": true, q + "advisory.unfixed:gallery@3.0.0/ACME-3": false,
		p + "advisory.unfixed:forms@1.0.0/F-1": true, q + "advisory.unfixed:forms@1.0.0/F-1": true,
		p + "advisory.unfixed:forms@1.0.0/F-2": true, q + "advisory.unfixed:forms@1.0.0/F-2": true,
		p + "advisory.unfixed:gallery@3.0.0/ACME-2": false, p + "advisory.unfixed:blog@2.3.0/MAL-2025-1": false,
	}
	for key, sent := range want {
		if _, ok := got[key]; ok != sent {
			t.Errorf("event %q queued: %v, want %v (events %v)", key, ok, sent, got)
		}
	}
	var n int
	b.db.QueryRow(t, `SELECT count(*) FROM notification_events WHERE type IN ('malicious_package', 'advisory.exploited')`).Scan(&n)
	if n != 4 {
		t.Errorf("%d feed events, want 4: each once per channel", n)
	}
	var batch store.Batch
	batch.EventPlanNothingNew(codes)
	if err := b.store.SendBatch(ctx, &batch); err != nil {
		t.Fatalf("every event queued, the threshold held one back: %v, want nothing to queue", err)
	}
	b.db.MustExec(t, `DELETE FROM notification_events WHERE key = 'advisory.exploited:gallery/ACME-2' AND channel_id = $1`, picky.ID)
	batch = store.Batch{}
	batch.EventPlanNothingNew(codes)
	if err := b.store.SendBatch(ctx, &batch); !errors.Is(err, store.ErrEventsToQueue) {
		t.Fatalf("an exploited advisory missing: %v, want store.ErrEventsToQueue", err)
	}
}

// A threshold that is not a probability is refused.
func TestMinEPSSMustBeAProbability(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	for _, v := range []float64{-0.1, 1.5} {
		_, err := b.notify.AddChannel(context.Background(), store.NewChannel{Name: "x", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security", MinEPSS: &v})
		if !errors.Is(err, notify.ErrInvalidChannel) {
			t.Errorf("min_epss %v: %v, want ErrInvalidChannel", v, err)
		}
	}
}
