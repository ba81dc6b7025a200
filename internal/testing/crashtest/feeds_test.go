//go:build crash

package crashtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// The feed scenarios' advisories: blog's is in the first sync, forms's
// only in the archive a killed sync was bringing (its modified time the
// newest of all, so that the cursor moves when it is stored).
const (
	blogAdvisory  = "GHSA-c2c2-c2c2-c2c2"
	formsAdvisory = "GHSA-f3f3-f3f3-f3f3"
	newestRecord  = "2026-11-30T00:00:00Z"
	feedSeed      = 24
	baseRecords   = 1000 // generated records of the first sync, besides blog's
)

var modifiedRE = regexp.MustCompile(`"modified": "[^"]*"`)

func blogRecord() []byte {
	return osvgen.Record(blogAdvisory, "crash-blog", osvgen.KindVuln, "", "9.0.0", "CVE-2026-24001")
}

func formsRecord() []byte {
	rec := osvgen.Record(formsAdvisory, "crash-forms", osvgen.KindVuln, "", "9.0.0", "CVE-2026-24002")
	return modifiedRE.ReplaceAll(rec, []byte(`"modified": "`+newestRecord+`"`))
}

// archive is blog's record (and forms's first, when withForms) and the
// first n generated records: the same bytes whenever it is made again.
func archive(n int, withForms bool) func(func(string, []byte) bool) {
	return func(yield func(string, []byte) bool) {
		if withForms && !yield(formsAdvisory, formsRecord()) {
			return
		}
		if !yield(blogAdvisory, blogRecord()) {
			return
		}
		for id, rec := range osvgen.Records(osvgen.Spec{N: n, Seed: feedSeed, MalShare: 0.1}) {
			if !yield(id, rec) {
				return
			}
		}
	}
}

// setArchive serves archive(n, withForms) on fs and returns its ids, taken
// as the feed server reads the records: the test process builds each
// archive once (under -race, building and zipping the records is most of
// these scenarios' time).
func setArchive(fs *feedserver.Server, n int, withForms bool) []string {
	var ids []string
	fs.SetRecords(func(yield func(string, []byte) bool) {
		for id, rec := range archive(n, withForms) {
			ids = append(ids, id)
			if !yield(id, rec) {
				return
			}
		}
	})
	return ids
}

// feedSite installs a core and two plugins whose manifest entries name
// their npm packages, with the feed server's archive as the osv feed
// (spooled under a directory of the test's, returned), and runs a first
// check: it syncs the feed (baseRecords and blog's record) before it
// evaluates, so blog's result has blog's advisory and forms's none.
func feedSite(t *testing.T, d *pgtest.DB, pub *publisher.Publisher, fs *feedserver.Server) (env, string) {
	t.Helper()
	e := baseEnv(d)
	fs.ModifiedCSV(false) // every sync reads the whole archive: the download is what these tests kill
	setArchive(fs, baseRecords, false)
	pub.Set("/feeds.json", document(1, `"core": {"releases": [{"version": "1.0.0"}]},
		"blog": {"releases": [{"version": "1.0.0"}]}, "forms": {"releases": [{"version": "1.0.0"}]}`))
	path := manifest(t, fmt.Sprintf(`{"components": [
		{"code": "core", "name": "Core", "version": "1.0.0", "source": "%[1]s/feeds.json"},
		{"code": "blog", "name": "Blog", "version": "1.0.0", "source": "%[1]s/feeds.json", "package": "crash-blog"},
		{"code": "forms", "name": "Forms", "version": "1.0.0", "source": "%[1]s/feeds.json", "package": "crash-forms"}]}`, pub.URL))
	dir := t.TempDir()
	e = e.with("UPCHECK_MANIFEST", path, "UPCHECK_FEEDS", "osv="+fs.ArchiveURL(), "UPCHECK_FEED_DIR", dir)
	if code := start(t, e, "components", "sync").wait(60 * time.Second); code != 0 {
		t.Fatalf("components sync: exit %d", code)
	}
	if p := start(t, e, "check"); p.wait(120*time.Second) != 0 {
		t.Fatalf("first check: exit %d; %s", p.code, p.line())
	}
	s := feedState(t, d)
	if s.records != baseRecords+1 || !strings.Contains(s.results["blog"], blogAdvisory) || strings.Contains(s.results["forms"], formsAdvisory) ||
		s.cursor == "" || s.lastSuccess.IsZero() {
		t.Fatalf("after the first check: %+v; want %d records, blog's advisory on blog, a cursor and a success", s, baseRecords+1)
	}
	return e, dir
}

