package catalog

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// bundle is one test's database and reads.
type bundle struct {
	t     *testing.T
	db    *pgtest.DB
	store *store.Store
	reads *Reads
}

func setup(t *testing.T) *bundle {
	t.Helper()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	return &bundle{t: t, db: d, store: st, reads: New(st)}
}

var update = flag.Bool("update", false, "rewrite golden files")

// The read model over a table of stored states: the summary, the catalog
// (page and its stale and failing filters) and source health, compared with
// golden JSON and with each other. Each state is set up with SQL so its
// timestamps are fixed; "stale" uses dates far in the past, "fresh" ones in
// the far future, so the 48-hour rule does not depend on when the test runs.
func TestReadModelGolden(t *testing.T) {
	t.Parallel()
	const components = `INSERT INTO components (code, name, installed_version, source_url) VALUES
		('core', 'Core', '1.9.0', 'https://p.example/core.json'),
		('blog', 'Blog', '2.3.0', 'https://p.example/acme.json'),
		('forms', 'Forms', '1.0.0', 'https://p.example/acme.json'),
		('local', 'Local', '0.1.0', NULL)`
	// Both sources hold a document ('doc'); results name it by its hash.
	const sources = `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at) VALUES
		('https://p.example/core.json', 1, 'doc', sha256('doc'), '2099-01-02T00:00:00Z', '2099-01-02T00:00:00Z'),
		('https://p.example/acme.json', 1, 'doc', sha256('doc'), '2099-01-03T00:00:00Z', '2099-01-03T00:00:00Z')`
	result := func(code, source, version, core string, update, security bool, advisories string) string {
		ids := "{}" // the ids of the advisories, as the evaluation stores them
		if advisories != "[]" {
			ids = "{ACME-7}"
		}
		return `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash,
			update_available, security, advisories, advisory_ids, epoch)
			VALUES ('` + code + `', '` + source + `', '` + version + `', '` + core + `', sha256('doc'), ` +
			boolSQL(update) + `, ` + boolSQL(security) + `, '` + advisories + `', '` + ids + `', 1)`
	}
	const vulnerable = `[{"id": "ACME-7", "severity": "high", "no_fix": false}]`
	site := []string{components, sources,
		result("core", "https://p.example/core.json", "1.9.0", "1.9.0", true, false, "[]"),
		result("blog", "https://p.example/acme.json", "2.3.0", "1.9.0", true, true, vulnerable),
		result("forms", "https://p.example/acme.json", "1.0.0", "1.9.0", false, false, "[]"),
	}
	with := func(extra ...string) []string { return append(slices.Clone(site), extra...) }
	cases := []struct {
		name string
		sql  []string
	}{
		{"no-components", nil},
		// Installed a moment ago and never read: not stale (never read
		// successfully); 48 hours after the installation, stale.
		{"never-checked", []string{components}},
		{"never-checked-for-48-hours", []string{components,
			`UPDATE components SET created_at = clock_timestamp() - interval '48 hours 1 minute'`}},
		{"one-source-never-succeeded", []string{components,
			`INSERT INTO sources (url, epoch, document, document_hash, last_success_at) VALUES
				('https://p.example/core.json', 1, 'doc', sha256('doc'), '2099-01-02T00:00:00Z')`,
			`INSERT INTO sources (url, epoch, last_attempt_at, last_error, consecutive_failures) VALUES
				('https://p.example/acme.json', 1, '2099-01-03T00:00:00Z', 'fetch: 503', 2)`,
			result("core", "https://p.example/core.json", "1.9.0", "1.9.0", true, false, "[]"),
		}},
		{"all-succeeded", with(
			`INSERT INTO check_runs (trigger, actor, status, started_at, finished_at) VALUES
				('manual', 'a@x', 'completed', '2099-01-04T00:00:00Z', '2099-01-04T00:00:05Z'),
				('manual', 'b@x', 'cooldown', '2099-01-04T00:01:00Z', '2099-01-04T00:01:00Z')`)},
		{"core-counts-once", []string{
			`INSERT INTO components (code, name, installed_version, source_url) VALUES ('core', 'Core', '1.0.0', 'https://p.example/all.json'), ('a', 'A', '1.0.0', 'https://p.example/all.json')`,
			`INSERT INTO sources (url, epoch, document, document_hash, last_success_at) VALUES ('https://p.example/all.json', 1, 'doc', sha256('doc'), '2099-01-01T00:00:00Z')`,
			result("core", "https://p.example/all.json", "1.0.0", "1.0.0", true, true, "[]"),
			result("a", "https://p.example/all.json", "1.0.0", "1.0.0", false, false, "[]"),
		}},
		{"stale", with(`UPDATE sources SET last_success_at = '2020-01-01T00:00:00Z' WHERE url = 'https://p.example/core.json'`)},
		{"result-for-an-old-version-ignored", with(`UPDATE components SET installed_version = '2.4.0' WHERE code = 'blog'`)},
		{"result-for-an-old-core-ignored", with(`UPDATE components SET installed_version = '1.10.0' WHERE code = 'core'`)},
		{"result-from-another-document-ignored", with(`UPDATE sources SET document = 'new', document_hash = sha256('new') WHERE url = 'https://p.example/acme.json'`)},
		{"dismissed-advisory-not-counted", with(`INSERT INTO advisory_dismissals (component_code, advisory_id, reason, severity)
			VALUES ('blog', 'ACME-7', 'accepted', 'high')`)},
		// The document's own expiry passed while its source fails: stale,
		// whatever the last fetch did (freeze protection).
		{"expired-document-failing-source", with(
			`UPDATE sources SET expires_at = '2020-01-01T00:00:00Z', last_error = 'fetch: 503', consecutive_failures = 4,
				last_attempt_at = '2099-01-05T00:00:00Z' WHERE url = 'https://p.example/acme.json'`)},
		// Failing for days, and its results evaluated again since (a sync):
		// still stale and failing, and the oldest success is the fetch's.
		{"reevaluated-failing-source", with(
			`UPDATE sources SET last_success_at = '2020-01-01T00:00:00Z', last_error = 'fetch: 500', consecutive_failures = 30
				WHERE url = 'https://p.example/acme.json'`,
			`UPDATE component_results SET evaluated_at = '2099-01-06T00:00:00Z' WHERE source_url = 'https://p.example/acme.json'`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			for _, sql := range tc.sql {
				b.db.MustExec(t, sql)
			}
			got := b.readModel()
			got.agree(t)
			out, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, '\n')
			path := filepath.Join("testdata", "readmodel", tc.name+".golden.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(out) != string(want) {
				t.Fatalf("read model:\n%s\nwant (%s):\n%s", out, path, want)
			}
		})
	}
}

