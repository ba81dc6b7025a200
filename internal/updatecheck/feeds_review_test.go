package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
)

// Regression tests of a review of the feed sync: each failed before its
// mend (the comments say what went wrong then).

// Before the mend: a JSON file with a "vulnerabilities" array of another shape (NVD's
// CVE API 2.0 answer, a likely wrong URL) is read as a KEV catalogue with
// every entry skipped: the stored catalogue is wiped and the sync "completes".
func TestKEVOfAnotherShapeKeepsTheCatalogue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite()
	b.run(lease.Operator)
	if _, exploited, _ := b.flags("blog"); !exploited {
		t.Fatal("precondition: blog known exploited")
	}
	path := t.TempDir() + "/nvd.json"
	os.WriteFile(path, []byte(`{"resultsPerPage":1,"startIndex":0,"totalResults":1,"format":"NVD_CVE","version":"2.0",
	  "vulnerabilities":[{"cve":{"id":"CVE-2021-44228","published":"2021-12-10T10:15:09.143"}}]}`), 0o600)
	res, err := f.RunLockedFeedImport(context.Background(), readmodel.FeedKEV, path)
	t.Logf("import = %+v, %v", res, err)
	var kev int
	b.db.QueryRow(t, `SELECT count(*) FROM kev_entries`).Scan(&kev)
	_, exploited, _ := b.flags("blog")
	if kev != 1 || !exploited {
		t.Errorf("a file of another schema: status %s, KEV entries now %d (was 1), blog known exploited %v", res.Status, kev, exploited)
	}
}

