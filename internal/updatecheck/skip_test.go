package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// skippedOf is the blog's skip as its current result was evaluated under
// it ("" none), read from the read model.
func (b *bundle) skippedOf(code string) string {
	b.t.Helper()
	var v string
	b.db.QueryRow(b.t, `SELECT coalesce(r.skipped_version, '') FROM component_results r WHERE r.code = $1`, code).Scan(&v)
	return v
}

// auditRows are the audit log's rows of action, oldest first, as
// "version reason by" (the detail members the audit page words).
func (b *bundle) auditRows(action string) []string {
	b.t.Helper()
	rows, err := b.db.Pool.Query(context.Background(),
		`SELECT detail->>'component', detail->>'version', detail->>'reason', detail->>'by' FROM audit_log WHERE action = $1 ORDER BY id`, action)
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var code, version, reason, by string
		if err := rows.Scan(&code, &version, &reason, &by); err != nil {
			b.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %q by %s", code, version, reason, by))
	}
	if err := rows.Err(); err != nil {
		b.t.Fatal(err)
	}
	return out
}

// A skip is applied at once, without a check: the catalog reads the
// component up to date with the version skipped; a newer release is
// offered through the next check; ending the skip offers the skipped
// version again at once; both are audited.
func TestSkipHidesAPlainUpdateAtOnceUntilANewerRelease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	b.policySite(pub, `{"releases": [{"version": "2.3.0"}, {"version": "2.4.0"}]}`, release.Policy{}, nil, nil)
	b.run(lease.Operator)
	if got := b.results()["blog"]; got.Update != "2.4.0" {
		t.Fatalf("before the skip: offered %q, want 2.4.0", got.Update)
	}
	fetches := pub.Requests("/acme.json")
	ctx := context.Background()
	skips := NewSkips(b.checker)

	got, err := skips.Skip(ctx, SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.0", Reason: "  breaks our theme ", UserID: 0, By: "ops@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "2.4.0" || got.Reason != "breaks our theme" || got.By != "ops@example.org" || got.FromManifest || got.At.IsZero() {
		t.Errorf("the skip as stored: %+v", got)
	}
	r := b.results()["blog"]
	if !r.Evaluated || r.Update != "" || r.UpdateAvailable {
		t.Errorf("right after the skip: evaluated %v, offered %q (available %v); want evaluated, nothing offered", r.Evaluated, r.Update, r.UpdateAvailable)
	}
	if s := b.skippedOf("blog"); s != "2.4.0" {
		t.Errorf("the result's skipped version %q, want 2.4.0", s)
	}
	var shown string // what the catalog reads
	b.db.QueryRow(t, `SELECT coalesce(skipped_version, '') FROM component_state WHERE code = 'blog'`).Scan(&shown)
	if shown != "2.4.0" {
		t.Errorf("the read model's skipped version %q, want 2.4.0", shown)
	}
	if n := pub.Requests("/acme.json"); n != fetches {
		t.Errorf("the skip fetched the document (%d requests, %d before): it must evaluate from the stored one", n, fetches)
	}
	if rows := b.auditRows("component.skip"); len(rows) != 1 || rows[0] != `blog 2.4.0 "breaks our theme" by ops@example.org` {
		t.Errorf("audit rows of the skip: %q", rows)
	}

	// A newer release is offered by the next check.
	pub.Set("/acme.json", doc(2, map[string]string{"blog": `{"releases": [{"version": "2.3.0"}, {"version": "2.4.0"}, {"version": "2.5.0"}]}`}))
	b.run(lease.Operator)
	if got := b.results()["blog"]; got.Update != "2.5.0" {
		t.Errorf("once 2.5.0 is out: offered %q, want 2.5.0", got.Update)
	}

	// Back to the document without 2.5.0: ending the skip offers 2.4.0 at
	// once.
	pub.Set("/acme.json", doc(3, map[string]string{"blog": `{"releases": [{"version": "2.3.0"}, {"version": "2.4.0"}]}`}))
	b.run(lease.Operator)
	if got := b.results()["blog"]; got.Update != "" {
		t.Fatalf("2.5.0 withdrawn, 2.4.0 skipped: offered %q, want nothing", got.Update)
	}
	ended, err := skips.Unskip(ctx, store.LocalSite, "blog", 0, "ops@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if ended.Version != "2.4.0" {
		t.Errorf("Unskip ended %+v, want the skip of 2.4.0", ended)
	}
	if got := b.results()["blog"]; !got.Evaluated || got.Update != "2.4.0" {
		t.Errorf("right after the unskip: evaluated %v, offered %q; want 2.4.0", got.Evaluated, got.Update)
	}
	if rows := b.auditRows("component.unskip"); len(rows) != 1 || rows[0] != `blog 2.4.0 "breaks our theme" by ops@example.org` {
		t.Errorf("audit rows of the unskip: %q", rows)
	}
	if _, err := skips.Unskip(ctx, store.LocalSite, "blog", 0, "ops@example.org"); !errors.Is(err, ErrNoSkip) {
		t.Errorf("unskip again: %v, want ErrNoSkip", err)
	}
}

