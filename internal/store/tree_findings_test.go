package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// treeSite writes an installed tree (00012's tables, as a lockfile sync
// does) and one evaluation of it: a (prod, fixed), b (every instance
// dev, no fix), m (dev, malicious), c (two advisories, one no fix, one
// withdrawn), k (exploited in the wild, and a's GHSA-aaaa too), and the
// look-back's finding of old 0.1.0 (malicious, removed).
func treeSite(t *testing.T, b *bundle) {
	t.Helper()
	ctx := context.Background()
	b.exec(t, `INSERT INTO tree_packages (id, name, version, dev, optional, peer, source, install_script, dev_only, components) VALUES
		('node_modules/a', 'a', '1.0.0', false, false, false, 'registry', false, false, '{blog}'),
		('node_modules/b', 'b', '1.0.0', true, false, false, 'registry', false, true, '{}'),
		('node_modules/x/node_modules/b', 'b', '1.0.0', false, false, false, 'registry', false, true, '{}'),
		('node_modules/m', 'm', '1.0.0', true, false, false, 'registry', false, true, '{}'),
		('node_modules/c', 'c', '2.0.0', false, false, false, 'registry', false, false, '{blog}'),
		('node_modules/k', 'k', '1.0.0', false, false, false, 'registry', false, false, '{}')`)
	b.exec(t, `INSERT INTO tree_state (path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at)
		VALUES ('/site/package-lock.json', '\x01', '\x02', '\x03', 1, 6, clock_timestamp(), clock_timestamp())`)
	b.exec(t, `INSERT INTO tree_versions (name, version, installed_at, removed_at)
		VALUES ('old', '0.1.0', clock_timestamp() - interval '2 days', clock_timestamp() - interval '1 day')`)
	fixed := "1.0.1"
	finding := func(name, version, id string, adv map[string]any) store.TreeFinding {
		adv["id"] = id
		raw, _ := json.Marshal(adv)
		f := store.TreeFinding{Name: name, Version: version, AdvisoryID: id, Advisory: raw, Keys: []string{id}}
		f.Malicious, _ = adv["malicious"].(bool)
		f.KnownExploited, _ = adv["known_exploited"].(bool)
		f.Severity, _ = adv["severity"].(string)
		if v, ok := adv["fixed_in"].(string); ok {
			f.FixedIn = &v
		}
		return f
	}
	findings := []store.TreeFinding{
		finding("a", "1.0.0", "GHSA-aaaa", map[string]any{"severity": "high", "affected": "<1.0.1", "fixed_in": fixed}),
		finding("b", "1.0.0", "GHSA-bbbb", map[string]any{"severity": "low", "affected": "*", "no_fix": true}),
		finding("m", "1.0.0", "MAL-2026-1", map[string]any{"severity": "critical", "affected": "*", "no_fix": true, "malicious": true}),
		finding("c", "2.0.0", "GHSA-cccc", map[string]any{"severity": "medium", "affected": "<2.0.1", "fixed_in": "2.0.1"}),
		finding("c", "2.0.0", "GHSA-dddd", map[string]any{"severity": "medium", "affected": "*", "no_fix": true, "aliases": []string{"CVE-2026-1"}}),
		finding("k", "1.0.0", "GHSA-kkkk", map[string]any{"severity": "high", "affected": "<1.0.1", "fixed_in": fixed, "known_exploited": true}),
		finding("k", "1.0.0", "GHSA-aaaa", map[string]any{"severity": "high", "affected": "<1.0.1", "fixed_in": fixed}),
	}
	findings[4].Keys = []string{"GHSA-DDDD", "CVE-2026-1"}
	w := finding("c", "2.0.0", "GHSA-wwww", map[string]any{"severity": "high", "affected": "*", "no_fix": true})
	w.Withdrawn = true
	findings = append(findings, w)
	var interval int64
	b.db.QueryRow(t, `SELECT id FROM tree_versions WHERE name = 'old'`).Scan(&interval)
	old, _ := json.Marshal(map[string]any{"id": "MAL-2026-9", "severity": "critical", "affected": "*", "no_fix": true, "malicious": true})
	exposures := []store.TreeExposure{{IntervalID: interval, Name: "old", Version: "0.1.0", AdvisoryID: "MAL-2026-9", Advisory: old,
		Malicious: true, InstalledAt: time.Now().Add(-48 * time.Hour), RemovedAt: time.Now().Add(-24 * time.Hour)}}
	if err := b.st.WithTx(ctx, func(tx *store.Tx) error {
		added, err := tx.TreeFindingsWrite(ctx, findings, exposures, []byte{2}, 1, 1)
		if len(added) != 1 && err == nil {
			t.Errorf("%d exposures added, want 1", len(added))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func counted(t *testing.T, b *bundle, mode readmodel.DevMode) store.TreeCounts {
	t.Helper()
	c, err := b.st.TreeFindingCounts(context.Background(), mode)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func attention(t *testing.T, b *bundle, mode readmodel.DevMode) []string {
	t.Helper()
	items, err := b.st.TreeAttention(context.Background(), mode)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, string(it.Kind)+":"+it.Name)
	}
	return out
}

// The one definition of what a tree finding counts for: a finding on a
// package every instance of which is installed only for development is
// shown apart and not counted (separate), counted (include) or neither
// (omit); a malicious one counts wherever it sits; a withdrawn one never.
// upcheck_tree_attention names each by an AttentionKind, the look-back's
// by readmodel.KindExposed.
func TestTreeFindingsCountByTheDevSetting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	treeSite(t, b)
	for mode, want := range map[readmodel.DevMode]store.TreeCounts{
		readmodel.DevSeparate: {Counted: 6, Packages: 4, DevApart: 1},
		readmodel.DevInclude:  {Counted: 7, Packages: 5},
		readmodel.DevOmit:     {Counted: 6, Packages: 4},
	} {
		if got := counted(t, b, mode); got != want {
			t.Errorf("%s: counts %+v, want %+v", mode, got, want)
		}
		rows, err := b.st.TreeFindings(context.Background(), mode)
		if err != nil {
			t.Fatal(err)
		}
		shown := slices.ContainsFunc(rows, func(r store.TreeFindingRow) bool { return r.Name == "b" })
		if shown != (mode != readmodel.DevOmit) {
			t.Errorf("%s: the dev finding shown %v", mode, shown)
		}
		if !slices.ContainsFunc(rows, func(r store.TreeFindingRow) bool { return r.Name == "m" && r.Dev && r.Counted }) {
			t.Errorf("%s: the malicious dev package is not shown and counted: %+v", mode, rows)
		}
	}
	// Per instance: each installed instance of b has its version's finding.
	inst, err := b.st.TreeFindingsOfPackage(context.Background(), "b", readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if len(inst) != 2 || inst[0].InstanceID == inst[1].InstanceID || inst[0].AdvisoryID != "GHSA-bbbb" || inst[1].AdvisoryID != "GHSA-bbbb" {
		t.Errorf("b's instances = %+v, want both with GHSA-bbbb", inst)
	}
	want := []string{"malicious:m", "exposed:old", "known_exploited:k", "vulnerable_no_fix:c", "vulnerable:a", "vulnerable:c", "vulnerable:k"}
	if got := attention(t, b, readmodel.DevSeparate); !slices.Equal(got, want) {
		t.Errorf("attention = %v, want %v", got, want)
	}
	items, _ := b.st.TreeAttention(context.Background(), readmodel.DevInclude)
	for _, it := range items {
		if readmodel.Urgency(it.Kind) == len(readmodel.AttentionKinds) && it.Kind != readmodel.KindExposed {
			t.Errorf("upcheck_tree_attention names kind %q, which readmodel does not", it.Kind)
		}
	}
	if !slices.ContainsFunc(items, func(it store.TreeAttentionItem) bool { return it.Kind == readmodel.KindExposed }) {
		t.Errorf("no %s item: %+v", readmodel.KindExposed, items)
	}
}

// A dismissal of the advisory alone covers it wherever it is in the tree
// (a component's dismissal of it too); one naming the package covers that
// package only; a look-back finding is dismissed as a finding is.
func TestTreeDismissalsByAdvisoryAndPackage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	treeSite(t, b)
	ctx := context.Background()
	before := counted(t, b, readmodel.DevSeparate).Counted
	// By an alias, wherever it is.
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{AdvisoryID: "CVE-2026-1", Reason: "not reachable"}); err != nil {
		t.Fatal(err)
	}
	// Naming a package that does not have it: nothing to dismiss.
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Package: "c", AdvisoryID: "GHSA-aaaa", Reason: "r"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("dismissing GHSA-aaaa on c: %v, want ErrNotFound", err)
	}
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Package: "a", AdvisoryID: "GHSA-aaaa", Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	// A component's dismissal of the advisory, as the components write
	// them (the fingerprint of the advisory as listed).
	b.exec(t, `INSERT INTO advisory_dismissals (component_code, advisory_id, reason, severity, affected, fixed_in)
		VALUES ('blog', 'GHSA-kkkk', 'accepted', 'high', '<1.0.1', '1.0.1')`)
	if got := counted(t, b, readmodel.DevSeparate).Counted; got != before-3 {
		t.Errorf("counted %d after three dismissals, want %d", got, before-3)
	}
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Package: "old", AdvisoryID: "MAL-2026-9", Reason: "secrets rotated"}); err != nil {
		t.Fatal(err)
	}
	// GHSA-aaaa stays on k: the dismissal named a.
	want := []string{"malicious:m", "vulnerable:c", "vulnerable:k"}
	if got := attention(t, b, readmodel.DevSeparate); !slices.Equal(got, want) {
		t.Errorf("attention = %v, want %v", got, want)
	}
	if err := b.st.UndismissTreeAdvisory(ctx, "a", "GHSA-aaaa", 0); err != nil {
		t.Fatal(err)
	}
	if got := attention(t, b, readmodel.DevSeparate); !slices.Contains(got, "vulnerable:a") {
		t.Errorf("attention = %v after the dismissal of GHSA-aaaa on a was undone", got)
	}
	if n := b.count(t, `SELECT count(*) FROM audit_log WHERE action IN ($1, $2) AND detail ? 'package'`,
		readmodel.AuditAdvisoryDismiss, readmodel.AuditAdvisoryUndismiss); n != 4 {
		t.Errorf("%d audit rows naming a package, want 4", n)
	}
}
