package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

const (
	// The blog's OSV record shares the CVE alias of the publisher's ACME-9
	// (pkgBlogOSV): one advisory, two origins.
	blogGHSA = "GHSA-jfh8-c2jp-5v3q"
	blogCVE  = "CVE-2021-44228"
	formsMAL = "MAL-2026-1001"
)

// records is a record set for the feed server.
func records(recs ...[]byte) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, r := range recs {
			var head struct{ ID string }
			if err := json.Unmarshal(r, &head); err != nil {
				panic(err)
			}
			if !yield(head.ID, r) {
				return
			}
		}
	}
}

// feedSite is the standard site with a feed server: core, blog (the
// package @acme/blog, affected by ACME-9 and its GHSA twin) and forms
// (@acme/forms, matched by a malicious-package record).
func (b *bundle) feedSite(kinds ...readmodel.FeedKind) (*feedserver.Server, *feedsync.Sync) {
	b.t.Helper()
	p := publisher.New(b.t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	p.Set("/acme.json", doc(1, map[string]string{"blog": blogOSV(""), "forms": `{"releases": [{"version": "1.0.0"}]}`}))
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/acme.json", Package: "@acme/blog"},
		manifest.Component{Code: "forms", Name: "Forms", Version: "1.0.0", Source: p.URL + "/acme.json", Package: "@acme/forms"},
	)
	fs := feedserver.New(b.t)
	fs.SetRecords(records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", ""),
		osvgen.Record("GHSA-2222-3333-4444", "@acme/other", osvgen.KindVuln, "", "1.0.1"),
	))
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	fs.SetKEV(osvgen.KEVCatalog{Released: day, Entries: []osvgen.KEVEntry{{CVE: blogCVE, VendorProject: "Acme", Product: "Blog",
		Name: "Acme Blog RCE", DateAdded: day, RequiredAction: "Apply the update.", DueDate: day.AddDate(0, 0, 21), RansomwareUse: "Known"}}})
	fs.SetEPSS(osvgen.EPSSFile{Model: "v2025.03.14", Date: day, Scores: []osvgen.EPSSScore{{CVE: blogCVE, EPSS: 0.97, Percentile: 0.999}}})
	if len(kinds) == 0 {
		kinds = []readmodel.FeedKind{readmodel.FeedOSV, readmodel.FeedKEV, readmodel.FeedEPSS}
	}
	urls := map[readmodel.FeedKind]string{readmodel.FeedOSV: fs.ArchiveURL(), readmodel.FeedKEV: fs.KEVURL(),
		readmodel.FeedEPSS: fs.EPSSURL(), readmodel.FeedOSVAPI: fs.APIURL()}
	var feeds []feed.Feed
	for _, k := range kinds {
		feeds = append(feeds, feed.Feed{Kind: k, URL: urls[k]})
	}
	f := NewFeeds(b.checker, feeds, b.t.TempDir())
	b.checker.UseFeeds(f)
	return fs, f
}

// advisories is the blog's or another component's stored advisories.
func (b *bundle) advisories(code string) []release.AdvisoryMatch {
	b.t.Helper()
	var raw []byte
	b.db.QueryRow(b.t, `SELECT advisories FROM component_results WHERE code = $1`, code).Scan(&raw)
	var out []release.AdvisoryMatch
	if err := json.Unmarshal(raw, &out); err != nil {
		b.t.Fatal(err)
	}
	return out
}

// flags is what component_state says of code.
func (b *bundle) flags(code string) (vulnerable, exploited, malicious bool) {
	b.t.Helper()
	b.db.QueryRow(b.t, `SELECT vulnerable, known_exploited, malicious FROM component_state WHERE code = $1`, code).
		Scan(&vulnerable, &exploited, &malicious)
	return
}

