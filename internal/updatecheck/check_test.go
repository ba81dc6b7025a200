package updatecheck

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// bundle is one test's database, checker and helpers; the checker tells
// reads of its writes, as serve wires it.
type bundle struct {
	t          *testing.T
	db         *pgtest.DB
	store      *store.Store
	lease      *lease.Manager
	fetcher    *fetch.Fetcher
	checker    *Checker
	reads      *catalog.Reads
	dismissals *catalog.Dismissals
}

func setup(t *testing.T) *bundle {
	t.Helper()
	d := pgtest.New(t)
	b := &bundle{t: t, db: d, store: store.New(d.Pool)}
	b.lease = b.newLease(lease.Timings(testkit.Timings()))
	b.fetcher = fetch.New(fetch.Config{AllowPrivate: true, Timeout: 3 * time.Second, RetryDelay: 50 * time.Millisecond, MaxBody: 64 << 10}, slog.Default())
	t.Cleanup(b.fetcher.Close)
	b.checker = New(b.store, b.lease, b.fetcher, slog.Default())
	b.reads = catalog.New(b.store)
	b.checker.TellReads(b.reads)
	b.dismissals = catalog.NewDismissals(b.store, b.reads)
	return b
}

func (b *bundle) newLease(t lease.Timings) *lease.Manager {
	m, err := lease.New(b.store, t, lease.WithLogger(slog.Default()))
	if err != nil {
		b.t.Fatal(err)
	}
	return m
}

// otherInstance is a second checker on the same database.
func (b *bundle) otherInstance() *Checker {
	return New(b.store, b.newLease(lease.Timings(testkit.Timings())), b.fetcher, slog.Default())
}

func (b *bundle) sync(components ...manifest.Component) SyncReport {
	b.t.Helper()
	rep, err := NewSyncer(b.checker).Sync(context.Background(), &manifest.Manifest{Components: components})
	if err != nil {
		b.t.Fatal(err)
	}
	return rep
}

func (b *bundle) run(trigger lease.Trigger) Result {
	b.t.Helper()
	res, err := b.checker.RunLockedUpdateCheck(context.Background(), trigger, "test")
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// resultRow is what the tests read back of the read model
// (component_state), with the epoch of the result row behind it.
type resultRow struct {
	Code, Installed, Latest, Update, LastError string
	UpdateAvailable, Security, Vulnerable      bool
	NeedsNewerCore, HasSuccess, Evaluated      bool
	Stale                                      bool
	Epoch                                      int64
}

func (b *bundle) results() map[string]resultRow {
	b.t.Helper()
	rows, err := b.db.Pool.Query(context.Background(), `
		SELECT cs.code, cs.installed_version, coalesce(cs.latest_version, ''), coalesce(cs.update_version, ''),
		       coalesce(cs.last_error, cs.eval_error, ''), cs.update_available, cs.security, cs.vulnerable,
		       cs.needs_newer_core, cs.last_success_at IS NOT NULL, cs.evaluated, cs.stale,
		       CASE WHEN cs.evaluated THEN r.epoch ELSE 0 END
		FROM component_state cs LEFT JOIN component_results r ON r.code = cs.code`)
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]resultRow{}
	for rows.Next() {
		var r resultRow
		if err := rows.Scan(&r.Code, &r.Installed, &r.Latest, &r.Update, &r.LastError, &r.UpdateAvailable,
			&r.Security, &r.Vulnerable, &r.NeedsNewerCore, &r.HasSuccess, &r.Evaluated, &r.Stale, &r.Epoch); err != nil {
			b.t.Fatal(err)
		}
		out[r.Code] = r
	}
	if rows.Err() != nil {
		b.t.Fatal(rows.Err())
	}
	return out
}

type sourceRow struct {
	Sequence            int64
	LastError           string
	LastErrorKind       string
	LastErrorArgs       readmodel.FailureArgs
	ConsecutiveFailures int
	HasDocument         bool
	Epoch               int64
	SignatureState      string
}