// readModelView is what every reader of the read model shows.
type readModelView struct {
	Summary readmodel.Summary     `json:"summary"`
	Catalog []store.CatalogEntry  `json:"catalog"`
	Stale   []string              `json:"catalog_stale_filter"`
	Failing []string              `json:"catalog_failing_filter"`
	Attn    []string              `json:"catalog_attention_filter"`
	Sources []readmodel.SourceRow `json:"sources"`
	Details map[string]detailView `json:"details"`
}

type detailView struct {
	Evaluated, Stale, Failing bool
}

func (b *bundle) readModel() readModelView {
	b.t.Helper()
	ctx := context.Background()
	var v readModelView
	var err error
	if v.Summary, err = b.store.Summary(ctx, store.LocalSite, readmodel.DevSeparate); err != nil {
		b.t.Fatal(err)
	}
	if v.Catalog, _, err = ReadPage(ctx, b.store, store.CatalogFilter{Limit: 100}); err != nil {
		b.t.Fatal(err)
	}
	codes := func(status readmodel.Filter) []string {
		entries, counts, err := ReadPage(ctx, b.store, store.CatalogFilter{Status: status, Limit: 100})
		if err != nil {
			b.t.Fatal(err)
		}
		total := counts.Of(status)
		out := []string{}
		for _, e := range entries {
			out = append(out, e.Code)
		}
		if total != len(out) {
			b.t.Fatalf("filter %s: count %d, page %d", status, total, len(out))
		}
		return out
	}
	v.Stale, v.Failing, v.Attn = codes("stale"), codes("failing"), codes("attention")
	if v.Sources, err = b.store.SourceHealth(ctx); err != nil {
		b.t.Fatal(err)
	}
	v.Details = map[string]detailView{}
	for _, e := range v.Catalog {
		d, err := b.reads.Detail(ctx, e.Code)
		if err != nil {
			b.t.Fatal(err)
		}
		v.Details[e.Code] = detailView{Evaluated: d.Evaluated, Stale: d.Stale, Failing: d.Failing}
	}
	return v
}