// Before the mend: dismissing the merged advisory by its GHSA alias through the product
// (catalog.Dismissals) is refused, although docs/feeds.md says a dismissal
// names an advisory by any of its ids and aliases.
func TestDismissByAliasThroughTheProduct(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.feedSite()
	b.run(lease.Operator)
	_, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: blogGHSA, Reason: "not reachable"})
	if errors.Is(err, catalog.ErrNoSuchAdvisory) {
		t.Errorf("Dismiss(blog, %s) = %v; the docs say the GHSA id dismisses the merged advisory", blogGHSA, err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// Before the mend: a manifest sync reads the feeds' knowledge (no KEV yet), pauses; a KEV
// import adds the CVE of blog's advisory. The KEV change marks only the
// components whose *stored* result lists the CVE; blog's stored result (at
// 2.5.0, unaffected) does not, so the sync's result for 2.3.0, evaluated
// without KEV, is accepted and stays: vulnerable, not known exploited.
func TestKEVImportRacingAManifestSync(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite(readmodel.FeedOSV)
	b.run(lease.Operator)
	ctx := context.Background()
	src := b.componentSource("blog")
	core := b.componentSource("core")
	at := func(v string) *manifest.Manifest {
		return &manifest.Manifest{Components: []manifest.Component{
			{Code: "core", Name: "Core", Version: "1.9.0", Source: core},
			{Code: "blog", Name: "Blog", Version: v, Source: src, Package: "@acme/blog"},
			{Code: "forms", Name: "Forms", Version: "1.0.0", Source: src, Package: "@acme/forms"},
		}}
	}
	if _, err := NewSyncer(b.checker).Sync(ctx, at("2.5.0")); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := b.flags("blog"); v {
		t.Fatal("precondition: blog 2.5.0 not vulnerable")
	}
	kevPath := t.TempDir() + "/kev.json"
	kf, _ := os.Create(kevPath)
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	osvgen.WriteKEV(kf, osvgen.KEVCatalog{Released: day, Entries: []osvgen.KEVEntry{{CVE: blogCVE, VendorProject: "Acme", Product: "Blog",
		Name: "Acme Blog RCE", DateAdded: day, RequiredAction: "Apply the update.", DueDate: day.AddDate(0, 0, 21), RansomwareUse: "Known"}}})
	kf.Close()

	read, resume := make(chan struct{}), make(chan struct{})
	paused := false
	b.checker.afterKnowledge = func() {
		if !paused {
			paused = true
			close(read)
			<-resume
		}
	}
	syncErr := make(chan error, 1)
	go func() { _, err := NewSyncer(b.checker).Sync(ctx, at("2.3.0")); syncErr <- err }()
	select {
	case <-read:
	case err := <-syncErr:
		t.Fatalf("sync ended early: %v", err)
	}
	res, err := f.RunLockedFeedImport(ctx, readmodel.FeedKEV, kevPath)
	close(resume)
	if err != nil || res.Status != readmodel.FeedSyncCompleted {
		t.Fatalf("kev import = %+v, %v", res, err)
	}
	if err := <-syncErr; err != nil {
		t.Fatal(err)
	}
	var kev, pending int
	b.db.QueryRow(t, `SELECT count(*) FROM kev_entries`).Scan(&kev)
	b.db.QueryRow(t, `SELECT count(*) FROM intel_pending`).Scan(&pending)
	var evaluated bool
	b.db.QueryRow(t, `SELECT evaluated FROM component_state WHERE code = 'blog'`).Scan(&evaluated)
	vulnerable, exploited, _ := b.flags("blog")
	t.Logf("kev import %+v; kev entries %d, pending %d, blog evaluated %v vulnerable %v exploited %v", res, kev, pending, evaluated, vulnerable, exploited)
	if evaluated && vulnerable && !exploited {
		t.Errorf("blog's CVE %s is in KEV, yet its result (from before the KEV change) stands: not known exploited", blogCVE)
	}
}

// Before the mend: the delta's cursor is the newest "modified" stored; a record that
// reaches the export after a newer one (its "modified" is the upstream's
// time, older than the cursor) is never read by a delta.
func TestDeltaReadsARecordListedLate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSV)
	b.run(lease.Operator)
	ctx := context.Background()
	var cursor string
	b.db.QueryRow(t, `SELECT cursor FROM feeds WHERE kind = 'osv'`).Scan(&cursor)
	c, _ := time.Parse(time.RFC3339Nano, cursor)
	late := withModified(t, osvgen.Record("MAL-2026-2002", "@acme/blog", osvgen.KindMalware, "", ""), c.Add(-time.Hour))
	fs.SetRecords(records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", ""),
		osvgen.Record("GHSA-2222-3333-4444", "@acme/other", osvgen.KindVuln, "", "1.0.1"),
		late,
	))
	res, err := f.RunLockedFeedSync(ctx)
	var n int
	b.db.QueryRow(t, `SELECT count(*) FROM osv_records WHERE id = 'MAL-2026-2002'`).Scan(&n)
	_, _, malicious := b.flags("blog")
	t.Logf("sync = %+v, %v; cursor %s", res, err, cursor)
	if n == 0 || !malicious {
		t.Errorf("the archive now holds MAL-2026-2002 for @acme/blog (modified 1 h before the cursor): stored %d, blog malicious %v, sync says %s", n, malicious, res[0].Status)
	}
}

// Before the mend: one id listed in modified_id.csv whose ID.json answers 404 (deleted,
// or not yet uploaded) fails the sync, and every later one: the cursor
// never moves and the delta never falls back to the archive.
func TestDeltaSkipsARecordTheServerDoesNotHave(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSV)
	b.run(lease.Operator)
	ctx := context.Background()
	future := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
	fs.SetRaw(feedserver.ModifiedPath, []byte(future+",GHSA-gone-gone-gone\n2020-01-01T00:00:00Z,"+blogGHSA+"\n"))
	for i := range 2 {
		res, err := f.RunLockedFeedSync(ctx)
		t.Logf("sync %d = %+v, %v", i, res, err)
		if i == 1 && res[0].Status == readmodel.FeedSyncFailed {
			t.Errorf("sync %d failed again on one missing record: %s", i, res[0].Error)
		}
	}
}

