package updatecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/treekit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// putTree writes the installed tree of lines (treekit.Tree) as a lockfile
// sync does (store.Tx.TreeWrite): the instances with their paths, the
// tree's state, and the history: the versions no longer installed get
// their interval closed, those new an interval opened, on the database's
// clock. components maps a direct dependency to its component.
func (b *bundle) putTree(components map[string]string, lines ...string) {
	b.t.Helper()
	treekit.Write(b.t, b.store, "/site/package-lock.json", treekit.Tree(b.t, lines...), components)
}

// treeAdvisories is the tree's findings of name@version, by advisory id,
// as stored.
func (b *bundle) treeAdvisories(name, version string) map[string]release.AdvisoryMatch {
	b.t.Helper()
	rows, err := b.db.Pool.Query(context.Background(), `SELECT advisory FROM tree_findings WHERE name = $1 AND version = $2 AND NOT withdrawn`, name, version)
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]release.AdvisoryMatch{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			b.t.Fatal(err)
		}
		var a release.AdvisoryMatch
		if err := json.Unmarshal(raw, &a); err != nil {
			b.t.Fatal(err)
		}
		out[a.ID] = a
	}
	return out
}

// comparable is a's JSON without what only a component's releases decide
// (the release that clears it).
func comparable(t *testing.T, a release.AdvisoryMatch) string {
	t.Helper()
	a.ClearedBy = ""
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// The tree is matched by the components' matcher: a component and a tree
// package at the same name@version get the same advisories (merged by
// alias, with KEV's and EPSS's facts, the malicious record as such),
// wherever the package sits; a version no record affects has none.
func TestTreeMatchesAsTheComponents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.checker.treeChunk = 1 // one package a read: the chunks' results add up
	b.feedSite()
	b.putTree(map[string]string{"@acme/forms": "forms", "@acme/blog": "blog"},
		"node_modules/@acme/forms 1.0.0",
		"node_modules/x 1.0.0 dev", "node_modules/x/node_modules/@acme/forms 1.0.0",
		"node_modules/@acme/blog 2.3.0",
		"node_modules/y 1.0.0", "node_modules/y/node_modules/@acme/blog 2.5.0",
		"node_modules/y/node_modules/@acme/other 1.0.0",
		"node_modules/aaa 1.0.0",
		// The site's own workspace, named as a registry package (linked at
		// the top, where the registry's is nested): its code, not the
		// package of that name.
		"packages/other 0.9.0 name=@acme/other link",
	)
	if res := b.run(lease.Operator); res.Status != Completed {
		t.Fatalf("check = %+v", res)
	}
	forms, tree := b.advisories("forms"), b.treeAdvisories("@acme/forms", "1.0.0")
	if len(forms) != 1 || len(tree) != 1 {
		t.Fatalf("forms' advisories %+v, the tree's %+v: want the malicious record in both", forms, tree)
	}
	if got, want := comparable(t, tree[forms[0].ID]), comparable(t, forms[0]); got != want {
		t.Errorf("the tree's advisory of @acme/forms 1.0.0\n%s\nthe component's\n%s", got, want)
	}
	// The OSV record of blog, in the tree, as the component's matcher
	// makes it before the publisher's advisory merges it: KEV and EPSS
	// annotate it there too.
	blog := b.treeAdvisories("@acme/blog", "2.3.0")
	a, ok := blog[blogGHSA]
	if len(blog) != 1 || !ok || !a.KnownExploited || a.EPSS == nil || a.FixedIn != "2.4.0" {
		t.Errorf("the tree's advisories of @acme/blog 2.3.0 = %+v, want %s, known exploited, scored, fixed in 2.4.0", blog, blogGHSA)
	}
	if got := b.treeAdvisories("@acme/blog", "2.5.0"); len(got) != 0 {
		t.Errorf("@acme/blog 2.5.0 has %+v, want nothing", got)
	}
	if got := b.treeAdvisories("@acme/other", "1.0.0"); len(got) != 1 {
		t.Errorf("@acme/other 1.0.0 has %+v, want GHSA-2222-3333-4444", got)
	}
	if got := b.treeAdvisories("@acme/other", "0.9.0"); len(got) != 0 {
		t.Errorf("the site's own workspace @acme/other 0.9.0 has %+v, want nothing: it is not the registry's package", got)
	}
	// The evaluation recorded what it was evaluated at: a check with
	// nothing moved writes nothing more.
	var at1, at2 string
	b.db.QueryRow(t, `SELECT evaluated_at::text FROM tree_evaluation`).Scan(&at1)
	b.run(lease.Operator)
	b.db.QueryRow(t, `SELECT evaluated_at::text FROM tree_evaluation`).Scan(&at2)
	if at1 == "" || at1 != at2 {
		t.Errorf("evaluated at %q, then %q: want one evaluation while nothing moved", at1, at2)
	}
}