// agree checks that the readers of the read model cannot contradict each
// other.
func (v readModelView) agree(t *testing.T) {
	t.Helper()
	sourceStale := map[string]bool{}
	failing := 0
	for _, s := range v.Sources {
		sourceStale[s.URL] = s.Stale
		if s.Failing {
			failing++
		}
	}
	if failing != v.Summary.FailingSources {
		t.Errorf("summary says %d failing sources, source health %d", v.Summary.FailingSources, failing)
	}
	stale, updates, security, vulnerable := 0, 0, 0, 0
	for _, e := range v.Catalog {
		if e.Stale {
			stale++
		}
		if e.SourceURL != "" && e.Stale != sourceStale[e.SourceURL] {
			t.Errorf("%s: catalog stale %v, its source's %v", e.Code, e.Stale, sourceStale[e.SourceURL])
		}
		if d := v.Details[e.Code]; d.Stale != e.Stale || d.Evaluated != e.Evaluated || d.Failing != e.Failing {
			t.Errorf("%s: detail %+v, catalog %+v", e.Code, d, e)
		}
		updates += btoi(e.UpdateAvailable)
		security += btoi(e.Security)
		vulnerable += btoi(e.Vulnerable)
	}
	if stale != v.Summary.Stale || stale != len(v.Stale) {
		t.Errorf("stale: summary %d, catalog rows %d, catalog filter %d", v.Summary.Stale, stale, len(v.Stale))
	}
	if updates != v.Summary.UpdatesAvailable || security != v.Summary.SecurityUpdates || vulnerable != v.Summary.Vulnerable {
		t.Errorf("summary %+v disagrees with the catalog (%d updates, %d security, %d vulnerable)", v.Summary, updates, security, vulnerable)
	}
	// The named components are the first of the catalog's attention
	// filter, and the rest are counted.
	if n := len(v.Summary.Attention) + v.Summary.AttentionMore; n != len(v.Attn) {
		t.Errorf("summary names %d and counts %d more, the attention filter shows %v", len(v.Summary.Attention), v.Summary.AttentionMore, v.Attn)
	}
	for _, a := range v.Summary.Attention {
		if !slices.Contains(v.Attn, a.Code) {
			t.Errorf("summary names %s, the attention filter shows %v", a.Code, v.Attn)
		}
	}
	if ns := v.Summary.NeverSucceeded; ns != nil {
		i := slices.IndexFunc(v.Catalog, func(e store.CatalogEntry) bool { return e.Code == ns.Code })
		if i < 0 || v.Catalog[i].SourceURL == "" || v.Catalog[i].LastSuccessAt != nil {
			t.Errorf("summary says %s was never read successfully; catalog %+v", ns.Code, v.Catalog)
		}
	}
	if (v.Summary.NeverSucceeded != nil) != (v.Summary.OldestSuccessAt == nil && slices.ContainsFunc(v.Catalog,
		func(e store.CatalogEntry) bool { return e.SourceURL != "" })) {
		t.Errorf("never succeeded %+v, oldest success %v", v.Summary.NeverSucceeded, v.Summary.OldestSuccessAt)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func boolSQL(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// A burst of requests costs one query: with the tables locked, fifty
// callers wait behind a single read.
func TestSummaryReadsOnceForABurst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	blocker, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec(ctx, "LOCK TABLE components IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	// The cache says when a read begins and when a caller waits for one.
	signals := &b.reads.summary.signals
	signals.began.Init(50)
	signals.waits.Init(50)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if _, err := b.reads.Summary(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wait.True(t, "a summary read waits on the lock", wait.Guard, func() bool {
		var waiting int64
		b.db.QueryRow(t, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting)
		return waiting > 0
	})
	for i := range 50 { // every caller waits for a read: each had its chance to begin one
		signals.waits.Wait(t, fmt.Sprintf("caller %d of 50 waits for a read", i+1), wait.Guard)
	}
	reads := signals.began.Len()
	var waiting int64
	b.db.QueryRow(t, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting)
	blocker.Rollback(ctx)
	wg.Wait()
	if reads != 1 || waiting != 1 {
		t.Fatalf("%d summary reads begun and %d waiting on the lock for 50 callers, want 1", reads, waiting)
	}
}

// The summary's JSON is the summary encoded, with this process's next
// check time as it is now: encoded once per read, it follows both a write
// (Changed) and a new schedule.
func TestSummaryJSONFollowsWritesAndTheSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	agree := func(what string) readmodel.Summary {
		t.Helper()
		sum, err := b.reads.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(sum)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.reads.SummaryJSON(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want)+"\n" {
			t.Fatalf("%s: SummaryJSON\n%s\nwant\n%s", what, got, want)
		}
		return sum
	}
	if sum := agree("first read"); sum.NextCheckAt != nil || sum.Components != 0 {
		t.Fatalf("first read: %+v", sum)
	}
	b.reads.Scheduled(cron.Every(time.Hour))
	if sum := agree("scheduled"); sum.NextCheckAt == nil {
		t.Fatal("scheduled: no next_check_at")
	}
	if _, err := b.db.Pool.Exec(ctx, `INSERT INTO components (code, name, installed_version) VALUES ('blog', 'Blog', '1.0.0')`); err != nil {
		t.Fatal(err)
	}
	b.reads.Changed()
	if sum := agree("written"); sum.Components != 1 {
		t.Fatalf("written: %d components, want 1", sum.Components)
	}
	b.reads.Scheduled(nil)
	if sum := agree("unscheduled"); sum.NextCheckAt != nil {
		t.Fatal("unscheduled: next_check_at still said")
	}
}