func (b *bundle) source(url string) sourceRow {
	b.t.Helper()
	var s sourceRow
	var args []byte
	b.db.QueryRow(b.t, `
		SELECT coalesce(sequence, -1), coalesce(last_error, ''), coalesce(last_error_kind, ''), last_error_args,
		       consecutive_failures, document IS NOT NULL, epoch, signature_state
		FROM sources WHERE url = $1`, url).Scan(&s.Sequence, &s.LastError, &s.LastErrorKind, &args,
		&s.ConsecutiveFailures, &s.HasDocument, &s.Epoch, &s.SignatureState)
	if args != nil {
		if err := json.Unmarshal(args, &s.LastErrorArgs); err != nil {
			b.t.Fatalf("last_error_args %s: %v", args, err)
		}
	}
	return s
}

func (b *bundle) runs() []string {
	b.t.Helper()
	rows, err := b.db.Pool.Query(context.Background(), "SELECT trigger || ':' || status FROM check_runs ORDER BY id")
	if err != nil {
		b.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// doc builds a format 1 document for one or more packages.
func doc(seq int64, packages map[string]string) []byte {
	var parts []string
	for code, body := range packages {
		parts = append(parts, fmt.Sprintf("%q: %s", code, body))
	}
	return fmt.Appendf(nil, `{"format": 1, "publisher": "acme", "sequence": %d, "expires": "2099-01-01T00:00:00Z", "packages": {%s}}`, seq, strings.Join(parts, ","))
}

const (
	pkgCore     = `{"releases": [{"version": "1.9.0"}, {"version": "1.10.0", "url": "https://example.org/core-1.10"}]}`
	pkgBlog     = `{"releases": [{"version": "2.4.0", "security": true, "severity": "high", "requires_core": ">=1.8.0"}], "advisories": [{"id": "ACME-1", "severity": "critical", "affected": "<2.4.0", "fixed_in": "2.4.0"}]}`
	pkgGallery  = `{"releases": [{"version": "3.0.0"}], "advisories": [{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0"}]}`
	pkgUpToDate = `{"releases": [{"version": "1.0.0"}]}`
)

func (b *bundle) standardSite(p *publisher.Publisher) {
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	p.Set("/acme.json", doc(10, map[string]string{"blog": pkgBlog, "gallery": pkgGallery, "forms": pkgUpToDate}))
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "forms", Name: "Forms", Version: "1.0.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "broken", Name: "Broken", Version: "1.0.0", Source: p.URL + "/missing.json"},
	)
}

// A check against a local publisher reports a plain update, a security
// update, an advisory with no fix, an up-to-date plugin and a failing
// source, and records the run.
func TestCheckReportsUpdatesSecurityAndFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)

	// One source of three fails: the check ran to its end, with failures.
	res := b.run(lease.Operator)
	if res.Status != CompletedWithFailures || res.Sources != 3 || res.Fetched != 2 || res.Failed != 1 {
		t.Fatalf("result = %+v", res)
	}
	got := b.results()
	want := map[string]resultRow{
		"core":    {Code: "core", Installed: "1.9.0", Latest: "1.10.0", Update: "1.10.0", UpdateAvailable: true, HasSuccess: true, Evaluated: true},
		"blog":    {Code: "blog", Installed: "2.3.0", Latest: "2.4.0", Update: "2.4.0", UpdateAvailable: true, Security: true, Vulnerable: true, HasSuccess: true, Evaluated: true},
		"gallery": {Code: "gallery", Installed: "3.0.0", Latest: "3.0.0", Vulnerable: true, HasSuccess: true, Evaluated: true},
		"forms":   {Code: "forms", Installed: "1.0.0", Latest: "1.0.0", HasSuccess: true, Evaluated: true},
	}
	for code, w := range want {
		w.Epoch = res.Epoch
		if got[code] != w {
			t.Errorf("%s:\n got %+v\nwant %+v", code, got[code], w)
		}
	}
	broken := got["broken"]
	// Installed a moment ago: never read successfully, not stale.
	if broken.HasSuccess || broken.Evaluated || broken.Stale || !strings.Contains(broken.LastError, "404") {
		t.Errorf("broken source result = %+v, want an error, no success, not stale and not evaluated", broken)
	}
	if s := b.source(p.URL + "/missing.json"); s.ConsecutiveFailures != 1 || s.HasDocument ||
		s.LastErrorKind != string(readmodel.ErrorHTTPStatus) || s.LastErrorArgs.Status != 404 {
		t.Errorf("failing source = %+v, want a 404 stored as http_status", s)
	}
	if runs := b.runs(); len(runs) != 1 || runs[0] != "operator:completed_with_failures" {
		t.Fatalf("runs = %v", runs)
	}
}

