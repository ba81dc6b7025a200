package updatecheck

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// pkgBlogNeedsCore2 has an update that needs core 2.0.0.
const pkgBlogNeedsCore2 = `{"releases": [{"version": "2.4.0", "requires_core": ">=2.0.0"}]}`

// blockAndRun starts a check whose fetch of path hangs until the returned
// release is called, and waits until the publisher sees that request.
func (b *bundle) blockAndRun(p *publisher.Publisher, path string) (release func() Result) {
	b.t.Helper()
	hold := p.Hold(path)
	before := p.Requests(path)
	done := make(chan Result, 1)
	go func() {
		res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test")
		if err != nil {
			b.t.Error(err)
		}
		done <- res
	}()
	wait.True(b.t, "the check asks for the held source", wait.Guard, func() bool { return p.Requests(path) > before })
	return func() Result {
		hold.Release()
		return <-done
	}
}

// A core upgrade during a check is not undone when the check writes: the
// check read the old core when it began, and its write is refused and
// evaluated again from the core installed now.
func TestCoreUpgradeDuringCheckIsNotUndone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": `{"releases": [{"version": "2.0.0"}]}`}))
	p.Set("/acme.json", doc(1, map[string]string{"blog": pkgBlogNeedsCore2}))
	site := func(core string) []manifest.Component {
		return []manifest.Component{
			{Code: "core", Name: "Core", Version: core, Source: p.URL + "/core.json"},
			{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/acme.json"},
		}
	}
	b.sync(site("1.9.0")...)
	b.run(lease.Operator)
	if r := b.results()["blog"]; !r.NeedsNewerCore || r.UpdateAvailable {
		t.Fatalf("blog on core 1.9.0 = %+v, want needs newer core", r)
	}

	release := b.blockAndRun(p, "/acme.json")
	b.sync(site("2.0.0")...) // the operator upgraded the core meanwhile
	if r := b.results()["blog"]; r.NeedsNewerCore || !r.UpdateAvailable {
		t.Fatalf("blog right after the core upgrade = %+v, want its update installable", r)
	}
	if res := release(); res.Status != Completed {
		t.Fatalf("check = %s", resultJSON(res))
	}
	if r := b.results()["blog"]; r.NeedsNewerCore || !r.UpdateAvailable || !r.Evaluated {
		t.Fatalf("blog after the check that began on core 1.9.0 = %+v, want its update installable on core 2.0.0", r)
	}
}

// A dismissal during a check is not undone when the check writes.
func TestDismissalDuringCheckIsNotUndone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	b.run(lease.Operator)
	release := b.blockAndRun(p, "/acme.json")
	if _, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-1", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if res := release(); res.Status != CompletedWithFailures {
		t.Fatalf("check = %s", resultJSON(res))
	}
	if r := b.results()["blog"]; r.Vulnerable || !r.Security {
		t.Fatalf("blog after the check = %+v, want the dismissed advisory to stay dismissed", r)
	}
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil || sum.Vulnerable != 1 { // gallery's advisory still counts
		t.Fatalf("summary = %+v %v", sum, err)
	}
}