// Every refusal leaves the skips and the audit log as they were.
func TestSkipRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	blog := `{"releases": [{"version": "2.2.0"}, {"version": "2.3.0"}, {"version": "2.3.1", "security": true}, {"version": "2.4.0"},
		{"version": "2.5.0"}, {"version": "2.6.0-beta.1"}],
		"advisories": [{"id": "ACME-9", "severity": "high", "affected": "<2.5.0", "fixed_in": "2.5.0"}]}`
	b.policySite(pub, blog, release.Policy{}, nil, nil)
	b.run(lease.Operator)
	ctx := context.Background()
	skips := NewSkips(b.checker)
	for _, c := range []struct {
		req  SkipRequest
		want error
	}{
		{SkipRequest{Site: store.LocalSite, Code: "nope", Version: "2.4.0", Reason: "r"}, store.ErrNotFound},
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.0", Reason: " \n"}, store.ErrReasonRequired},
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.0", Reason: string(make([]rune, store.MaxReasonLength+1))}, store.ErrReasonTooLong},
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "v2.4", Reason: "r"}, ErrSkipNotAVersion},
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.2.0", Reason: "r"}, ErrSkipNotNewer},
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.3.0", Reason: "r"}, ErrSkipNotNewer},
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.5", Reason: "r"}, ErrSkipNoSuchRelease},
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.6.0-beta.1", Reason: "r"}, ErrSkipPrerelease},
		// marked security by its publisher
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.3.1", Reason: "r"}, ErrSkipSecurity},
		// fixes ACME-9 of the installed 2.3.0
		{SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.5.0", Reason: "r"}, ErrSkipSecurity},
	} {
		if _, err := skips.Skip(ctx, c.req); !errors.Is(err, c.want) {
			t.Errorf("skip %q of %q (reason %q): %v, want %v", c.req.Version, c.req.Code, c.req.Reason, err, c.want)
		}
	}
	// 2.4.0 is a plain release between them: it may be skipped.
	if _, err := skips.Skip(ctx, SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.0", Reason: "breaks our theme"}); err != nil {
		t.Errorf("skip 2.4.0: %v", err)
	}
	if rows := b.auditRows("component.skip"); len(rows) != 1 {
		t.Errorf("audit rows of skips: %q, want the one of 2.4.0", rows)
	}
	// The security fix 2.5.0 is still offered, skip or not.
	if got := b.results()["blog"]; got.Update != "2.5.0" || !got.Security {
		t.Errorf("offered %q (security %v), want 2.5.0, the security fix", got.Update, got.Security)
	}
}

// A component's skip that the manifest declares is neither replaced nor
// ended from the AdminCP.
func TestSkipFromTheManifestCannotBeChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	skip := []manifest.Skip{{Component: "blog", Version: "2.4.0", Reason: "breaks our theme"}}
	b.policySite(pub, `{"releases": [{"version": "2.4.0"}, {"version": "2.5.0"}]}`, release.Policy{}, skip, nil)
	b.run(lease.Operator)
	ctx := context.Background()
	skips := NewSkips(b.checker)
	if _, err := skips.Skip(ctx, SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.5.0", Reason: "other"}); !errors.Is(err, store.ErrFromManifest) {
		t.Errorf("skip over the manifest's: %v, want ErrFromManifest", err)
	}
	if _, err := skips.Unskip(ctx, store.LocalSite, "blog", 0, "ops@example.org"); !errors.Is(err, store.ErrFromManifest) {
		t.Errorf("unskip the manifest's: %v, want ErrFromManifest", err)
	}
	if s, ok, err := b.store.SkipOf(ctx, store.LocalSite, "blog"); err != nil || !ok || s.Version != "2.4.0" || !s.FromManifest {
		t.Errorf("the skip after both: %+v %v %v, want the manifest's 2.4.0", s, ok, err)
	}
	if got := b.results()["blog"]; got.Update != "2.5.0" {
		t.Errorf("offered %q, want 2.5.0", got.Update)
	}
}

