package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// The catalog counts a component's dismissed advisories and the soonest
// end among them, and its "dismissed" filter shows the components that
// have one, on a real database (queries/catalog.sql).
func TestCatalogCountsDismissedAdvisories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u := b.site(t)
	entry := func() (store.CatalogEntry, store.CatalogCounts) {
		t.Helper()
		entries, counts, err := catalog.ReadPage(ctx, b.st, store.CatalogFilter{Status: readmodel.FilterDismissed, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Code == "blog" {
				return e, counts
			}
		}
		return store.CatalogEntry{}, counts
	}
	if e, counts := entry(); e.Code != "" || counts.Dismissed != 0 {
		t.Fatalf("before any dismissal: %+v, %d dismissed", e, counts.Dismissed)
	}
	dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", UserID: u.ID, Reason: "WAF"})
	e, counts := entry()
	if e.Dismissed != 1 || e.DismissedUntil != nil || counts.Dismissed != 1 || counts.Of(readmodel.FilterDismissed) != 1 {
		t.Fatalf("one dismissal with no end: %d dismissed until %v, filter count %d", e.Dismissed, e.DismissedUntil, counts.Dismissed)
	}
	until := time.Now().Add(20 * 24 * time.Hour).UTC().Truncate(time.Second)
	dismiss(t, b.st, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-2", UserID: u.ID, Reason: "low", ExpiresAt: &until})
	if e, _ := entry(); e.Dismissed != 2 || e.DismissedUntil == nil || !e.DismissedUntil.Equal(until) {
		t.Fatalf("two dismissals, one ending: %d dismissed until %v, want 2 until %v", e.Dismissed, e.DismissedUntil, until)
	}
	// The core, with nothing dismissed, is not shown by the filter.
	all, _, err := catalog.ReadPage(ctx, b.st, store.CatalogFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		if e.Code == "core" && e.Dismissed != 0 {
			t.Errorf("core counts %d dismissed advisories", e.Dismissed)
		}
	}
}

// The summary counts the sources in use for which no key is pinned
// (source_state.unsigned), beside the untrusted ones.
func TestSummaryCountsUnsignedSources(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.exec(t, `INSERT INTO components (code, name, installed_version, source_url, pinned_key) VALUES
		('a', 'A', '1.0', 'https://a.example/u.json', NULL),
		('b', 'B', '1.0', 'https://b.example/u.json', NULL),
		('c', 'C', '1.0', 'offline:c', NULL),
		('d', 'D', '1.0', 'https://d.example/u.json', 'ed25519:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='),
		('local', 'Local', '1.0', NULL, NULL)`)
	sum, err := b.st.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if sum.UnsignedSources != 3 || sum.UntrustedSources != 0 {
		t.Fatalf("unsigned %d, untrusted %d; want 3 unsigned of 4 sources, 0 untrusted", sum.UnsignedSources, sum.UntrustedSources)
	}
}

// A run records how many of the sources it did not finish it had fetched
// (sources_unwritten), and the history reads it back.
func TestRunRecordsSourcesFetchedButNotWritten(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id, err := b.st.CheckRunStart(ctx, "manual", "ada@example.org", uuid.New(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.CheckRunFinish(ctx, id, "cancelled", store.RunCounts{Fetched: 1, Skipped: 3, Unwritten: 2}, ""); err != nil {
		t.Fatal(err)
	}
	runs, err := b.st.Runs(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Skipped != 3 || runs[0].Unwritten != 2 {
		t.Fatalf("runs %+v", runs)
	}
}