// For every version of a set of generated records' packages, the tree's
// findings are the advisories the components' merge gives a component of
// that package at that version, with no publisher advisory: one matcher.
func TestTreeMatcherAgreesWithMergeForEveryVersion(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("pkg-%d", i))
	}
	spec := osvgen.Spec{N: 400, Packages: names, Seed: 7, MalShare: 0.1}
	k := &knowledge{version: 1, osv: map[string][]*osv.Record{}}
	for _, body := range osvgen.Records(spec) {
		r, err := osv.Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Packages() {
			k.osv[p.Name] = append(k.osv[p.Name], r)
		}
	}
	var installed []store.NameVersion
	for name := range k.osv {
		for major := range 4 {
			for minor := range 6 {
				installed = append(installed, store.NameVersion{Name: name, Version: fmt.Sprintf("%d.%d.%d", major, minor, minor%3)})
			}
		}
	}
	found, err := k.evaluateTree(installed)
	if err != nil {
		t.Fatal(err)
	}
	tree := map[store.NameVersion][]string{}
	for _, f := range found {
		if !f.Withdrawn {
			nv := store.NameVersion{Name: f.Name, Version: f.Version}
			tree[nv] = append(tree[nv], string(f.Advisory))
		}
	}
	matched := 0
	for _, nv := range installed {
		e := release.Evaluation{Advisories: []release.AdvisoryMatch{}, Releases: []release.ReleaseStatus{}}
		k.merge(&e, store.ComponentInput{Package: nv.Name, InstalledVersion: nv.Version})
		var want []string
		for _, a := range e.Advisories {
			raw, _ := json.Marshal(a)
			want = append(want, string(raw))
		}
		if !slices.Equal(tree[nv], want) {
			t.Errorf("%s@%s: the tree's %v, the components' %v", nv.Name, nv.Version, tree[nv], want)
		}
		matched += len(want)
	}
	if matched == 0 {
		t.Fatal("no version was matched by any record: the test says nothing")
	}
}