// A check syncs the due feeds, then evaluates: the OSV record sharing the
// publisher's CVE alias is merged into the publisher's advisory (its words
// stand, origins say both), KEV makes it known exploited and EPSS scores
// it, and the malicious-package record makes forms malicious, first in the
// summary; a record of a package nobody installed changes nothing.
func TestCheckMergesTheFeedsAdvisories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.feedSite()
	if res := b.run(lease.Operator); res.Status != Completed {
		t.Fatalf("check = %+v", res)
	}
	advs := b.advisories("blog")
	if len(advs) != 1 {
		t.Fatalf("blog's advisories = %+v, want ACME-9 alone (merged with %s)", advs, blogGHSA)
	}
	a := advs[0]
	if a.ID != "ACME-9" || !slices.Equal(a.Origins, []string{"publisher", "osv"}) || a.Affected != "<2.4.0" {
		t.Errorf("merged advisory = id %s origins %v affected %q, want ACME-9 from publisher and osv, the publisher's range", a.ID, a.Origins, a.Affected)
	}
	if !a.KnownExploited || a.KEV == nil || a.KEV.DueDate != "2026-12-11" || a.KEV.Ransomware != "Known" {
		t.Errorf("merged advisory KEV = %v %+v, want known exploited, due 2026-12-11, ransomware Known", a.KnownExploited, a.KEV)
	}
	if a.EPSS == nil || a.EPSS.Score < 0.969 || a.EPSS.Percentile < 0.998 {
		t.Errorf("merged advisory EPSS = %+v, want 0.97 at the 99.9th percentile", a.EPSS)
	}
	if _, exploited, malicious := b.flags("blog"); !exploited || malicious {
		t.Errorf("blog known exploited %v, malicious %v; want exploited only", exploited, malicious)
	}
	forms := b.advisories("forms")
	if len(forms) != 1 || forms[0].ID != formsMAL || !forms[0].Malicious || !slices.Equal(forms[0].Origins, []string{"osv"}) {
		t.Errorf("forms' advisories = %+v, want %s, malicious, from osv", forms, formsMAL)
	}
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if sum.MaliciousCount() != 1 || sum.Malicious == nil || sum.MalwareReadAt == nil ||
		sum.KnownExploitedCount() != 1 || sum.KnownExploited == nil || sum.ExploitedReadAt == nil || len(sum.Attention) < 2 ||
		sum.Attention[0].Code != "forms" || sum.Attention[0].Kind != readmodel.KindMalicious ||
		sum.Attention[1].Code != "blog" || sum.Attention[1].Kind != readmodel.KindKnownExploited {
		t.Errorf("summary malicious %v (OSV read %v) exploited %v (KEV read %v) attention %+v; want forms (malicious) then blog (exploited)",
			sum.Malicious, sum.MalwareReadAt, sum.KnownExploited, sum.ExploitedReadAt, sum.Attention)
	}
	var stored, pending int
	b.db.QueryRow(t, `SELECT count(*) FROM osv_records`).Scan(&stored)
	b.db.QueryRow(t, `SELECT count(*) FROM intel_pending`).Scan(&pending)
	if stored != 3 || pending != 0 {
		t.Errorf("%d records stored, %d components pending; want 3 and none", stored, pending)
	}

	// A dismissal of the merged advisory covers its known-exploited flag
	// too (one by an alias: TestDismissByAliasThroughTheProduct).
	if _, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-9",
		Reason: "not reachable"}); err != nil {
		t.Fatal(err)
	}
	if vulnerable, exploited, _ := b.flags("blog"); vulnerable || exploited {
		t.Errorf("dismissed: blog vulnerable %v, exploited %v; want neither", vulnerable, exploited)
	}
}

// A dismissal names an advisory by any of its aliases: blog's ACME-9,
// dismissed as GHSA-… (its OSV twin's id), is dismissed.
func TestDismissalByAliasCoversTheMergedAdvisory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.feedSite()
	b.run(lease.Operator)
	b.db.MustExec(t, `INSERT INTO advisory_dismissals (component_code, advisory_id, reason, severity, affected, fixed_in)
		SELECT 'blog', $1, 'accepted', coalesce(a->>'severity', ''), coalesce(a->>'affected', ''), coalesce(a->>'fixed_in', '')
		FROM component_results r, jsonb_array_elements(r.advisories) a WHERE r.code = 'blog'`, strings.ToUpper(blogGHSA))
	if vulnerable, exploited, _ := b.flags("blog"); vulnerable || exploited {
		t.Errorf("dismissed by its alias: blog vulnerable %v, exploited %v; want neither", vulnerable, exploited)
	}
}