// Evaluating again from the stored document (a sync, a dismissal) is not a
// fetch: it never marks a success nor clears a source's error.
func TestReevaluationIsNotAFetchSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	b.run(lease.Operator)
	p.Fail("/acme.json", http.StatusInternalServerError)
	b.run(lease.Operator)
	// Three days of failures.
	b.db.MustExec(t, "UPDATE sources SET last_success_at = clock_timestamp() - interval '72 hours' WHERE url LIKE '%acme.json'")
	before, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	var successBefore, successAfter time.Time
	b.db.QueryRow(t, "SELECT last_success_at FROM sources WHERE url LIKE '%acme.json'").Scan(&successBefore)
	rep := b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.4.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "forms", Name: "Forms", Version: "1.0.0", Source: p.URL + "/acme.json"},
		manifest.Component{Code: "broken", Name: "Broken", Version: "1.0.0", Source: p.URL + "/missing.json"},
	)
	if rep.Reevaluated != 1 {
		t.Fatalf("sync = %+v, want blog evaluated again", rep)
	}
	if _, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-2", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	after, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	// Stale: the three components of acme.json (72 hours without a
	// success); broken, installed a moment ago and never read, is not yet.
	if after.Stale != 3 || after.FailingSources != 2 || before.Stale != 3 || before.FailingSources != 2 {
		t.Fatalf("summary before %+v, after %+v: want 3 stale and 2 failing sources both times", before, after)
	}
	b.db.QueryRow(t, "SELECT last_success_at FROM sources WHERE url LIKE '%acme.json'").Scan(&successAfter)
	if !successAfter.Equal(successBefore) {
		t.Fatalf("last success moved from %s to %s without a fetch", successBefore, successAfter)
	}
	if s := b.source(p.URL + "/acme.json"); s.LastError == "" || s.ConsecutiveFailures != 1 {
		t.Fatalf("source after the sync = %+v, want its error kept", s)
	}
	if r := b.results()["blog"]; !r.Evaluated || r.UpdateAvailable || !r.Stale || r.LastError == "" {
		t.Fatalf("blog = %+v, want evaluated for 2.4.0, stale, with its source's error", r)
	}
}