// The look-back: a version the site had installed, removed by a lockfile
// sync, is named later by a malicious-package record; a feed sync run by
// another instance (a restart: a new Checker on the same database) says
// so once, with its audit row and its notification event, in words.
func TestLookBackFindsARemovedMaliciousVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, _ := b.feedSite(readmodel.FeedOSV)
	b.db.MustExec(t, `INSERT INTO notification_channels (name, kind, target, events) VALUES ('ops', 'webhook', 'https://hooks.example/x', 'security')`)
	b.putTree(nil, "node_modules/debug 4.4.2")
	b.run(lease.Operator)
	b.putTree(nil, "node_modules/debug 4.4.3")
	b.run(lease.Operator)
	var exposures int
	b.db.QueryRow(t, `SELECT count(*) FROM tree_exposures`).Scan(&exposures)
	if exposures != 0 {
		t.Fatalf("%d exposures before any record names debug", exposures)
	}

	// Published after the version was removed.
	const mal = "MAL-2026-2002"
	var rec map[string]any
	if err := json.Unmarshal(osvgen.Record(mal, "debug", osvgen.KindMalware, "4.4.2", "4.4.3"), &rec); err != nil {
		t.Fatal(err)
	}
	rec["modified"] = time.Now().UTC().Format(time.RFC3339Nano) // newer than the feed's cursor
	published, _ := json.Marshal(rec)
	fs.SetRecords(records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", ""),
		published,
	))
	restarted := New(b.store, b.newLease(lease.Timings(testkit.Timings())), b.fetcher, slog.Default())
	n, err := notify.New(b.db.Pool, b.store, b.fetcher, notify.DefaultTimings(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	restarted.NotifyWith(n)
	sync := NewFeeds(restarted, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir())
	for range 2 { // the second finds it known: once
		res, err := sync.RunLockedFeedSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Status == readmodel.FeedSyncFailed {
			t.Fatalf("feed sync = %+v", res)
		}
	}
	xs, err := b.store.TreeExposures(context.Background(), store.LocalSite, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 1 || xs[0].Name != "debug" || xs[0].Version != "4.4.2" || xs[0].AdvisoryID != mal || !xs[0].Malicious {
		t.Fatalf("exposures = %+v, want debug 4.4.2 named by %s", xs, mal)
	}
	want := "debug 4.4.2 (malicious) was installed from "
	if s := xs[0].Sentence(); !strings.HasPrefix(s, want) || !strings.HasSuffix(s, " UTC: treat secrets on this site as exposed") {
		t.Errorf("sentence = %q", s)
	}
	var audits, events int
	var payload []byte
	b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = $1`, readmodel.AuditTreeExposed).Scan(&audits)
	b.db.QueryRow(t, `SELECT count(*), min(payload::text) FROM notification_events WHERE type = $1`, readmodel.EventTreeExposed).Scan(&events, &payload)
	if audits != 1 || events != 1 {
		t.Errorf("%d audit rows, %d events; want one of each", audits, events)
	}
	if !bytes.Contains(payload, []byte(`"package": "debug"`)) || !bytes.Contains(payload, []byte(mal)) {
		t.Errorf("event payload = %s", payload)
	}
	// The version installed now is not affected: no finding.
	if got := b.treeAdvisories("debug", "4.4.3"); len(got) != 0 {
		t.Errorf("debug 4.4.3 has %+v", got)
	}
}

// The osv-api feed's querybatch names every installed package version of
// the tree, not only the components': a record of a package no component
// is (@acme/other) is fetched, stored and found in the tree; and the feed
// is due again once the tree changed.
func TestOSVAPINamesTheTree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, f := b.feedSite(readmodel.FeedOSVAPI)
	b.putTree(nil, "node_modules/@acme/other 1.0.0")
	if res := b.run(lease.Operator); res.Status != Completed {
		t.Fatalf("check = %+v", res)
	}
	if got := b.treeAdvisories("@acme/other", "1.0.0"); len(got) != 1 {
		t.Fatalf("@acme/other 1.0.0 in the tree has %+v, want GHSA-2222-3333-4444 from the API", got)
	}
	ctx := context.Background()
	due, err := b.store.FeedsDue(ctx, []readmodel.FeedKind{readmodel.FeedOSVAPI}, feedsync.Period)
	if err != nil || len(due) != 0 {
		t.Fatalf("osv-api due = %v, %v right after its sync", due, err)
	}
	b.putTree(nil, "node_modules/@acme/other 1.0.1")
	due, err = b.store.FeedsDue(ctx, []readmodel.FeedKind{readmodel.FeedOSVAPI}, feedsync.Period)
	if err != nil || len(due) != 1 {
		t.Errorf("osv-api due = %v, %v; want due for the tree changed since", due, err)
	}
	if _, err := f.RunLockedFeedSync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.treeAdvisories("@acme/other", "1.0.1"); len(got) != 0 {
		t.Errorf("@acme/other 1.0.1 has %+v, want none", got)
	}
	// The match of the version the site no longer has is kept for the
	// look-back (tree_findings), shown nowhere.
	var findings int
	b.db.QueryRow(t, `SELECT count(*) FROM tree_finding_state`).Scan(&findings)
	if findings != 0 {
		t.Errorf("%d findings shown of a version no longer installed", findings)
	}
}

// A feed sync killed after storing a batch leaves the tree's last
// findings as they were (the feeds' version moved, the evaluation did
// not run); the next sync, finding the version moved, evaluates the tree.
func TestInterruptedFeedSyncLeavesTheLastFindings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fs, f := b.feedSite(readmodel.FeedOSV)
	b.putTree(nil, "node_modules/debug 4.4.2")
	b.run(lease.Operator)
	var evaluatedAt1 int64
	b.db.QueryRow(t, `SELECT intel_version FROM tree_evaluation`).Scan(&evaluatedAt1)

	var rec map[string]any
	if err := json.Unmarshal(osvgen.Record("MAL-2026-3003", "debug", osvgen.KindMalware, "", ""), &rec); err != nil {
		t.Fatal(err)
	}
	rec["modified"] = time.Now().UTC().Format(time.RFC3339Nano) // newer than the feed's cursor
	published, _ := json.Marshal(rec)
	fs.SetRecords(records(
		osvgen.Record(blogGHSA, "@acme/blog", osvgen.KindVuln, "", "2.4.0", blogCVE),
		osvgen.Record(formsMAL, "@acme/forms", osvgen.KindMalware, "", ""),
		published,
	))
	ctx := context.Background()
	stop, cancel := context.WithCancel(ctx)
	f.AfterBatch(cancel) // as a process that died after its first batch
	if _, err := f.RunLockedFeedSync(stop); err == nil {
		t.Fatal("the interrupted sync reported no error")
	}
	f.AfterBatch(nil)
	var stored, intel, evaluatedAt int64
	b.db.QueryRow(t, `SELECT count(*) FROM osv_records WHERE id = 'MAL-2026-3003'`).Scan(&stored)
	b.db.QueryRow(t, `SELECT version FROM intel_state`).Scan(&intel)
	b.db.QueryRow(t, `SELECT intel_version FROM tree_evaluation`).Scan(&evaluatedAt)
	if stored != 1 || intel == evaluatedAt1 || evaluatedAt != evaluatedAt1 {
		t.Fatalf("after the interruption: record stored %d, feeds' version %d, evaluated at %d (before %d); want stored, moved, not evaluated",
			stored, intel, evaluatedAt, evaluatedAt1)
	}
	if got := b.treeAdvisories("debug", "4.4.2"); len(got) != 0 {
		t.Fatalf("the interrupted sync changed the findings: %+v", got)
	}
	wait.For(t, "the interrupted sync's lease to be free", 10*time.Second, func() (bool, error) {
		_, err := f.RunLockedFeedSync(ctx)
		if errors.Is(err, feedsync.ErrBusy) {
			return false, nil
		}
		return true, err
	})
	if got := b.treeAdvisories("debug", "4.4.2"); len(got) != 1 {
		t.Errorf("after the next sync debug 4.4.2 has %+v, want MAL-2026-3003", got)
	}
}

// A lockfile sync that changed the tree has it evaluated at once
// (Checker.EvaluateTree, holding the lease as an import): it writes when
// the tree moved, and only then; while a check holds the lease it leaves
// the evaluation to that check or the next.
func TestEvaluateTreeAfterALockfileSync(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.feedSite()
	b.run(lease.Operator) // the feeds stored; no tree yet
	ctx := context.Background()
	if wrote, err := b.checker.EvaluateTree(ctx); err != nil || wrote {
		t.Fatalf("no tree: EvaluateTree = %v, %v; want nothing written", wrote, err)
	}
	b.putTree(nil, "node_modules/@acme/forms 1.0.0")
	if wrote, err := b.checker.EvaluateTree(ctx); err != nil || !wrote {
		t.Fatalf("the tree changed: EvaluateTree = %v, %v; want written", wrote, err)
	}
	if got := b.treeAdvisories("@acme/forms", "1.0.0"); len(got) != 1 {
		t.Errorf("@acme/forms 1.0.0 has %+v, want %s", got, formsMAL)
	}
	if wrote, err := b.checker.EvaluateTree(ctx); err != nil || wrote {
		t.Errorf("nothing moved: EvaluateTree = %v, %v; want nothing written", wrote, err)
	}
	b.putTree(nil, "node_modules/@acme/forms 1.0.0", "node_modules/@acme/other 1.0.0")
	acq, err := b.lease.Acquire(ctx, lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		t.Fatalf("acquire = %+v, %v", acq, err)
	}
	if wrote, err := b.otherInstance().EvaluateTree(ctx); err != nil || wrote {
		t.Errorf("while a check holds the lease: EvaluateTree = %v, %v; want nothing, no error", wrote, err)
	}
}