// A failing source keeps its last valid document and results, and records
// the error; malformed, oversized, rolled-back and unsigned-when-required
// documents are recorded failures, never crashes.
func TestFailingSourceKeepsLastGoodData(t *testing.T) {
	t.Parallel()
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	good := doc(5, map[string]string{"core": pkgCore, "blog": pkgBlog})
	cases := []struct {
		name   string
		signed bool
		serve  func(p *publisher.Publisher)
		want   string
		// kind and args are what the pages word (readmodel.ErrorKind).
		kind readmodel.ErrorKind
		args readmodel.FailureArgs
	}{
		{"server error", false, func(p *publisher.Publisher) { p.Fail("/feed.json", 503) }, "503", readmodel.ErrorHTTPStatus, readmodel.FailureArgs{Status: 503}},
		{"malformed", false, func(p *publisher.Publisher) { p.Set("/feed.json", []byte(`{"format": 1, "publisher": `)) }, "invalid document",
			readmodel.ErrorMalformed, readmodel.FailureArgs{Problem: "malformed JSON at line 1, column 28: unexpected end of input"}},
		{"unknown format", false, func(p *publisher.Publisher) { p.Set("/feed.json", []byte(`{"format": 2}`)) }, "format",
			readmodel.ErrorMalformed, readmodel.FailureArgs{Problem: "unsupported format 2 (this reader understands format 1)"}},
		{"oversized", false, func(p *publisher.Publisher) { p.Set("/feed.json", make([]byte, 200<<10)) }, "too large", readmodel.ErrorTooLarge, readmodel.FailureArgs{}},
		{"rolled back", false, func(p *publisher.Publisher) { p.Set("/feed.json", doc(4, map[string]string{"core": pkgCore})) }, "rolled back",
			readmodel.ErrorRollback, readmodel.RollbackArgs(4, 5)},
		{"unsigned", true, func(p *publisher.Publisher) {
			p.Set("/feed.json", doc(6, map[string]string{"core": pkgCore}))
		}, "unsigned", readmodel.ErrorUnsigned, readmodel.FailureArgs{}},
		{"bad signature", true, func(p *publisher.Publisher) {
			p.SetSigned("/feed.json", doc(6, map[string]string{"core": pkgCore}), updatedoc.Sign(good, priv))
		}, "signature", readmodel.ErrorBadSignature, readmodel.FailureArgs{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p := publisher.New(t)
			p.Set("/feed.json", good)
			key := ""
			if tc.signed {
				key = pub.String()
				p.SetSigned("/feed.json", good, updatedoc.Sign(good, priv))
			}
			b.sync(
				manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/feed.json", Key: key},
				manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/feed.json", Key: key},
			)
			if res := b.run(lease.Operator); res.Status != Completed || res.Fetched != 1 {
				t.Fatalf("first run = %+v", res)
			}
			before := b.results()
			if tc.signed && b.source(p.URL+"/feed.json").SignatureState != "verified" {
				t.Fatal("signed document not marked verified")
			}

			tc.serve(p)
			res := b.run(lease.Operator)
			if res.Status != CompletedWithFailures || res.Failed != 1 {
				t.Fatalf("second run = %+v, want completed_with_failures", res)
			}
			s := b.source(p.URL + "/feed.json")
			if !s.HasDocument || s.Sequence != 5 || s.ConsecutiveFailures != 1 || !strings.Contains(s.LastError, tc.want) {
				t.Fatalf("source after failure = %+v, want document 5 kept and an error containing %q", s, tc.want)
			}
			if s.LastErrorKind != string(tc.kind) || !reflect.DeepEqual(s.LastErrorArgs, tc.args) {
				t.Errorf("stored kind %q, args %+v; want %q, %+v", s.LastErrorKind, s.LastErrorArgs, tc.kind, tc.args)
			}
			after := b.results()
			for code, r := range before {
				a := after[code]
				if a.Latest != r.Latest || a.Update != r.Update || a.Security != r.Security || !a.HasSuccess || !a.Evaluated || a.LastError == "" {
					t.Errorf("%s: before %+v, after %+v: evaluation must stay and the error show", code, r, a)
				}
			}
		})
	}
}