// osvState is what a feed sync may change, as the database says it.
type osvState struct {
	records, distinct, pending int
	cursor                     string
	lastSuccess                time.Time
	results                    map[string]string // code → its result's advisories (JSON)
	pendingCodes               string
}

func feedState(t *testing.T, d *pgtest.DB) osvState {
	t.Helper()
	var s osvState
	d.QueryRow(t, `SELECT (SELECT count(*) FROM osv_records), (SELECT count(DISTINCT id) FROM osv_records),
		(SELECT count(*) FROM intel_pending), (SELECT coalesce(string_agg(feed || ':' || code, ',' ORDER BY code), '') FROM intel_pending),
		coalesce(cursor, ''), coalesce(last_success_at, 'epoch') FROM feeds WHERE kind = 'osv'`).
		Scan(&s.records, &s.distinct, &s.pending, &s.pendingCodes, &s.cursor, &s.lastSuccess)
	s.results = map[string]string{}
	rows, err := d.Pool.Query(t.Context(), `SELECT code, advisories::text FROM component_results ORDER BY code`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var code, adv string
		if err := rows.Scan(&code, &adv); err != nil {
			t.Fatal(err)
		}
		s.results[code] = adv
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// feedHistory is the osv feed's syncs, oldest first, as "trigger:status".
func feedHistory(t *testing.T, d *pgtest.DB) string {
	t.Helper()
	return query[string](t, d, `SELECT string_agg(trigger || ':' || status, ' ' ORDER BY id) FROM feed_syncs WHERE kind = 'osv'`)
}

// feedResult is the one FeedResult line a `feed sync` printed.
func feedResult(t *testing.T, p *proc) feedsync.Result {
	t.Helper()
	var r feedsync.Result
	if err := json.Unmarshal([]byte(p.line()), &r); err != nil {
		t.Fatalf("feed sync printed %q: %v", p.line(), err)
	}
	return r
}

// unchangedByTheKill: the killed sync moved neither the cursor nor the
// last success, and no result changed (nothing evaluated since).
func unchangedByTheKill(t *testing.T, before, after osvState) {
	t.Helper()
	if after.cursor != before.cursor || !after.lastSuccess.Equal(before.lastSuccess) {
		t.Errorf("the killed sync moved the feed: cursor %q → %q, last success %s → %s",
			before.cursor, after.cursor, before.lastSuccess, after.lastSuccess)
	}
	for code, adv := range before.results {
		if after.results[code] != adv {
			t.Errorf("%s's result changed with no evaluation:\n  before %s\n  after  %s", code, adv, after.results[code])
		}
	}
}

// theRetryCompleted: every record of the archive stored once, the cursor
// at forms's record, the interruption cleared, pending empty, forms's
// result with its new advisory and blog's as it was.
func theRetryCompleted(t *testing.T, d *pgtest.DB, before osvState, ids []string) {
	t.Helper()
	after := feedState(t, d)
	stored := query[int64](t, d, `SELECT count(*) FROM osv_records WHERE id = ANY($1)`, ids)
	if after.records != len(ids) || after.distinct != len(ids) || stored != int64(len(ids)) {
		t.Errorf("after the retry: %d records (%d distinct), %d of the archive's %d; want each once", after.records, after.distinct, stored, len(ids))
	}
	if dup := query[int64](t, d, `SELECT count(*) FROM (SELECT id, ecosystem, name FROM osv_packages GROUP BY 1, 2, 3 HAVING count(*) > 1) x`); dup != 0 {
		t.Errorf("%d package rows stored twice", dup)
	}
	if want, _ := time.Parse(time.RFC3339, newestRecord); after.cursor != want.Format(time.RFC3339Nano) || !after.lastSuccess.After(before.lastSuccess) {
		t.Errorf("after the retry: cursor %q (was %q), last success %s (was %s); want the newest record's time and a later success",
			after.cursor, before.cursor, after.lastSuccess, before.lastSuccess)
	}
	var interrupted *time.Time
	var lastError *string
	d.QueryRow(t, `SELECT interrupted_at, last_error FROM feeds WHERE kind = 'osv'`).Scan(&interrupted, &lastError)
	if interrupted != nil || lastError != nil || after.pending != 0 {
		t.Errorf("after the retry: interrupted %v, last error %v, pending %s; want all cleared", interrupted, lastError, after.pendingCodes)
	}
	if !strings.Contains(after.results["forms"], formsAdvisory) {
		t.Errorf("forms's result lacks its new advisory after the retry (the pending re-evaluation did not happen): %s", after.results["forms"])
	}
	if after.results["blog"] != before.results["blog"] {
		t.Errorf("blog's result changed though no record of its package did:\n  %s\n  %s", before.results["blog"], after.results["blog"])
	}
}

// spooled is the size of the largest archive being downloaded under dir.
func spooled(dir string) (int64, []string) {
	matches, _ := filepath.Glob(filepath.Join(dir, "upcheck-feed-*.download"))
	var largest int64
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	return largest, matches
}

// Feed scenario 1: `feed sync` SIGKILLed while it downloads a changed
// archive served slowly. Nothing moved: the records, the results, the
// cursor and the last success are the first sync's, and the sync's row
// stays "running". The retry (after the lease expired) records the
// interruption, finds every stored record unchanged, stores the new one,
// re-evaluates forms and moves the cursor.
func TestFeedKilledDuringDownload(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := publisher.New(t)
	fs := feedserver.New(t)
	e, dir := feedSite(t, d, pub, fs)
	before := feedState(t, d)

	ids := setArchive(fs, baseRecords, true)
	fs.Slow(feedserver.ArchivePath, 16<<10)
	a := start(t, e, "feed", "sync")
	fs.AwaitRequests(t, feedserver.ArchivePath, 2, 30*time.Second) // the first check's, then this one's
	wait.True(t, "the archive's download to be under way", 30*time.Second, func() bool {
		n, _ := spooled(dir)
		return n > 0
	})
	a.signal(syscall.SIGKILL)
	if code := a.wait(5 * time.Second); code != -int(syscall.SIGKILL) {
		t.Fatalf("killed feed sync: exit %d", code)
	}
	// The killed download left its file (nothing runs on SIGKILL). Made
	// old, as a kill's leftover found by a later day's sync, the retry must
	// remove it; a recent one may be a live download of another process
	// sharing the directory, and must stay.
	size, left := spooled(dir)
	if len(left) != 1 {
		t.Fatalf("the killed download left %d files, want its one: %v", len(left), left)
	}
	t.Logf("the killed download left %d bytes in %s", size, filepath.Base(left[0]))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(left[0], old, old); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "upcheck-feed-live.download")
	if err := os.WriteFile(live, []byte("PK"), 0o600); err != nil {
		t.Fatal(err)
	}

	after := feedState(t, d)
	unchangedByTheKill(t, before, after)
	if after.records != before.records || after.pending != 0 {
		t.Errorf("after a kill during the download: %d records (was %d), pending %q; want nothing stored", after.records, before.records, after.pendingCodes)
	}
	if h := feedHistory(t, d); h != "check:completed cli:running" {
		t.Errorf("history after the kill = %s, want the killed sync still running", h)
	}
	if code := start(t, e, "feed", "sync").wait(30 * time.Second); code != 3 {
		t.Errorf("feed sync while the killed one's lease is live: exit %d, want 3 (busy)", code)
	}

	// The retry, once the lease expired: held at the archive, so that what
	// it recorded when it began can be read.
	fs.Slow(feedserver.ArchivePath, 0)
	release, arrived := fs.Hold(feedserver.ArchivePath)
	defer release()
	waitLeaseExpired(t, d, 6*time.Second)
	// Before any sync records it, the read model says the sync whose lease
	// is gone was interrupted (Source health, the API, /metrics).
	if shown := query[bool](t, d, `SELECT interrupted_since IS NOT NULL FROM feed_state WHERE kind = 'osv'`); !shown {
		t.Error("once the killed sync's lease expired, feed_state does not say it was interrupted")
	}
	b := start(t, e, "feed", "sync")
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatalf("the retry did not ask for the archive:\n%s", b.out.String())
	}
	var interrupted *time.Time
	var lastError string
	d.QueryRow(t, `SELECT interrupted_at, coalesce(last_error, '') FROM feeds WHERE kind = 'osv'`).Scan(&interrupted, &lastError)
	if interrupted == nil || !regexp.MustCompile(`^the sync started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC was interrupted before it finished$`).MatchString(lastError) {
		t.Errorf("while the retry runs: interrupted_at %v, last error %q; want the killed sync named", interrupted, lastError)
	}
	if h := feedHistory(t, d); h != "check:completed cli:interrupted cli:running" {
		t.Errorf("history while the retry runs = %s", h)
	}
	release()
	if code := b.wait(60 * time.Second); code != 0 {
		t.Fatalf("retry: exit %d; %s", code, b.line())
	}
	res := feedResult(t, b)
	if res.Status != "completed" || res.Interrupted == nil || !res.Interrupted.Equal(*interrupted) || res.Written != 1 ||
		res.Unchanged != baseRecords+1 || res.Reevaluated < 1 {
		t.Errorf("retry = %+v; want completed, the interruption at %s said, 1 written, %d unchanged, forms evaluated again",
			res, interrupted, baseRecords+1)
	}
	theRetryCompleted(t, d, before, ids)
	if h := feedHistory(t, d); h != "check:completed cli:interrupted cli:completed" {
		t.Errorf("history after the retry = %s", h)
	}
	if _, now := spooled(dir); !slices.Equal(now, []string{live}) {
		t.Errorf("spool directory after the retry = %v; want the killed sync's leftover removed and only the live file kept", now)
	}
}

