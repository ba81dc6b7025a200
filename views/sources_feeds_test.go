package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Source health lists each feed: what it holds, an interruption in the
// sentence of the read model, the last failure in words (never the
// technical text), the skipped records with their JSON path and how many
// there were; the history lists feed syncs, the interrupted ones saying
// so.
func TestFeedsOnSourceHealthAndHistory(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	feeds := []readmodel.FeedRow{
		{Kind: readmodel.FeedOSV, URL: "http://127.0.0.1:9/all.zip", Records: 201234, LastSuccessAt: ago(26 * time.Hour),
			LastChangeAt: ago(26 * time.Hour), LastError: "sync interrupted", LastErrorKind: string(readmodel.ErrorInterrupted),
			LastErrorArgs: readmodel.FailureArgs{StartedAt: &started}, InterruptedAt: &started, SkippedCount: 3, Failing: true,
			Skipped: []readmodel.SkippedRecord{{ID: "GHSA-<b>bad</b>", Path: "$.affected[0].ranges[0].events", Reason: "an event has no version"}}},
		{Kind: readmodel.FeedEPSS, URL: "http://127.0.0.1:9/epss.csv.gz", LastError: "epss: missing column percentile",
			LastErrorKind: string(readmodel.ErrorSchema), LastErrorArgs: readmodel.FailureArgs{Problem: "the column percentile is missing"}, Failing: true},
		{Kind: readmodel.FeedKEV, URL: "http://127.0.0.1:9/kev.json", Records: 1, LastSuccessAt: ago(time.Hour)},
	}
	root := doc(t, SourceHealth(SourceHealthProps{Layout: layout(calm(), false), Feeds: feeds}))
	rows := byTestID(one(t, root, "feeds"), "feed-row")
	if len(rows) != 3 {
		t.Fatalf("%d feed rows", len(rows))
	}
	if got := text(one(t, rows[0], "feed-interrupted")); !strings.HasPrefix(got, "The sync started 2026-12-01 03:00 UTC was interrupted before it finished.") {
		t.Errorf("interruption %q", got)
	}
	if len(byTestID(rows[0], "feed-problem")) != 0 {
		t.Error("the interruption is said twice")
	}
	if got := text(one(t, rows[0], "feed-records")); got != "201,234 records" {
		t.Errorf("records %q", got)
	}
	if got := text(one(t, rows[0], "feed-skipped")); !strings.Contains(got, "3 records were skipped as malformed by the last sync (the first 1 listed)") ||
		!strings.Contains(got, "GHSA-<b>bad</b> at $.affected[0].ranges[0].events: an event has no version") {
		t.Errorf("skipped %q", got)
	}
	if got := text(one(t, rows[1], "feed-problem")); got != "The file is not of this feed's kind (the column percentile is missing), so nothing of it was stored." {
		t.Errorf("problem %q", got)
	}
	if got := text(one(t, rows[2], "feed-records")); got != "1 entry" {
		t.Errorf("kev records %q", got)
	}
	out := render(t, SourceHealth(SourceHealthProps{Layout: layout(calm(), false), Feeds: feeds}))
	if strings.Contains(out, "missing column percentile") || strings.Contains(out, "<b>bad") {
		t.Error("a raw error or feed markup reached the page")
	}
	if got := text(one(t, doc(t, SourceHealth(SourceHealthProps{Layout: layout(calm(), false)})), "feeds-empty")); !strings.Contains(got, "UPCHECK_FEEDS") {
		t.Errorf("no feeds: %q", got)
	}

	hist := doc(t, History(HistoryProps{Layout: layout(calm(), false), FeedSyncs: []readmodel.FeedSyncRow{
		{Kind: readmodel.FeedOSV, Trigger: "check", StartedAt: started, Status: readmodel.FeedSyncInterrupted, Written: 500},
		{Kind: readmodel.FeedKEV, Trigger: "cli", StartedAt: started.Add(-time.Hour), Status: readmodel.FeedSyncCompleted, Written: 2, Unchanged: 1398},
	}}))
	syncs := byTestID(hist, "feed-sync-row")
	if len(syncs) != 2 {
		t.Fatalf("%d feed syncs", len(syncs))
	}
	if got := text(one(t, syncs[0], "feed-sync-interrupted")); got != "The sync started 2026-12-01 03:00 UTC was interrupted before it finished." {
		t.Errorf("interrupted sync %q", got)
	}
	if got := text(syncs[1]); !strings.Contains(got, "Completed") || !strings.Contains(got, "2 written, 1,398 unchanged") || !strings.Contains(got, "upcheck feed sync") {
		t.Errorf("completed sync %q", got)
	}
}