// A document whose own expiry passed is stale while its source fails,
// whatever the last fetch did.
func TestExpiredDocumentStaysStaleWhileItsSourceFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", []byte(`{"format": 1, "publisher": "acme", "sequence": 3, "expires": "2020-01-01T00:00:00Z",
		"packages": {"core": {"releases": [{"version": "2.0.0"}]}}}`))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"})
	b.run(lease.Operator)
	p.Fail("/core.json", http.StatusBadGateway)
	b.run(lease.Operator)
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil || sum.Stale != 1 || sum.FailingSources != 1 {
		t.Fatalf("summary = %+v %v, want the expired document stale and its source failing", sum, err)
	}
}

// After the pinned key changes, the stored validators are not sent, and a
// 304 cannot vouch for a document signed by the old key.
func TestKeyChangeSendsNoValidatorsAndA304NeedsTheCurrentKey(t *testing.T) {
	t.Parallel()
	for _, always304 := range []bool{false, true} {
		name := "honest publisher"
		if always304 {
			name = "publisher answering 304 to any validator"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			opts := []publisher.Option{publisher.WithETags()}
			if always304 {
				opts = append(opts, publisher.NotModifiedToAny())
			}
			p := publisher.New(t, opts...)
			oldPub, oldPriv := generateKey(t)
			newPub, _ := generateKey(t)
			body := doc(7, map[string]string{"core": pkgCore})
			p.SetSigned("/core.json", body, updatedoc.Sign(body, oldPriv))
			var mu sync.Mutex
			var validators []string
			p.OnRequest(func(r *http.Request) {
				mu.Lock()
				validators = append(validators, r.Header.Get("If-None-Match"))
				mu.Unlock()
			})
			comp := manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json", Key: oldPub.String()}
			b.sync(comp)
			if res := b.run(lease.Operator); res.Fetched != 1 {
				t.Fatalf("first run = %s", resultJSON(res))
			}
			if res := b.run(lease.Operator); res.NotModified != 1 {
				t.Fatalf("second run = %s, want a 304 under the same key", resultJSON(res))
			}

			comp.Key = newPub.String()
			b.sync(comp)
			if r := b.results()["core"]; r.Evaluated {
				t.Fatalf("core right after the key change = %+v, want not evaluated (old key)", r)
			}
			res := b.run(lease.Operator)
			mu.Lock()
			last := validators[len(validators)-1]
			mu.Unlock()
			if last != "" {
				t.Errorf("If-None-Match %q sent after the key changed", last)
			}
			if res.Failed != 1 || res.NotModified != 0 {
				t.Fatalf("run after the key change = %s, want the old key's document refused", resultJSON(res))
			}
			if r := b.results()["core"]; r.Evaluated || !strings.Contains(r.LastError, "signature") {
				t.Fatalf("core = %+v, want unknown with a signature error", r)
			}
		})
	}
}

// A component added by a sync whose source is already stored is evaluated
// at once from the stored document.
func TestComponentAddedBySyncIsEvaluatedAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	p.Set("/acme.json", doc(10, map[string]string{"blog": pkgBlog, "forms": pkgUpToDate}))
	core := manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"}
	blog := manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/acme.json"}
	b.sync(core, blog)
	b.run(lease.Operator)
	rep := b.sync(core, blog, manifest.Component{Code: "forms", Name: "Forms", Version: "0.9.0", Source: p.URL + "/acme.json"})
	if rep.Added != 1 || rep.Reevaluated != 1 {
		t.Fatalf("sync = %+v", rep)
	}
	if r := b.results()["forms"]; !r.Evaluated || !r.UpdateAvailable || r.Latest != "1.0.0" {
		t.Fatalf("forms = %+v, want evaluated from the stored document", r)
	}
}

// A source no component uses keeps its rollback state for 30 days: a
// plugin removed for one check and added back cannot be rolled back.
func TestRollbackStateOutlivesARemovedComponent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	p.Set("/acme.json", doc(10, map[string]string{"blog": pkgBlog}))
	core := manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"}
	blog := manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/acme.json"}
	b.sync(core, blog)
	b.run(lease.Operator)
	b.sync(core)
	b.run(lease.Operator) // the clean-up starts the source's retention
	p.Set("/acme.json", doc(3, map[string]string{"blog": pkgUpToDate}))
	b.sync(core, blog)
	if res := b.run(lease.Operator); res.Failed != 1 {
		t.Fatalf("run with a rolled-back document = %s, want it refused", resultJSON(res))
	}
	if s := b.source(p.URL + "/acme.json"); s.Sequence != 10 || !strings.Contains(s.LastError, "lower than the stored sequence 10") {
		t.Fatalf("source = %+v", s)
	}

	// Thirty days unused, and it is gone.
	b.sync(core)
	b.run(lease.Operator)
	b.db.MustExec(t, "UPDATE sources SET unused_since = clock_timestamp() - interval '31 days' WHERE url LIKE '%acme.json'")
	b.run(lease.Operator)
	var rows int
	b.db.QueryRow(t, "SELECT (SELECT count(*) FROM sources WHERE url LIKE '%acme.json') + (SELECT count(*) FROM source_sequences WHERE url LIKE '%acme.json')").Scan(&rows)
	if rows != 0 {
		t.Fatalf("%d rows of a source unused for 31 days remain", rows)
	}
}

// A statement timeout inside a fenced write is reported as what it is: the
// check fails, saying so; it did not lose its lease. (The check writes its
// sources in parallel: while one write sleeps holding the lease's share
// lock, the heartbeat's update queues behind it and another source's fence
// behind that, whose lock wait may time out first. That is the same slow
// statement, worded by the write that noticed it, and no lost lease
// either.)
func TestStatementTimeoutIsNotALostLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	b.db.MustExec(t, `CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_sleep(3); RETURN NEW; END $$`)
	b.db.MustExec(t, "CREATE TRIGGER slow BEFORE INSERT OR UPDATE ON sources FOR EACH ROW EXECUTE FUNCTION slow()")
	res := b.run(lease.Operator)
	slow := strings.Contains(res.Error, "ran past") || strings.Contains(res.Error, store.ErrLockTimeout.Error())
	if res.Status != Failed || !slow || strings.Contains(res.Error, lease.ErrLeaseLost.Error()) {
		t.Fatalf("check = %s, want failed with a statement timeout (or the lock wait behind it), not a lost lease", resultJSON(res))
	}
}