// An unchanged feed costs a 304 and writes nothing; an archive imported
// again writes nothing either (every record's bytes hash as stored); one
// changed record is the only one written, and its component is evaluated
// again.
func TestFeedSyncWritesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSV)
	fs.ModifiedCSV(false) // the whole archive, conditionally
	ctx := context.Background()
	b.run(lease.Operator) // reads the documents, syncs the feed
	archives := fs.Requests(feedserver.ArchivePath)
	res, err := f.RunLockedFeedSync(ctx)
	if err != nil || len(res) != 1 || res[0].Status != readmodel.FeedSyncNotModified || res[0].Written != 0 {
		t.Fatalf("second sync = %+v, %v; want not modified, nothing written", res, err)
	}
	if n := fs.NotModified(feedserver.ArchivePath); n != 1 || archives != 1 {
		t.Errorf("%d answers 304 to %d requests after the first, want 1", n, archives)
	}
	path := t.TempDir() + "/all.zip"
	writeArchive(t, path, records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", ""),
		osvgen.Record("GHSA-2222-3333-4444", "@acme/other", osvgen.KindVuln, "", "1.0.1"),
	))
	imp, err := f.RunLockedFeedImport(ctx, readmodel.FeedOSV, path)
	if err != nil || imp.Status != readmodel.FeedSyncCompleted || imp.Written != 0 || imp.Unchanged != 3 || imp.Reevaluated != 0 {
		t.Fatalf("import of the same records = %+v, %v; want completed, 3 unchanged, nothing written or evaluated", imp, err)
	}
	// forms' record now says 1.0.0 is fixed by 1.0.1: only it is written,
	// and forms alone is evaluated again.
	writeArchive(t, path, records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "1.0.1", ""),
		osvgen.Record("GHSA-2222-3333-4444", "@acme/other", osvgen.KindVuln, "", "1.0.1"),
	))
	imp, err = f.RunLockedFeedImport(ctx, readmodel.FeedOSV, path)
	if err != nil || imp.Written != 1 || imp.Unchanged != 2 || imp.Reevaluated != 1 {
		t.Fatalf("import with one change = %+v, %v; want 1 written, 2 unchanged, 1 evaluated again", imp, err)
	}
	if _, _, malicious := b.flags("forms"); malicious {
		t.Error("forms is still malicious after its record stopped affecting 1.0.0")
	}
}

