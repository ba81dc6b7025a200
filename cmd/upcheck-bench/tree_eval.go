package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/tree"
)

const (
	// treeInstances is the installed tree's size: a site of 3,000
	// installed package instances, of treeNames packages (the others are
	// nested second versions of some of them).
	treeInstances = 3000
	treeNames     = 2700
)

// treeEval is part 10 (`-only tree-eval`): the real binary imports an OSV
// archive of feedRecords records (`upcheck feed import osv FILE`) naming
// every package of a tree of treeInstances installed instances, timed;
// the tree is then written (by the lockfile sync's writer, store.Tx.TreeWrite), and
// `upcheck check` evaluates every installed version against the stored
// records, timed, with the process's peak RSS; a second check, with
// nothing moved, evaluates nothing and is the check's own cost; a third,
// after the feeds' version moved, evaluates every version again over the
// stored findings. Target:
// the tree's evaluation at most a quarter of the archive's import, in the
// same run.
func treeEval(ctx context.Context, binary string, cluster *devdb.Cluster) error {
	dir, err := os.MkdirTemp("", "upcheck-bench-tree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	url, env, imported, drop, err := treeEvalImport(ctx, binary, cluster, dir)
	defer drop()
	if err != nil {
		return err
	}
	if err := writeTree(ctx, url); err != nil {
		return err
	}
	first, rss, err := check(binary, env)
	if err != nil {
		return err
	}
	idle, _, err := check(binary, env)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// The feeds moved (as a feed sync that stored a change moves them):
	// every installed version is evaluated again, over the stored findings.
	if _, err := conn.Exec(ctx, `UPDATE intel_state SET version = version + 1`); err != nil {
		return err
	}
	again, againRSS, err := check(binary, env)
	if err != nil {
		return err
	}
	var findings, versions, evaluations int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM tree_findings), (SELECT count(DISTINCT (name, version)) FROM tree_findings),
		(SELECT count(*) FROM tree_evaluation)`).Scan(&findings, &versions, &evaluations); err != nil {
		return err
	}
	if evaluations != 1 || findings == 0 {
		return fmt.Errorf("the check wrote %d evaluations and %d findings: the tree was not evaluated", evaluations, findings)
	}
	reportTreeEval(findings, versions, imported, first, idle, again, rss, againRSS)
	return nil
}

// treeEvalImport makes the bench's archive of feedRecords records naming
// the tree's packages under dir, a database of its own (dropped by drop,
// unless kept; never nil) and imports the archive into it with the real binary,
// timed.
func treeEvalImport(ctx context.Context, binary string, cluster *devdb.Cluster, dir string) (url string, env []string, imported importRun, drop func(), err error) {
	drop = func() {}
	names := make([]string, treeNames)
	for i := range names {
		names[i] = treePackage(i)
	}
	archive := filepath.Join(dir, "all.zip")
	if err := writeArchive(archive, osvgen.Spec{N: feedRecords, Seed: 11, Packages: names, MalShare: feedMalShare}); err != nil {
		return "", nil, importRun{}, drop, err
	}
	name := fmt.Sprintf("bench_tree_%d", time.Now().Unix())
	if err := cluster.CreateDatabase(ctx, name); err != nil {
		return "", nil, importRun{}, drop, err
	}
	url = cluster.URL(name)
	if keep {
		fmt.Println("database", url)
	} else {
		drop = func() { dropDatabase(cluster, name) }
	}
	env = []string{"UPCHECK_DATABASE_URL=" + url, "UPCHECK_LOG_LEVEL=WARN", "UPCHECK_FEED_DIR=" + dir, "PATH=" + os.Getenv("PATH")}
	if out, err := command(binary, env, "", "migrate").CombinedOutput(); err != nil {
		return "", nil, importRun{}, drop, fmt.Errorf("upcheck migrate: %v\n%s", err, out)
	}
	if imported, err = importOnce(binary, env, archive); err != nil {
		return "", nil, importRun{}, drop, err
	}
	if imported.res.Written != feedRecords {
		return "", nil, importRun{}, drop, fmt.Errorf("the import wrote %d of %d records: %+v", imported.res.Written, feedRecords, imported.res)
	}
	report("tree_eval_import_wall", imported.wall.Seconds(), "s", "", nil)
	return url, env, imported, drop, nil
}

// reportTreeEval reports the tree evaluation's figures: the first check
// (it evaluated every installed version), the idle one (nothing moved),
// the one after the feeds moved, and the first check's time against the
// import's (target <= 0.25).
func reportTreeEval(findings, versions int, imported importRun, first, idle, again checkResult, rss, againRSS int64) {
	evaluate := time.Duration(first.DurationMS-idle.DurationMS) * time.Millisecond
	report("tree_eval_instances", treeInstances, "packages", "", nil)
	report("tree_eval_findings", float64(findings), "findings", "", nil)
	report("tree_eval_versions_with_findings", float64(versions), "versions", "", nil)
	report("tree_eval_check_ms", float64(first.DurationMS), "ms", "", nil)
	report("tree_eval_idle_check_ms", float64(idle.DurationMS), "ms", "", nil)
	report("tree_eval_evaluation_ms", float64(evaluate.Milliseconds()), "ms", "", nil)
	report("tree_eval_check_cpu", first.cpu.Seconds(), "s", "", nil)
	report("tree_eval_check_peak_rss", float64(rss)/1024, "MiB", "< 200", yes(rss < 200<<10))
	report("tree_eval_again_check_ms", float64(again.DurationMS), "ms", "", nil)
	report("tree_eval_again_peak_rss", float64(againRSS)/1024, "MiB", "< 200", yes(againRSS < 200<<10))
	// The whole check's time, the evaluation's upper bound, against the
	// import's.
	ratio := (time.Duration(first.DurationMS) * time.Millisecond).Seconds() / imported.wall.Seconds()
	report("tree_eval_vs_import", ratio, "check/import", "<= 0.25", yes(ratio <= 0.25))
}

// treePackage is the i-th package name of the tree, each named by a
// record of the archive.
func treePackage(i int) string { return fmt.Sprintf("bench-dep-%04d", i) }

// writeArchive writes the records of spec as an OSV archive at path.
func writeArchive(path string, spec osvgen.Spec) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = osvgen.WriteArchive(w, osvgen.Records(spec))
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeTree writes the installed tree as a lockfile sync does
// (store.Tx.TreeWrite): treeInstances instances of treeNames packages
// (the last ones nested second versions, under the first ones), every
// tenth a development dependency of the site; each version's interval
// opened, and the tree's state.
func writeTree(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	t := &tree.Tree{}
	for i := range treeInstances {
		n, id, version := i%treeNames, "node_modules/"+treePackage(i%treeNames), fmt.Sprintf("1.%d.%d", i%20, i%3)
		from, dev := tree.Root, i%10 == 0
		if i >= treeNames {
			from = "node_modules/" + treePackage(i-treeNames)
			id, version = from+"/node_modules/"+treePackage(n), fmt.Sprintf("0.%d.0", i%9)
		}
		kind := tree.KindProd
		if dev && from == tree.Root {
			kind = tree.KindDev
		}
		t.Packages = append(t.Packages, tree.Package{ID: id, Name: treePackage(n), Version: version, Dev: dev, Source: tree.SourceRegistry})
		t.Edges = append(t.Edges, tree.Edge{From: from, Name: treePackage(n), Range: "^" + version, Kind: kind, To: id})
	}
	t.Sort()
	w := &store.TreeWrite{Site: store.LocalSite, Path: "/bench/package-lock.json", FileHash: t.Hash(), Tree: t}
	if err := store.New(pool).WithTx(ctx, func(tx *store.Tx) error {
		_, err := tx.TreeWrite(ctx, w)
		return err
	}); err != nil {
		return fmt.Errorf("write the tree: %w", err)
	}
	return nil
}