// storing is the size of the changed archive of feed scenario 2: its
// 2,501 new records (all but the first sync's) fill five of the sync's
// batches (feedsync.BatchSize), so that the test, looking every 2 ms,
// kills it after the first and before the last.
const storing = 3_500

// Feed scenario 2: `feed sync` SIGKILLed while it stores the records of a
// large changed archive (forms's record in its first batch). What the
// killed sync stored stays, each record whole; forms is pending; the
// cursor, the last success and every result are as they were. The retry
// finds what was stored unchanged, stores the rest, re-evaluates forms
// from pending and clears it.
func TestFeedKilledWhileStoring(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := publisher.New(t)
	fs := feedserver.New(t)
	e, _ := feedSite(t, d, pub, fs)
	before := feedState(t, d)
	ids := setArchive(fs, storing, true)

	a := start(t, e, "feed", "sync")
	var seen osvState
	for {
		var n, pending int
		d.QueryRow(t, `SELECT (SELECT count(*) FROM osv_records), (SELECT count(*) FROM intel_pending)`).Scan(&n, &pending)
		if pending > 0 && n > before.records && n < len(ids) {
			a.signal(syscall.SIGKILL)
			seen.records, seen.pending = n, pending
			break
		}
		select {
		case <-a.done:
			t.Fatalf("the sync ended (exit %d) before it could be killed while storing: %d of %d records, %d pending",
				a.code, n, len(ids), pending)
		case <-time.After(2 * time.Millisecond):
		}
	}
	if code := a.wait(5 * time.Second); code != -int(syscall.SIGKILL) {
		t.Fatalf("killed feed sync: exit %d", code)
	}
	after := feedState(t, d)
	t.Logf("killed with %d records stored (%d when seen), %d of them new", after.records, seen.records, after.records-before.records)
	unchangedByTheKill(t, before, after)
	if after.records <= before.records || after.records >= len(ids) || after.distinct != after.records {
		t.Errorf("after the kill: %d records (%d distinct); want some but not all of the %d", after.records, after.distinct, len(ids))
	}
	if after.pendingCodes != "osv:forms" {
		t.Errorf("pending after the kill = %q, want forms's component (its record's batch was stored)", after.pendingCodes)
	}
	if query[int64](t, d, `SELECT count(*) FROM osv_records WHERE id = $1`, formsAdvisory) != 1 {
		t.Error("forms's record, in the first batch, is not stored")
	}
	if torn := query[int64](t, d, `SELECT count(*) FROM osv_records r WHERE NOT EXISTS (SELECT 1 FROM osv_packages p WHERE p.id = r.id)`); torn != 0 {
		t.Errorf("%d records stored without their packages: a batch half-written", torn)
	}
	if h := feedHistory(t, d); h != "check:completed cli:running" {
		t.Errorf("history after the kill = %s, want the killed sync still running", h)
	}

	waitLeaseExpired(t, d, 6*time.Second)
	b := start(t, e, "feed", "sync")
	if code := b.wait(120 * time.Second); code != 0 {
		t.Fatalf("retry: exit %d; %s", code, b.line())
	}
	res := feedResult(t, b)
	if res.Status != "completed" || res.Interrupted == nil || res.Unchanged != after.records || res.Written != len(ids)-after.records ||
		res.Reevaluated < 1 {
		t.Errorf("retry = %+v; want completed, the interruption said, the %d stored unchanged, the other %d written, forms evaluated again",
			res, after.records, len(ids)-after.records)
	}
	theRetryCompleted(t, d, before, ids)
	if h := feedHistory(t, d); h != "check:completed cli:interrupted cli:completed" {
		t.Errorf("history after the retry = %s", h)
	}
	if slices.Contains(strings.Fields(after.pendingCodes), "osv:blog") {
		t.Error("blog was pending though no record of its package changed")
	}
}
