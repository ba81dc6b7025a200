//go:build crash

package crashtest

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/lockgen"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// treeSnapshot is the stored tree as one text: the state, every instance,
// edge and history interval. Two equal snapshots are one tree.
func treeSnapshot(t *testing.T, d *pgtest.DB) string {
	t.Helper()
	return query[string](t, d, `SELECT concat_ws('|',
		(SELECT concat_ws(',', encode(file_hash, 'hex'), encode(tree_hash, 'hex'), epoch, packages, synced_at, changed_at) FROM tree_state),
		(SELECT md5(coalesce(string_agg(concat_ws(',', id, name, version, via::text, components::text, row_hash), ';' ORDER BY id), '')) FROM tree_packages),
		(SELECT md5(coalesce(string_agg(concat_ws(',', from_id, name, kind, range, to_id), ';' ORDER BY from_id, name, kind), '')) FROM tree_edges),
		(SELECT md5(coalesce(string_agg(concat_ws(',', name, version, installed_at, removed_at), ';' ORDER BY id), '')) FROM tree_versions))`)
}

// writeLock writes the package-lock.json of a generated tree of n packages.
func writeLock(t *testing.T, path string, n int) int {
	t.Helper()
	tr := lockgen.Tree(n, "http://127.0.0.1:9/")
	b, err := lockgen.PackageLock(tr, "site")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return len(tr.Edges)
}

// A lockfile sync SIGKILLed while it writes the installed tree (its
// transaction open, half the rows sent) leaves the tree of the sync before
// it, whole: the same state, instances, edges and history. The next sync
// writes the new tree whole.
func TestLockfileSyncKilledWhileWritingTheTree(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	lock := filepath.Join(t.TempDir(), "package-lock.json")
	e := baseEnv(d).with("UPCHECK_NPM_REGISTRY", "http://127.0.0.1:9/")
	args := []string{"components", "sync", "--lockfile", lock, "--core", lockgen.Name(0)}
	writeLock(t, lock, 200)
	if p := start(t, e, args...); p.wait(60*time.Second) != 0 {
		t.Fatalf("first sync: exit %d; %s", p.code, p.line())
	}
	// The sync is caught inside the tree's transaction, its packages
	// written, its edges or history being written (the client stopped,
	// the transaction open), then killed. A sync that committed before it was stopped is
	// tried again with another tree.
	inside := `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
		  AND (query LIKE '%name: TreeEdgesPut%' OR query LIKE '%name: TreeVersionsWrite%'))`
	var edges int
	var before string
	killed := false
	for _, n := range []int{3000, 2800, 2600} {
		before = treeSnapshot(t, d)
		edges = writeLock(t, lock, n)
		p := start(t, e, args...)
		for !killed {
			if query[bool](t, d, inside) {
				p.signal(syscall.SIGSTOP)
				killed = query[bool](t, d, inside) // still open once stopped: it cannot commit now
				p.signal(syscall.SIGKILL)
				break
			}
			select {
			case <-p.done:
			case <-time.After(time.Millisecond):
				continue
			}
			break
		}
		p.wait(60 * time.Second)
		if killed {
			break
		}
	}
	if !killed {
		t.Fatal("could not kill a sync inside the tree's transaction in 3 attempts")
	}
	// The killed client's connection ends; the database rolls its
	// transaction back.
	wait.True(t, "the killed sync's transaction to end", 10*time.Second, func() bool { return !query[bool](t, d, inside) })
	if after := treeSnapshot(t, d); after != before {
		t.Fatalf("the tree after the kill differs from the tree before the sync:\nbefore %s\nafter  %s", before, after)
	}

	if p := start(t, e, args...); p.wait(60*time.Second) != 0 {
		t.Fatalf("sync after the kill: exit %d; %s", p.code, p.line())
	}
	var pkgs, stored, storedEdges int
	d.QueryRow(t, `SELECT (SELECT packages FROM tree_state), (SELECT count(*) FROM tree_packages), (SELECT count(*) FROM tree_edges)`).
		Scan(&pkgs, &stored, &storedEdges)
	if pkgs != stored || storedEdges != edges {
		t.Fatalf("after the next sync: state says %d packages, %d stored, %d edges (want %d)", pkgs, stored, storedEdges, edges)
	}
}

// treeFindingsSnapshot is the tree's findings and what they were
// evaluated at (the feeds' version, and each site's tree as matched), as
// one text.
func treeFindingsSnapshot(t *testing.T, d *pgtest.DB) string {
	t.Helper()
	return query[string](t, d, `SELECT concat_ws('|',
		(SELECT concat_ws(',', encode(tree_hash, 'hex'), intel_version, evaluated_at) FROM tree_evaluation),
		(SELECT string_agg(site_id || ':' || encode(coalesce(evaluated_hash, ''), 'hex'), ',' ORDER BY site_id) FROM tree_state),
		(SELECT count(*) FROM tree_findings),
		(SELECT md5(coalesce(string_agg(concat_ws(',', name, version, advisory_id, advisory::text, found_at), ';'
			ORDER BY name, version, advisory_id), '')) FROM tree_findings))`)
}