// A signature published as <url>.sig is fetched when the header is absent.
func TestSignatureFromSigFile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	body := doc(1, map[string]string{"core": pkgCore})
	p.Set("/core.json", body)
	p.Set("/core.json.sig", []byte(updatedoc.Sign(body, priv)+"\n"))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json", Key: pub.String()})
	if res := b.run(lease.Operator); res.Status != Completed || res.Fetched != 1 {
		t.Fatalf("result = %+v", res)
	}
	if s := b.source(p.URL + "/core.json"); s.SignatureState != "verified" || s.LastError != "" {
		t.Fatalf("source = %+v", s)
	}
}

// Conditional requests: the second check sends the stored ETag, the
// publisher answers 304, and that is a success that keeps the results.
func TestNotModifiedIsSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t, publisher.WithETags())
	b.standardSite(p)
	first := b.run(lease.Operator)
	second := b.run(lease.Operator)
	if second.Status != CompletedWithFailures || second.NotModified != 2 || second.Fetched != 0 {
		t.Fatalf("second run = %+v (first %+v)", second, first)
	}
	if r := b.results()["blog"]; !r.Security || r.Epoch != second.Epoch || r.LastError != "" {
		t.Fatalf("blog after 304 = %+v", r)
	}
}

// Changing an installed version re-evaluates at once from the stored
// document, without a fetch.
func TestSyncReevaluatesWithoutFetch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	b.run(lease.Operator)
	hits := p.Requests("/acme.json")

	rep := b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.4.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: p.URL + "/acme.json"},
	)
	if rep.Changed != 1 || rep.Removed != 2 || rep.Reevaluated != 1 {
		t.Fatalf("sync report = %+v", rep)
	}
	if p.Requests("/acme.json") != hits {
		t.Fatal("sync fetched the source")
	}
	blog := b.results()["blog"]
	if blog.Installed != "2.4.0" || blog.UpdateAvailable || blog.Security || blog.Vulnerable {
		t.Fatalf("blog after upgrade = %+v, want up to date", blog)
	}
	// The next check cleans up the results of what is no longer installed;
	// the unused source is kept (its rollback state) and marked unused.
	b.run(lease.Operator)
	var results, unused int
	b.db.QueryRow(t, "SELECT count(*) FROM component_results WHERE code = 'forms'").Scan(&results)
	b.db.QueryRow(t, "SELECT count(*) FROM sources WHERE url LIKE '%missing.json' AND unused_since IS NOT NULL").Scan(&unused)
	if results != 0 || unused != 1 {
		t.Fatalf("after the clean-up: %d results of a removed component, %d unused sources marked (want 0, 1)", results, unused)
	}
}

