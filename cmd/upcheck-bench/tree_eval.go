package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
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
// the tree is then written (as a lockfile sync writes 00012's tables), and
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
	names := make([]string, treeNames)
	for i := range names {
		names[i] = treePackage(i)
	}
	archive := filepath.Join(dir, "all.zip")
	if err := writeArchive(archive, osvgen.Spec{N: feedRecords, Seed: 11, Packages: names, MalShare: feedMalShare}); err != nil {
		return err
	}
	name := fmt.Sprintf("bench_tree_%d", time.Now().Unix())
	if err := cluster.CreateDatabase(ctx, name); err != nil {
		return err
	}
	url := cluster.URL(name)
	if keep {
		fmt.Println("database", url)
	} else {
		defer dropDatabase(cluster, name)
	}
	env := []string{"UPCHECK_DATABASE_URL=" + url, "UPCHECK_LOG_LEVEL=WARN", "UPCHECK_FEED_DIR=" + dir, "PATH=" + os.Getenv("PATH")}
	if out, err := command(binary, env, "", "migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("upcheck migrate: %v\n%s", err, out)
	}
	imported, err := importOnce(binary, env, archive)
	if err != nil {
		return err
	}
	if imported.res.Written != feedRecords {
		return fmt.Errorf("the import wrote %d of %d records: %+v", imported.res.Written, feedRecords, imported.res)
	}
	report("tree_eval_import_wall", imported.wall.Seconds(), "s", "", nil)

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
	return nil
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

// writeTree writes the installed tree as a lockfile sync does (00012's
// tables): treeInstances instances of treeNames packages (the last ones
// nested second versions), each version's interval opened, and the tree's
// state.
func writeTree(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows := make([][]any, 0, treeInstances)
	for i := range treeInstances {
		n, id, version := i%treeNames, "node_modules/"+treePackage(i%treeNames), fmt.Sprintf("1.%d.%d", i%20, i%3)
		if i >= treeNames {
			id = "node_modules/" + treePackage(i-treeNames) + "/node_modules/" + treePackage(n)
			version = fmt.Sprintf("0.%d.0", i%9)
		}
		rows = append(rows, []any{id, treePackage(n), version, i%10 == 0, false, false, "registry", false, i%10 == 0})
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after a commit: nothing to roll back
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"tree_packages"},
		[]string{"id", "name", "version", "dev", "optional", "peer", "source", "install_script", "dev_only"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("write the tree: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tree_versions (name, version, installed_at)
		SELECT DISTINCT name, version, now() FROM tree_packages`); err != nil {
		return fmt.Errorf("write the tree's history: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tree_state (path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at)
		VALUES ('/bench/package-lock.json', '\x01', '\x02', '\x03', 1, $1, now(), now())`, treeInstances); err != nil {
		return fmt.Errorf("write the tree's state: %w", err)
	}
	return tx.Commit(ctx)
}