func writeArchive(t *testing.T, path string, recs iter.Seq2[string, []byte]) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := osvgen.WriteArchive(f, recs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// An interrupted sync leaves the cursor, the last success and the
// pending components where they were, and its results unchanged; the next
// sync says it was interrupted, finds what it stored unchanged, still
// re-evaluates every pending component, then clears them and moves on.
func TestInterruptedFeedSyncIsRecordedAndResumed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite(readmodel.FeedOSV)
	b.checker.feeds = nil // the check evaluates without the feeds
	b.run(lease.Operator)
	ctx := context.Background()
	path := t.TempDir() + "/all.zip"
	// 1,200 records: three batches; blog's GHSA record is in the first.
	big := func(yield func(string, []byte) bool) {
		if !yield(blogGHSA, osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE)) {
			return
		}
		for id, rec := range osvgen.Records(osvgen.Spec{N: 1199, Seed: 7}) {
			if !yield(id, rec) {
				return
			}
		}
	}
	writeArchive(t, path, big)
	before := b.advisories("blog")

	stop, cancel := context.WithCancel(ctx)
	batches := 0
	f.AfterBatch(func() {
		if batches++; batches == 1 {
			cancel() // as a process that died after its first batch
		}
	})
	if _, err := f.RunLockedFeedImport(stop, readmodel.FeedOSV, path); err == nil {
		t.Fatal("the interrupted import reported no error")
	}
	f.AfterBatch(nil)
	var status string
	var pending, stored int
	var success *time.Time
	b.db.QueryRow(t, `SELECT status FROM feed_syncs ORDER BY id DESC LIMIT 1`).Scan(&status)
	b.db.QueryRow(t, `SELECT count(*) FROM intel_pending`).Scan(&pending)
	b.db.QueryRow(t, `SELECT count(*) FROM osv_records`).Scan(&stored)
	b.db.QueryRow(t, `SELECT last_success_at FROM feeds WHERE kind = 'osv'`).Scan(&success)
	if status != "running" || pending != 1 || stored != feedsync.BatchSize || success != nil {
		t.Fatalf("after the interruption: sync %s, %d pending, %d stored, last success %v; want running, blog pending, one batch, none",
			status, pending, stored, success)
	}
	if after := b.advisories("blog"); len(after) != len(before) || len(after[0].Origins) != 1 {
		t.Errorf("blog's results changed before any evaluation: %+v", after)
	}

	var res feedsync.Result
	wait.For(t, "the interrupted import's lease to be free", 10*time.Second, func() (bool, error) {
		var err error
		res, err = f.RunLockedFeedImport(ctx, readmodel.FeedOSV, path)
		if errors.Is(err, feedsync.ErrBusy) {
			return false, nil
		}
		return true, err
	})
	if res.Interrupted == nil || res.Status != readmodel.FeedSyncCompleted || res.Unchanged != feedsync.BatchSize ||
		res.Written != 1200-feedsync.BatchSize || res.Reevaluated != 1 {
		t.Fatalf("retry = %+v; want the interruption said, %d unchanged, the rest written, blog evaluated again", res, feedsync.BatchSize)
	}
	b.db.QueryRow(t, `SELECT count(*) FROM intel_pending`).Scan(&pending)
	b.db.QueryRow(t, `SELECT count(*) FROM osv_records`).Scan(&stored)
	var interrupted *time.Time
	b.db.QueryRow(t, `SELECT interrupted_at FROM feeds WHERE kind = 'osv'`).Scan(&interrupted)
	if pending != 0 || stored != 1200 || interrupted != nil {
		t.Errorf("after the retry: %d pending, %d stored, interrupted %v; want none, 1200, cleared", pending, stored, interrupted)
	}
	if a := b.advisories("blog"); len(a) != 1 || !slices.Contains(a[0].Origins, "osv") {
		t.Errorf("blog's advisories after the retry = %+v, want ACME-9 merged with its OSV record", a)
	}
	var statuses []string
	rows, err := b.db.Pool.Query(ctx, `SELECT status FROM feed_syncs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, s)
	}
	if want := []string{"interrupted", "completed"}; !slices.Equal(statuses, want) {
		t.Errorf("feed history = %v, want %v", statuses, want)
	}
}

// A malformed record is skipped and listed with its id and JSON path, and
// a record over the cap with its size; the others are stored. A zip bomb,
// a KEV file of another schema and an EPSS file without its columns
// change nothing and say why.
func TestBadFeedInputIsSkippedOrRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite()
	f.WithLimits(feed.Limits{MaxRecord: 64 << 10, MaxUncompressed: 32 << 20})
	ctx := context.Background()
	good := osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE)
	bad := []byte(`{"id": "GHSA-bad0-bad0-bad0", "modified": "2026-01-01T00:00:00Z", "affected": [{"package": {"ecosystem": "npm", "name": "@acme/forms"}, "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "one"}]}]}]}`)
	long := osvgen.LongRecord("GHSA-long-long-long", "@acme/forms", 10<<20)
	fs.SetRecords(records(good, bad, long))
	res, err := f.RunLockedFeedSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != readmodel.FeedSyncCompleted || res[0].Written != 1 || res[0].Skipped != 2 {
		t.Fatalf("osv sync = %+v, want completed with 1 written and 2 skipped", res[0])
	}
	rows, err := b.store.Feeds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	skipped := fmt.Sprint(rows[0].Skipped)
	if !strings.Contains(skipped, "GHSA-bad0-bad0-bad0 affected[0].ranges[0].events[1]") || !strings.Contains(skipped, "GHSA-long-long-long") {
		t.Errorf("skipped = %s, want the malformed record with its path and the long one", skipped)
	}

	// Nothing below may change what is stored.
	var hashes string
	b.db.QueryRow(t, `SELECT string_agg(id || encode(hash, 'hex'), ',' ORDER BY id) FROM osv_records`).Scan(&hashes)
	bomb := t.TempDir() + "/bomb.zip"
	bf, err := os.Create(bomb)
	if err != nil {
		t.Fatal(err)
	}
	if err := osvgen.WriteZipBomb(bf, "GHSA-boom-boom-boom.json", 64<<20); err != nil {
		t.Fatal(err)
	}
	bf.Close()
	imp, err := f.RunLockedFeedImport(ctx, readmodel.FeedOSV, bomb)
	if err != nil || imp.Status != readmodel.FeedSyncFailed || !strings.Contains(imp.Error, "archive") {
		t.Errorf("zip bomb import = %+v, %v; want failed, saying the archive could not be read", imp, err)
	}
	fs.SetRaw(feedserver.KEVPath, []byte(`{"model_version": "v1", "scores": []}`))
	fs.SetRaw(feedserver.EPSSPath, []byte("#model_version:v1,score_date:2026-11-20T00:00:00+0000\ncve,score\nCVE-2021-44228,0.5\n"))
	res, err = f.RunLockedFeedSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res[1:] {
		if r.Status != readmodel.FeedSyncFailed || !strings.Contains(r.Error, "not of this feed's kind") {
			t.Errorf("%s sync of another schema = %+v, want failed, saying so", r.Kind, r)
		}
	}
	var after string
	b.db.QueryRow(t, `SELECT string_agg(id || encode(hash, 'hex'), ',' ORDER BY id) FROM osv_records`).Scan(&after)
	var kev, epss int
	b.db.QueryRow(t, `SELECT count(*) FROM kev_entries`).Scan(&kev)
	b.db.QueryRow(t, `SELECT count(*) FROM epss_scores`).Scan(&epss)
	if after != hashes || kev != 1 || epss != 1 {
		t.Errorf("bad input changed what was stored: records %v, KEV %d, EPSS %d", after != hashes, kev, epss)
	}
}

// A result evaluated from the feeds' advisories as they were before a
// batch that affects the component is refused: a manifest sync that read
// them first cannot overwrite the batch's re-evaluation.
func TestResultFromOlderAdvisoriesIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite(readmodel.FeedOSV)
	ctx := context.Background()
	b.run(lease.Operator)
	old, err := b.checker.knowledge(ctx, []string{"@acme/blog"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.RunLockedFeedImport(ctx, readmodel.FeedOSV, func() string {
		path := t.TempDir() + "/all.zip"
		writeArchive(t, path, records(osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.5.0", blogCVE)))
		return path
	}()); err != nil {
		t.Fatal(err)
	}
	src, err := b.store.Source(ctx, b.componentSource("blog"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := storedDocument(src, "", updatedoc.KeySet{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := evaluateOne(d, old, store.ComponentInput{Site: store.LocalSite, Code: "blog", InstalledVersion: "2.3.0", CoreVersion: "1.9.0", Package: "@acme/blog"}, src.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	var written []store.ComponentKey
	if err := b.lease.WithLock(ctx, func(tx *store.Tx) error {
		var err error
		written, err = tx.ResultWrite(ctx, []store.Result{r})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(written) != 0 {
		t.Errorf("a result evaluated with the feeds' version %d was written after a change affecting blog", old.version)
	}
}

func (b *bundle) componentSource(code string) string {
	b.t.Helper()
	var url string
	b.db.QueryRow(b.t, `SELECT source_url FROM components WHERE code = $1`, code).Scan(&url)
	return url
}

// With a modified_id.csv beside the archive, a feed synced before reads
// only the records modified since its cursor, one by one, and not the
// archive.
func TestFeedDeltaReadsOnlyTheModifiedRecords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSV)
	ctx := context.Background()
	b.run(lease.Operator) // reads the documents, syncs the feed
	archives := fs.Requests(feedserver.ArchivePath)
	res, err := f.RunLockedFeedSync(ctx)
	if err != nil || res[0].Status != readmodel.FeedSyncNotModified || fs.Requests(feedserver.ArchivePath) != archives {
		t.Fatalf("a sync with nothing modified = %+v, %v (archive fetched %d more times); want not modified, no archive",
			res, err, fs.Requests(feedserver.ArchivePath)-archives)
	}
	changed := osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "1.0.1", "")
	var rec map[string]any
	if err := json.Unmarshal(changed, &rec); err != nil {
		t.Fatal(err)
	}
	rec["modified"] = time.Now().UTC().Format(time.RFC3339Nano) // newer than the cursor
	changed, _ = json.Marshal(rec)
	fs.SetRecords(records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		changed,
		osvgen.Record("GHSA-2222-3333-4444", "@acme/other", osvgen.KindVuln, "", "1.0.1"),
	))
	formsFetched := fs.Requests(feedserver.RecordPath(formsMAL))
	res, err = f.RunLockedFeedSync(ctx)
	if err != nil || res[0].Written != 1 || res[0].Reevaluated != 1 {
		t.Fatalf("delta sync = %+v, %v; want forms' record written and forms evaluated again", res, err)
	}
	if n := fs.Requests(feedserver.ArchivePath); n != archives {
		t.Errorf("the delta fetched the archive (%d requests, %d before)", n, archives)
	}
	if n := fs.Requests(feedserver.RecordPath(formsMAL)) - formsFetched; n != 1 {
		t.Errorf("forms' record fetched %d times by the delta, want once", n)
	}
	if _, _, malicious := b.flags("forms"); malicious {
		t.Error("forms is still malicious after the delta")
	}
}

// An OSV-compatible API is asked for the installed packages and versions;
// the records it names are fetched once, and again only when modified.
func TestFeedFromAnOSVAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSVAPI)
	b.run(lease.Operator)
	if a := b.advisories("blog"); len(a) != 1 || !slices.Equal(a[0].Origins, []string{"publisher", "osv"}) {
		t.Fatalf("blog's advisories from the API = %+v, want ACME-9 merged with its OSV record", a)
	}
	if _, _, malicious := b.flags("forms"); !malicious {
		t.Error("forms is not malicious after the API named its MAL record")
	}
	var stored int
	b.db.QueryRow(t, `SELECT count(*) FROM osv_records`).Scan(&stored)
	if stored != 2 {
		t.Errorf("%d records stored, want the 2 of installed packages (not @acme/other's)", stored)
	}
	fetched := fs.Requests(feedserver.APIPath + "/v1/vulns/" + formsMAL)
	if fetched != 1 {
		t.Fatalf("forms' record fetched %d times by the first sync, want once", fetched)
	}
	res, err := f.RunLockedFeedSync(context.Background())
	if err != nil || res[0].Status != readmodel.FeedSyncCompleted || res[0].Unchanged != 2 || res[0].Written != 0 {
		t.Fatalf("second API sync = %+v, %v; want 2 unchanged, none fetched", res, err)
	}
	if n := fs.Requests(feedserver.APIPath + "/v1/vulns/" + formsMAL); n != fetched {
		t.Errorf("an unmodified record was fetched again (%d, then %d)", fetched, n)
	}
}

// A manifest sync and a feed import race, the sync paused between reading
// the feeds' advisories and writing what it evaluated from them, while the
// import stores forms' changed record and evaluates forms again: the
// sync's write, from older advisories, is refused, and the sync evaluates
// forms once more from what holds now. Without the refusal the stale
// result would land after the newer one and stay.
func TestFeedImportRacingAManifestSync(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite(readmodel.FeedOSV)
	b.checker.feeds = nil
	b.run(lease.Operator)
	ctx := context.Background()
	dir := t.TempDir()
	affects, fixed := dir+"/all.zip", dir+"/fixed.zip"
	writeArchive(t, affects, records(osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", "")))
	writeArchive(t, fixed, records(osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", "0.0.1")))
	if _, err := f.RunLockedFeedImport(ctx, readmodel.FeedOSV, affects); err != nil {
		t.Fatal(err)
	}
	src := b.componentSource("forms")
	site := &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: b.componentSource("core")},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: src, Package: "@acme/blog"},
		{Code: "forms", Name: "Forms", Version: "1.0.1", Source: src, Package: "@acme/forms"},
	}}
	read, resume := make(chan struct{}), make(chan struct{})
	paused := false
	b.checker.afterKnowledge = func() {
		if !paused { // the first read only: later rounds run freely
			paused = true
			close(read)
			<-resume
		}
	}
	syncErr := make(chan error, 1)
	go func() {
		_, err := NewSyncer(b.checker).Sync(ctx, site)
		syncErr <- err
	}()
	select {
	case <-read:
	case err := <-syncErr:
		t.Fatalf("the sync ended (%v) without evaluating forms", err)
	}
	res, err := f.RunLockedFeedImport(ctx, readmodel.FeedOSV, fixed)
	close(resume)
	if err != nil || res.Written != 1 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	if err := <-syncErr; err != nil {
		t.Fatal(err)
	}
	var evaluated, malicious bool
	b.db.QueryRow(t, `SELECT evaluated, malicious FROM component_state WHERE code = 'forms'`).Scan(&evaluated, &malicious)
	if !evaluated || malicious {
		t.Errorf("forms evaluated %v, malicious %v; want evaluated from the record that no longer affects it", evaluated, malicious)
	}
}