// Fetch first, then write: no transaction is held across a fetch. As a
// publisher is asked, it notes the transactions open in the database and
// answers once each has ended or is 800 ms old. A fenced write lasts
// milliseconds (tens on a loaded machine) and ends; only a transaction held
// while a publisher was being asked stays open, since the answer waits, and
// reaches that age.
func TestNoTransactionHeldAcrossAFetch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	var seen, long atomic.Int32
	const openTx = `SELECT pid, xact_start, xact_start < clock_timestamp() - interval '800 milliseconds'
		FROM pg_stat_activity WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`
	type tx struct {
		pid   int32
		start time.Time
	}
	open := func(ctx context.Context) (map[tx]bool, error) {
		rows, err := b.db.Pool.Query(ctx, openTx)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		m := map[tx]bool{}
		for rows.Next() {
			var x tx
			var old bool
			if err := rows.Scan(&x.pid, &x.start, &old); err != nil {
				return nil, err
			}
			m[x] = old
		}
		return m, rows.Err()
	}
	p.OnRequest(func(r *http.Request) {
		seen.Add(1)
		before, err := open(r.Context())
		if err != nil {
			t.Errorf("probe for open transactions: %v", err) // a handler goroutine: no Fatal
			return
		}
		err = wait.Until(wait.Guard, func() (bool, error) {
			now, err := open(r.Context())
			if err != nil {
				return false, err
			}
			for x := range before {
				if old, still := now[x]; still && !old {
					return false, nil // open, and younger than 800 ms: asked again
				}
			}
			for x := range before {
				if now[x] {
					long.Add(1)
				}
			}
			return true, nil
		})
		if err != nil {
			t.Errorf("probe for open transactions: %v", err)
		}
	})
	b.standardSite(p)
	for range 2 {
		b.run(lease.Operator)
	}
	if seen.Load() < 6 {
		t.Fatalf("publisher saw %d requests", seen.Load())
	}
	if n := long.Load(); n != 0 {
		t.Fatalf("%d transactions were open for longer than 800 ms while publishers answered", n)
	}
}

// Every run, refused ones too, is in the history.
func TestEveryRunIsRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	b.run(lease.Scheduled)
	if res := b.run(lease.Scheduled); res.Status != Skipped {
		t.Fatalf("second scheduled = %+v", res)
	}
	b.run(lease.Manual)
	if res := b.run(lease.Manual); res.Status != Cooldown || res.RetryAfter < 1 {
		t.Fatalf("second manual = %+v", res)
	}
	held, err := b.otherInstance().lease.Acquire(context.Background(), lease.Operator)
	if err != nil || held.Outcome != lease.Acquired {
		t.Fatal(held, err)
	}
	if res := b.run(lease.Operator); res.Status != Busy {
		t.Fatalf("while held = %+v", res)
	}
	// A run with a failing source completes its period all the same.
	want := "[scheduled:completed_with_failures scheduled:skipped manual:completed_with_failures manual:cooldown operator:busy]"
	if got := fmt.Sprint(b.runs()); got != want {
		t.Fatalf("runs = %s, want %s", got, want)
	}
}