// treeArchive serves an OSV archive naming the first n packages of a
// lockgen tree, each by one record affecting every version below 9.0.0,
// with ids made of tag: a different tag is a different archive.
func treeArchive(fs *feedserver.Server, tag string, n int) {
	fs.SetRecords(func(yield func(string, []byte) bool) {
		for i := range n {
			id := fmt.Sprintf("GHSA-%s-%04d-tree", tag, i)
			if !yield(id, osvgen.Record(id, lockgen.Name(i), osvgen.KindVuln, "", "9.0.0")) {
				return
			}
		}
	})
}

// A feed sync SIGKILLed while it writes the installed tree's findings
// (the evaluation's transaction open, after the records were stored)
// leaves the findings of the evaluation before it, whole, and what they
// were evaluated at: the next sync finds the feeds moved past them and
// writes the new findings whole.
//
// Not parallel: its 2,000-package sync and 1,800-finding evaluations run
// before the package's parallel tests, whose lease timings they would
// stretch (TestPausedInsideFencedTransaction's taker lost its lease
// beside them once under the fault workload).
func TestFeedSyncKilledWhileWritingTheTreeFindings(t *testing.T) {
	d := pgtest.New(t)
	fs := feedserver.New(t)
	fs.ModifiedCSV(false)
	lock := filepath.Join(t.TempDir(), "package-lock.json")
	writeLock(t, lock, 2000)
	e := baseEnv(d).with("UPCHECK_NPM_REGISTRY", "http://127.0.0.1:9/",
		"UPCHECK_FEEDS", "osv="+fs.ArchiveURL(), "UPCHECK_FEED_DIR", t.TempDir())
	if p := start(t, e, "components", "sync", "--lockfile", lock, "--core", lockgen.Name(0)); p.wait(60*time.Second) != 0 {
		t.Fatalf("lockfile sync: exit %d; %s", p.code, p.line())
	}
	treeArchive(fs, "base", 20)
	if p := start(t, e, "feed", "sync"); p.wait(60*time.Second) != 0 || !feedResult(t, p).TreeEvaluated {
		t.Fatalf("first feed sync: exit %d, the tree not evaluated; %s", p.code, p.line())
	}
	if n := query[int64](t, d, `SELECT count(*) FROM tree_findings`); n < 20 {
		t.Fatalf("after the first feed sync: %d tree findings, want one for each of the 20 packages named at least", n)
	}

	// The evaluation is caught inside its transaction after its findings
	// were written (what follows them there: the stale fixes, the
	// events), the client stopped with the transaction open, then
	// killed: an evaluation that committed its findings in parts would
	// show them here. A sync whose evaluation committed before it was
	// stopped is tried again with another archive.
	inside := `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
		  AND (query LIKE '%name: TreeFixesDeleteStale%'
		       OR query LIKE '%name: EventPlanTreeFindings%' OR query LIKE '%name: EventPlanTreeExposed%'))`
	var before string
	killed := false
	for attempt := range 3 {
		before = treeFindingsSnapshot(t, d)
		treeArchive(fs, fmt.Sprintf("k%d", attempt), 1800)
		p := start(t, e, "feed", "sync")
		for !killed {
			if query[bool](t, d, inside) {
				p.signal(syscall.SIGSTOP)
				killed = query[bool](t, d, inside)
				p.signal(syscall.SIGKILL)
				break
			}
			select {
			case <-p.done:
			case <-time.After(time.Millisecond):
				continue
			}
			break
		}
		p.wait(60 * time.Second)
		if killed {
			t.Logf("killed inside the evaluation's transaction at attempt %d", attempt+1)
			break
		}
	}
	if !killed {
		t.Fatal("could not kill a feed sync inside the tree evaluation's transaction in 3 attempts")
	}
	wait.True(t, "the killed sync's transaction to end", 10*time.Second, func() bool { return !query[bool](t, d, inside) })
	if after := treeFindingsSnapshot(t, d); after != before {
		t.Fatalf("the tree's findings after the kill differ from those before the sync:\nbefore %s\nafter  %s", before, after)
	}

	waitLeaseExpired(t, d, 6*time.Second)
	p := start(t, e, "feed", "sync")
	if p.wait(60*time.Second) != 0 {
		t.Fatalf("feed sync after the kill: exit %d; %s", p.code, p.line())
	}
	if !feedResult(t, p).TreeEvaluated {
		t.Errorf("the sync after the kill did not evaluate the tree: %s", p.line())
	}
	var findings, named, current int64
	d.QueryRow(t, `SELECT (SELECT count(*) FROM tree_findings),
		(SELECT count(DISTINCT name) FROM tree_findings),
		(SELECT count(*) FROM tree_evaluation e JOIN tree_state s ON s.evaluated_hash = s.tree_hash
		  WHERE e.intel_version = (SELECT version FROM intel_state))`).Scan(&findings, &named, &current)
	if named != 1800 || current != 1 {
		t.Fatalf("after the next sync: %d findings on %d packages, evaluation current: %d; want the 1,800 packages the archive names",
			findings, named, current)
	}
}
