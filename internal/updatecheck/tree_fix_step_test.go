package updatecheck

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/tree"
)

// syncTree stores tr as the lockfile sync does (TreeSyncer: store's
// TreeWrite), read from path.
func syncTree(t *testing.T, b *bundle, path string, tr *tree.Tree) {
	t.Helper()
	tr.Sort()
	s := NewTreeSyncer(b.checker)
	st, err := s.State(context.Background(), store.LocalSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sync(context.Background(), TreeRead{Site: store.LocalSite, Path: path, FileHash: tr.Hash(), Tree: tr, State: st}); err != nil {
		t.Fatal(err)
	}
}

// A check runs the fix step after the tree's findings are evaluated: a
// feed's record on a package deep in the tree (p2r, pinned by xpress) is
// a finding after the check, and what clears it is stored, read from the
// real registry's documents: "update xpress 4.17.1 → 4.20.0". When a
// lockfile sync then moves p2r to the fixed version (its row keeps its
// id), the evaluation that follows drops the fix with its finding.
func TestACheckDecidesWhatClearsATransitiveFinding(t *testing.T) {
	t.Parallel()
	b := setup(t)
	startFixRegistry(t, b, false)
	fs := feedserver.New(t)
	fs.SetRecords(records(osvgen.Record("GHSA-p2r0-0000-0001", "p2r", osvgen.KindVuln, "", "0.1.10")))
	b.checker.UseFeeds(NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	tr := fixSite(t, b)

	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}
	const key = "node_modules/p2r GHSA-p2r0-0000-0001"
	got := b.storedFixWords()
	if got[key] != "update xpress 4.17.1 → 4.20.0" || len(got) != 1 {
		t.Fatalf("after the check, the fixes are %v; want %s: update xpress 4.17.1 → 4.20.0", got, key)
	}

	for i := range tr.Packages {
		if tr.Packages[i].Name == "p2r" {
			tr.Packages[i].Version = "0.1.10"
		}
	}
	syncTree(t, b, "/site/package-lock.json", tr)
	if wrote, err := b.checker.EvaluateTree(context.Background()); err != nil || !wrote {
		t.Fatalf("EvaluateTree = %v, %v", wrote, err)
	}
	if got := b.storedFixWords(); len(got) != 0 {
		t.Errorf("p2r at its fixed version, the fixes are %v; want none", got)
	}
}

// A finding is read by its records' own ranges: a record affecting
// [0, 1.0.1) and [2.0.0, 2.0.3) leaves 1.5.0 clear and 2.0.1 affected,
// though both are above its first fixed version; a record of another
// advisory on the package is not read; no record held: nil (every
// version below the fixed one).
func TestAFindingIsReadByAllOfItsRanges(t *testing.T) {
	raw := []byte(`{"id": "GHSA-mult-0000-0001", "aliases": ["CVE-2026-7"], "modified": "2026-11-01T00:00:00Z",
		"affected": [{"package": {"ecosystem": "npm", "name": "lib"}, "ranges": [
			{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.0.1"}]},
			{"type": "SEMVER", "events": [{"introduced": "2.0.0"}, {"fixed": "2.0.3"}]}]}]}`)
	r, err := osv.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	other, err := osv.Parse([]byte(`{"id": "GHSA-othe-0000-0001", "modified": "2026-11-01T00:00:00Z",
		"affected": [{"package": {"ecosystem": "npm", "name": "lib"}, "ranges": [
			{"type": "SEMVER", "events": [{"introduced": "0"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := store.TreeFixFinding{PackageID: "node_modules/lib", Name: "lib", Version: "1.0.0", AdvisoryID: "GHSA-mult-0000-0001",
		Keys: advisoryKeys("GHSA-mult-0000-0001", []string{"CVE-2026-7"}), FixedIn: "1.0.1"}
	affects := affectsOf([]*osv.Record{other, r}, f)
	if affects == nil {
		t.Fatal("the record held is not read")
	}
	for v, want := range map[string]bool{"1.0.0": true, "1.0.1": false, "1.5.0": false, "2.0.1": true, "2.0.3": false} {
		if got := affects(v); got != want {
			t.Errorf("affects(%s) = %v, want %v", v, got, want)
		}
	}
	if affectsOf([]*osv.Record{other}, f) != nil {
		t.Error("another advisory's record is read as this one's")
	}
}

// A new counted tree finding is notified in the evaluation's transaction,
// once: the malicious @acme/forms installed in the tree is a tree.finding
// event after the check evaluates it; the development-only @acme/other's
// finding is not counted (UPCHECK_LOCKFILE_DEV=separate) and not
// notified; evaluated again after the tree changed, the finding already
// notified is not notified again.
func TestANewTreeFindingIsNotifiedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.feedSite(readmodel.FeedOSV)
	b.db.MustExec(t, `INSERT INTO notification_channels (name, kind, target, events) VALUES ('ops', 'webhook', 'https://hooks.example/x', 'security')`)
	n, err := notify.New(b.db.Pool, b.store, b.fetcher, notify.DefaultTimings(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	b.checker.NotifyWith(n)
	b.putTree(nil, "node_modules/x 1.0.0", "node_modules/x/node_modules/@acme/forms 1.0.0", "node_modules/@acme/other 1.0.0 dev")
	b.run(lease.Operator)
	events := func() (n int, payload string) {
		b.db.QueryRow(t, `SELECT count(*), coalesce(min(payload::text), '') FROM notification_events WHERE type = $1`,
			readmodel.EventTreeFinding).Scan(&n, &payload)
		return n, payload
	}
	if n, payload := events(); n != 1 || !strings.Contains(payload, `"package": "@acme/forms"`) || !strings.Contains(payload, `"malicious": true`) {
		t.Fatalf("%d tree.finding events (%s); want the malicious @acme/forms, alone", n, payload)
	}
	b.putTree(nil, "node_modules/x 1.0.0", "node_modules/x/node_modules/@acme/forms 1.0.0", "node_modules/@acme/forms 1.0.0", "node_modules/@acme/other 1.0.0 dev")
	if wrote, err := b.checker.EvaluateTree(context.Background()); err != nil || !wrote {
		t.Fatalf("EvaluateTree = %v, %v", wrote, err)
	}
	if n, _ := events(); n != 1 {
		t.Errorf("%d tree.finding events after the evaluation again; want the one", n)
	}
}

// The fix step reads a component's own registry document from what the
// check stored of it, not by a request of its own: over two checks the
// registry answers xpress's document (an npm component's) once a check,
// its source's fetch and then its 304, while the fix step decides through
// it; the path's other package, p2r, is the fix step's to fetch, then
// conditionally.
func TestTheFixStepReadsTheComponentAsTheCheckStoredIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fr := startFixRegistry(t, b, false)
	fs := feedserver.New(t)
	fs.SetRecords(records(osvgen.Record("GHSA-p2r0-0000-0001", "p2r", osvgen.KindVuln, "", "0.1.10")))
	b.checker.UseFeeds(NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	b.sync(manifest.Component{Code: "core", Name: "sock", Version: "4.0.0", Source: "npm:sock"},
		manifest.Component{Code: "xpress", Name: "xpress", Version: "4.17.1", Source: "npm:xpress"})
	fixSite(t, b)
	for i, want := range [][]int{{200}, {200, 304}} {
		if res := b.run(lease.Operator); !res.Status.RanToEnd() {
			t.Fatalf("check %d: %+v", i+1, res)
		}
		if got := b.storedFixWords(); got["node_modules/p2r GHSA-p2r0-0000-0001"] != "update xpress 4.17.1 → 4.20.0" {
			t.Errorf("check %d: the fixes are %v", i+1, got)
		}
		if got := fr.answers("xpress"); !slices.Equal(got, want) {
			t.Errorf("check %d: the registry answered xpress's document %v, want %v", i+1, got, want)
		}
		if got := fr.answers("p2r"); !slices.Equal(got, want) {
			t.Errorf("check %d: the registry answered p2r's document %v, want %v", i+1, got, want)
		}
	}
}