// Before the mend: an import of an older archive overwrites newer stored records (the
// upsert compares hashes only, never "modified").
func TestOlderImportKeepsNewerRecords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSV)
	b.run(lease.Operator)
	ctx := context.Background()
	orig := records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", ""),
	)
	old := t.TempDir() + "/old.zip"
	writeArchive(t, old, orig)
	fixed := withModified(t, osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", "0.0.1"), time.Now())
	fs.SetRecords(records(osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE), fixed))
	if _, err := f.RunLockedFeedSync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, m := b.flags("forms"); m {
		t.Fatal("precondition: forms no longer malicious")
	}
	res, err := f.RunLockedFeedImport(ctx, readmodel.FeedOSV, old)
	_, _, m := b.flags("forms")
	t.Logf("import of the older archive = %+v, %v", res, err)
	if m {
		t.Errorf("importing an older archive brought back the older %s (forms malicious again); written %d", formsMAL, res.Written)
	}
}

// Before the mend: a 304 (or a delta) completes with its own, empty, skipped list,
// replacing the one that says which records are missing from the store.
func TestNotModifiedKeepsTheSkippedRecords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSV)
	fs.ModifiedCSV(false)
	bad := []byte(`{"id": "GHSA-bad0-bad0-bad0", "modified": "2026-01-01T00:00:00Z", "affected": [{"package": {"ecosystem": "npm", "name": "@acme/forms"}, "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "one"}]}]}]}`)
	fs.SetRecords(records(osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE), bad))
	ctx := context.Background()
	for i := range 2 {
		res, _ := f.RunLockedFeedSync(ctx)
		rows, _ := b.store.Feeds(ctx)
		t.Logf("sync %d: %s, Source health skipped_count %d", i, res[0].Status, rows[0].SkippedCount)
		if i == 1 && rows[0].SkippedCount == 0 {
			t.Errorf("after a %s sync Source health lists no skipped record; GHSA-bad0-bad0-bad0 is still not stored", res[0].Status)
		}
	}
}

// withModified is rec with its modified time set to at.
func withModified(t *testing.T, rec []byte, at time.Time) []byte {
	var m map[string]any
	if err := json.Unmarshal(rec, &m); err != nil {
		t.Fatal(err)
	}
	m["modified"] = at.UTC().Format(time.RFC3339Nano)
	out, _ := json.Marshal(m)
	return out
}

// Before the mend: a version installed after an osv-api feed's sync read
// "No known advisory (OSV advisories last read …)" although the API was
// never asked of it. Now the page says its advisories were not read, and
// the next check asks the API again.
func TestOSVAPIVersionInstalledAfterTheSync(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite(readmodel.FeedOSVAPI)
	b.run(lease.Operator)
	ctx := context.Background()
	readAt := func() *time.Time {
		d, err := b.store.ComponentDetail(ctx, store.LocalSite, "blog")
		if err != nil {
			t.Fatal(err)
		}
		return d.OSVReadAt
	}
	if readAt() == nil {
		t.Fatal("blog's advisories read by the API sync are said not read")
	}
	src, core := b.componentSource("blog"), b.componentSource("core")
	if _, err := NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: core},
		{Code: "blog", Name: "Blog", Version: "2.3.1", Source: src, Package: "@acme/blog"},
		{Code: "forms", Name: "Forms", Version: "1.0.0", Source: src, Package: "@acme/forms"},
	}}); err != nil {
		t.Fatal(err)
	}
	if at := readAt(); at != nil {
		t.Errorf("blog 2.3.1, installed after the API was asked, has its advisories read at %v", at)
	}
	due, err := b.store.FeedsDue(ctx, []readmodel.FeedKind{readmodel.FeedOSVAPI}, feedsync.Period)
	if err != nil || len(due) != 1 {
		t.Errorf("osv-api due = %v, %v; want due for the version installed since", due, err)
	}
	if _, err := f.RunLockedFeedSync(ctx); err != nil {
		t.Fatal(err)
	}
	if readAt() == nil {
		t.Error("after the API was asked again, blog's advisories are still said not read")
	}
}