// A lease taken over mid-run: the old run ends lease_lost, none of its later
// writes land, and every stored row carries the new owner's epoch.
func TestTakeoverMidRunOldWritesNeverLand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	first := b.run(lease.Operator)

	// The old run's fetch of the shared feed hangs; the other sources finish.
	hold := p.Hold("/acme.json")
	oldDone := make(chan Result, 1)
	go func() { oldDone <- b.run(lease.Operator) }()
	wait.True(t, "the old run's fetch of the shared feed hangs", wait.Guard, func() bool { return p.Requests("/acme.json") >= 2 })

	// Pretend the old holder froze: its lease expires, another instance
	// takes over and completes with a newer document.
	b.db.MustExec(t, "UPDATE core_update_lock SET expires_at = clock_timestamp() - interval '1 second'")
	hold.Stop()
	p.Set("/acme.json", doc(11, map[string]string{"blog": pkgBlog, "gallery": pkgGallery, "forms": pkgUpToDate}))
	newer, err := b.otherInstance().RunLockedUpdateCheck(context.Background(), lease.Operator, "other")
	if err != nil || newer.Status != CompletedWithFailures {
		t.Fatalf("takeover run = %+v %v", newer, err)
	}
	hold.Release()
	old := <-oldDone
	if old.Status != LeaseLost {
		t.Fatalf("old run = %+v, want lease_lost", old)
	}
	if newer.Epoch <= first.Epoch || old.Epoch >= newer.Epoch {
		t.Fatalf("epochs: first %d, old %d, newer %d", first.Epoch, old.Epoch, newer.Epoch)
	}
	var stray int
	b.db.QueryRow(t, `
		SELECT (SELECT count(*) FROM sources WHERE epoch <> $1) + (SELECT count(*) FROM component_results WHERE epoch <> $1)`, newer.Epoch).Scan(&stray)
	if stray != 0 {
		t.Fatalf("%d rows do not carry the new epoch %d", stray, newer.Epoch)
	}
	if s := b.source(p.URL + "/acme.json"); s.Sequence != 11 {
		t.Fatalf("stored sequence = %d, want the new owner's 11", s.Sequence)
	}
	if runs := b.runs(); runs[len(runs)-2] != "operator:lease_lost" && runs[len(runs)-1] != "operator:lease_lost" {
		t.Fatalf("runs = %v, want the old run recorded as lease_lost", runs)
	}
}

// resultJSON is a compact view used in failure messages.
func resultJSON(r Result) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// A new pinned key starts a new sequence history: a document signed by the
// new key with a lower sequence is accepted, not refused as a rollback.
func TestPinnedKeyChangeResetsSequence(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	oldPub, oldPriv := generateKey(t)
	newPub, newPriv := generateKey(t)
	first := doc(50, map[string]string{"core": pkgCore})
	p.SetSigned("/core.json", first, updatedoc.Sign(first, oldPriv))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json", Key: oldPub.String()})
	if res := b.run(lease.Operator); res.Fetched != 1 {
		t.Fatalf("first run = %s", resultJSON(res))
	}

	second := doc(1, map[string]string{"core": pkgUpToDate})
	p.SetSigned("/core.json", second, updatedoc.Sign(second, newPriv))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json", Key: newPub.String()})
	if res := b.run(lease.Operator); res.Fetched != 1 || res.Failed != 0 {
		t.Fatalf("run after the key change = %s", resultJSON(res))
	}
	if s := b.source(p.URL + "/core.json"); s.Sequence != 1 || s.LastError != "" {
		t.Fatalf("source = %+v, want sequence 1 accepted under the new key", s)
	}
	// Under the same key, a lower sequence is still a rollback.
	third := doc(0, map[string]string{"core": pkgCore})
	p.SetSigned("/core.json", third, updatedoc.Sign(third, newPriv))
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("rollback under the same key = %s", resultJSON(res))
	}
}

// Past its expiry a document is kept, but its results are marked stale and
// the summary counts them: never silently trusted.
func TestExpiredDocumentIsStale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", []byte(`{"format": 1, "publisher": "acme", "sequence": 3, "expires": "2020-01-01T00:00:00Z",
		"packages": {"core": {"releases": [{"version": "2.0.0"}]}}}`))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"})
	if res := b.run(lease.Operator); res.Status != Completed || res.Fetched != 1 {
		t.Fatalf("run = %s", resultJSON(res))
	}
	if r := b.results()["core"]; !r.Stale || !r.Evaluated || !r.UpdateAvailable {
		t.Fatalf("core from an expired document = %+v, want stale, still evaluated", r)
	}
	sum, err := b.reads.Summary(context.Background())
	if err != nil || sum.Stale != 1 || sum.UpdatesAvailable != 1 {
		t.Fatalf("summary = %+v %v", sum, err)
	}
}

func generateKey(t *testing.T) (updatedoc.PublicKey, updatedoc.PrivateKey) {
	t.Helper()
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}