// A skip racing checks that store new documents: whichever commits first,
// the component ends evaluated from the newest document under the skip
// that stands, never "not evaluated" and never offering the skipped
// version.
func TestSkipRacesACheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	b.policySite(pub, `{"releases": [{"version": "2.4.0"}]}`, release.Policy{}, nil, nil)
	b.run(lease.Operator)
	ctx := context.Background()
	skips := NewSkips(b.checker)
	other := b.otherInstance()
	for i := range 20 {
		// Each round a new document (2.4.0 always, a release note changing)
		// and a skip or an unskip at the same time as the check that
		// stores it.
		pub.Set("/acme.json", doc(int64(i+2), map[string]string{"blog": fmt.Sprintf(`{"releases": [{"version": "2.4.0", "summary": "round %d"}]}`, i)}))
		skip := i%2 == 0
		var wg sync.WaitGroup
		var skipErr, checkErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			if skip {
				_, skipErr = skips.Skip(ctx, SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.0", Reason: "breaks our theme", By: "ops@example.org"})
			} else {
				_, skipErr = skips.Unskip(ctx, store.LocalSite, "blog", 0, "ops@example.org")
			}
		}()
		go func() {
			defer wg.Done()
			_, checkErr = other.RunLockedUpdateCheck(ctx, lease.Operator, "test")
		}()
		wg.Wait()
		if skipErr != nil || checkErr != nil {
			t.Fatalf("round %d: skip %v, check %v", i, skipErr, checkErr)
		}
		got := b.results()["blog"]
		want, wantSkipped := "2.4.0", ""
		if skip {
			want, wantSkipped = "", "2.4.0"
		}
		if !got.Evaluated || got.Update != want || b.skippedOf("blog") != wantSkipped {
			t.Fatalf("round %d (skip %v): evaluated %v, offered %q, evaluated under the skip %q; want evaluated, offered %q",
				i, skip, got.Evaluated, got.Update, b.skippedOf("blog"), want)
		}
	}
}

// A skip committed while a check fetches (after it read the components
// and their skips) is not undone by the check's write: the check's
// result, evaluated without the skip, is refused, and the check evaluates
// again from the skip that stands.
func TestASkipDuringACheckStands(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	b.policySite(pub, `{"releases": [{"version": "2.4.0"}]}`, release.Policy{}, nil, nil)
	b.run(lease.Operator)
	pub.Set("/acme.json", doc(2, map[string]string{"blog": `{"releases": [{"version": "2.4.0", "summary": "new notes"}]}`}))
	ctx := context.Background()
	before := pub.Requests("/acme.json")
	hold := pub.Hold("/acme.json")
	defer hold.Release()
	checkErr := make(chan error, 1)
	go func() {
		_, err := b.otherInstance().RunLockedUpdateCheck(ctx, lease.Operator, "test")
		checkErr <- err
	}()
	pub.AwaitRequests(t, "/acme.json", before+1, 10*time.Second)
	if _, err := NewSkips(b.checker).Skip(ctx, SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.0", Reason: "breaks our theme"}); err != nil {
		t.Fatal(err)
	}
	hold.Release()
	if err := <-checkErr; err != nil {
		t.Fatal(err)
	}
	if got := b.results()["blog"]; !got.Evaluated || got.Update != "" || b.skippedOf("blog") != "2.4.0" {
		t.Errorf("after the check: evaluated %v, offered %q under the skip %q; want evaluated, nothing offered, under 2.4.0",
			got.Evaluated, got.Update, b.skippedOf("blog"))
	}
	var notes string
	b.db.QueryRow(t, `SELECT evaluation->'releases'->0->>'summary' FROM component_results WHERE code = 'blog'`).Scan(&notes)
	if notes != "new notes" {
		t.Errorf("the result's document says %q, want the check's new one", notes)
	}
}

// A check that stores a new document after a skip was evaluated and
// before it is written leaves the skip's result refused (it was evaluated
// from the older document) and its own too (evaluated without the skip):
// the skip evaluates again from the new document, so the component is
// not left without a result.
func TestASkipEvaluatedBeforeACheckWritesIsEvaluatedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	b.policySite(pub, `{"releases": [{"version": "2.4.0"}]}`, release.Policy{}, nil, nil)
	b.run(lease.Operator)
	ctx := context.Background()
	skips := NewSkips(b.checker)
	var checkErr error
	skips.beforeWrite = func() {
		pub.Set("/acme.json", doc(2, map[string]string{"blog": `{"releases": [{"version": "2.4.0", "summary": "new notes"}]}`}))
		_, checkErr = b.otherInstance().RunLockedUpdateCheck(ctx, lease.Operator, "test")
	}
	if _, err := skips.Skip(ctx, SkipRequest{Site: store.LocalSite, Code: "blog", Version: "2.4.0", Reason: "breaks our theme"}); err != nil {
		t.Fatal(err)
	}
	if checkErr != nil {
		t.Fatal(checkErr)
	}
	if got := b.results()["blog"]; !got.Evaluated || got.Update != "" || b.skippedOf("blog") != "2.4.0" {
		t.Errorf("after the skip: evaluated %v, offered %q under the skip %q; want evaluated, nothing offered, under 2.4.0",
			got.Evaluated, got.Update, b.skippedOf("blog"))
	}
	var notes string
	b.db.QueryRow(t, `SELECT evaluation->'releases'->0->>'summary' FROM component_results WHERE code = 'blog'`).Scan(&notes)
	if notes != "new notes" {
		t.Errorf("the result's document says %q, want the check's new one", notes)
	}
}