// An archive that cannot be written to UPCHECK_FEED_DIR (here a path
// under a regular file: ENOTDIR, and a missing directory: ENOENT, as
// root's permissions would not stop a write) is the feed's failure, in
// the system's words: the check goes on and completes, the other feeds
// sync, and nothing reads it as the database gone.
func TestFeedDirThatCannotBeWrittenFailsTheFeedOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, reason string }{
		{filepath.Join(file, "feeds"), "not a directory"},
		{filepath.Join(t.TempDir(), "missing"), "no such file or directory"},
	} {
		f.WithDir(c.dir)
		if res := b.run(lease.Operator); res.Status != Completed {
			t.Fatalf("UPCHECK_FEED_DIR %s: check = %+v, want completed", c.dir, res)
		}
		rows, err := b.store.Feeds(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := "upcheck cannot write the archive to UPCHECK_FEED_DIR: " + c.reason + ". Nothing of it was stored."
		for _, r := range rows {
			switch {
			case r.Kind == readmodel.FeedOSV && (r.LastErrorKind != string(readmodel.ErrorFeedDir) || r.LastErrorArgs.Problem != c.reason ||
				readmodel.FeedProblemSentence(r.LastErrorKind, r.LastErrorArgs) != want):
				t.Errorf("UPCHECK_FEED_DIR %s: osv feed's failure %q (%s %+v), want %q", c.dir, r.LastError, r.LastErrorKind, r.LastErrorArgs, want)
			case r.Kind != readmodel.FeedOSV && (r.LastSuccessAt == nil || r.LastError != ""):
				t.Errorf("UPCHECK_FEED_DIR %s: %s feed %+v, want synced", c.dir, r.Kind, r)
			}
		}
		b.db.MustExec(t, `UPDATE feeds SET last_success_at = NULL`) // due again
	}
	var lost int
	b.db.QueryRow(t, `SELECT count(*) FROM check_runs WHERE status <> 'completed'`).Scan(&lost)
	if lost != 0 {
		t.Errorf("%d checks did not complete, want none", lost)
	}
}

// An osv-api sync fetches at most its cap of records (WithAPIMax) one by one (each a GET
// under the lease): past it, the first ones are stored and the sync
// fails saying how many the API named and what the cap is; the next sync
// finds those stored and fetches the following ones, and the sync that
// has no more than the cap left completes and evaluates them all.
func TestOSVAPIFetchesAtMostTheCapPerSync(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSVAPI)
	f.WithAPIMax(3)
	var recs [][]byte
	var ids []string
	for i := range 7 {
		id := fmt.Sprintf("GHSA-%04d-cap0-cap0", i)
		ids = append(ids, id)
		recs = append(recs, osvgen.Record(id, "@acme/blog", osvgen.KindVuln, "", "2.4.0"))
	}
	fs.SetRecords(records(recs...))
	fetched := func() (n int) {
		for _, id := range ids {
			n += fs.Requests(feedserver.APIPath + "/v1/vulns/" + id)
		}
		return n
	}
	ctx := context.Background()
	want := "The API named 7 advisories new or changed, more than the 3 one sync fetches one by one: the first 3 were stored, and the next sync fetches more."
	for sync, c := range []struct {
		named, fetched int
		status         readmodel.FeedSyncStatus
	}{{7, 3, readmodel.FeedSyncFailed}, {4, 6, readmodel.FeedSyncFailed}, {1, 7, readmodel.FeedSyncCompleted}} {
		res, err := f.RunLockedFeedSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Status != c.status || fetched() != c.fetched {
			t.Fatalf("sync %d = %+v with %d records fetched in all; want %s, %d fetched", sync+1, res[0], fetched(), c.status, c.fetched)
		}
		if sync == 0 && !strings.HasPrefix(res[0].Error, want) {
			t.Errorf("the first sync's failure %q, want %q", res[0].Error, want)
		}
	}
	var stored int
	b.db.QueryRow(t, `SELECT count(*) FROM osv_records`).Scan(&stored)
	if stored != 7 {
		t.Errorf("%d records stored, want the 7", stored)
	}
	if b.run(lease.Operator); len(b.advisories("blog")) < 7 {
		t.Errorf("blog's advisories = %d, want the 7 the API named", len(b.advisories("blog")))
	}
}
