package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

const (
	// feedRecords is the archive's size: the npm ecosystem's OSV archive
	// is of that order.
	feedRecords = 200_000
	// feedMalShare is the share of MAL records in it: most of npm's
	// records are malicious-package reports (an estimate: the bench's
	// figure, not a measured count of the real archive).
	feedMalShare = 0.8
)

// feedImport is part 9 (`-only feeds`): the real binary imports an OSV
// archive of feedRecords generated records (`upcheck feed import osv
// FILE`), timed, with the process's peak RSS; the same import again,
// where nothing changed; then a manifest sync of 10,000 components whose
// packages the archive names, against the same sync in a database without
// the archive, in the same run.
func feedImport(ctx context.Context, binary string, cluster *devdb.Cluster) error {
	dir, err := os.MkdirTemp("", "upcheck-bench-feeds-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	archive, err := benchArchive(dir)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("bench_feeds_%d", time.Now().Unix())
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
	if err := importTwice(binary, env, archive); err != nil {
		return err
	}
	return evaluationWithArchive(ctx, cluster, url)
}

// benchArchive writes the bench's archive under dir, reports its size and
// how long it took, and returns its path.
func benchArchive(dir string) (string, error) {
	archive := filepath.Join(dir, "all.zip")
	start := time.Now()
	if err := writeFeedArchive(archive); err != nil {
		return "", err
	}
	fi, err := os.Stat(archive)
	if err != nil {
		return "", err
	}
	report("feeds_archive_records", feedRecords, "records", "", nil)
	report("feeds_archive_bytes", float64(fi.Size())/(1<<20), "MiB", "", nil)
	report("feeds_archive_generated_in", time.Since(start).Seconds(), "s", "", nil)
	if n, err := uncompressed(archive); err == nil {
		report("feeds_archive_uncompressed", float64(n)/(1<<20), "MiB", "", nil)
	}
	return archive, nil
}

// importTwice imports the archive into an empty database, then again
// where nothing changed, and reports both.
func importTwice(binary string, env []string, archive string) error {
	first, err := importOnce(binary, env, archive)
	if err != nil {
		return err
	}
	if first.res.Written != feedRecords {
		return fmt.Errorf("the first import wrote %d of %d records: %+v", first.res.Written, feedRecords, first.res)
	}
	report("feeds_import_wall", first.wall.Seconds(), "s", "", nil)
	report("feeds_import_cpu", first.cpu.Seconds(), "s", "", nil)
	report("feeds_import_records_per_s", feedRecords/first.wall.Seconds(), "records/s", "", nil)
	report("feeds_import_peak_rss", float64(first.rss)/1024, "MiB", "< 200", yes(first.rss < 200<<10))

	again, err := importOnce(binary, env, archive)
	if err != nil {
		return err
	}
	report("feeds_reimport_wall", again.wall.Seconds(), "s", "", nil)
	report("feeds_reimport_cpu", again.cpu.Seconds(), "s", "", nil)
	report("feeds_reimport_wall_minus_cpu", (again.wall - again.cpu).Seconds(), "s", "", nil)
	report("feeds_reimport_peak_rss", float64(again.rss)/1024, "MiB", "< 200", yes(again.rss < 200<<10))
	report("feeds_reimport_written", float64(again.res.Written), "records", "0", yes(again.res.Written == 0))
	report("feeds_reimport_unchanged", float64(again.res.Unchanged), "records", fmt.Sprint(feedRecords), yes(again.res.Unchanged == feedRecords))
	ratio := again.wall.Seconds() / first.wall.Seconds()
	report("feeds_reimport_vs_import", ratio, "again/first", "<= 0.10", yes(ratio <= 0.10))
	return nil
}

// evaluationWithArchive times the same manifest sync in the database at
// url, which holds the archive, and in a new one without it.
func evaluationWithArchive(ctx context.Context, cluster *devdb.Cluster, url string) error {
	with, advised, err := feedSync(ctx, url)
	if err != nil {
		return err
	}
	bare := fmt.Sprintf("bench_feeds_bare_%d", time.Now().Unix())
	if err := cluster.CreateDatabase(ctx, bare); err != nil {
		return err
	}
	defer dropDatabase(cluster, bare)
	without, _, err := feedSync(ctx, cluster.URL(bare))
	if err != nil {
		return err
	}
	report("feeds_sync_with_archive_wall", with.Seconds(), "s", "", nil)
	report("feeds_sync_without_archive_wall", without.Seconds(), "s", "", nil)
	report("feeds_sync_components_with_osv", float64(advised), "components", "", nil)
	report("feeds_sync_with_vs_without", with.Seconds()/without.Seconds(), "with/without", "", nil)
	return nil
}

// feedPackage is the package of the i-th component of the sync, which the
// i-th record of the archive names.
func feedPackage(i int) string { return fmt.Sprintf("bench-plugin-%05d", i) }

func writeFeedArchive(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	pkgs := make([]string, syncSources*syncPerSource)
	for i := range pkgs {
		pkgs[i] = feedPackage(i)
	}
	err = osvgen.WriteArchive(w, osvgen.Records(osvgen.Spec{N: feedRecords, Seed: 9, Packages: pkgs, MalShare: feedMalShare}))
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// uncompressed is the size of the archive's records, from its directory.
func uncompressed(path string) (uint64, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	var n uint64
	for _, f := range zr.File {
		n += f.UncompressedSize64
	}
	return n, nil
}

type importRun struct {
	res  feedsync.Result
	wall time.Duration
	cpu  time.Duration
	rss  int64 // KiB
}

// importOnce runs `upcheck feed import osv FILE` and reads its result line.
func importOnce(binary string, env []string, archive string) (importRun, error) {
	cmd := command(binary, env, "", "feed", "import", "osv", archive)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, rss, err := peakRSS(cmd)
	run := importRun{wall: time.Since(start), rss: rss}
	if err != nil {
		return run, fmt.Errorf("feed import: %v: %s%s", err, out, stderr.Bytes())
	}
	run.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err := json.Unmarshal(bytes.TrimSpace(out), &run.res); err != nil {
		return run, fmt.Errorf("feed import output %q: %w", out, err)
	}
	if rss == 0 {
		return run, fmt.Errorf("the import's peak RSS could not be read from /proc")
	}
	return run, nil
}

// feedSync adds the sync part's 10,000 components (their documents stored
// first), each naming a package of the archive, with one manifest sync in
// process, and returns its wall time and how many results carry an OSV
// advisory.
func feedSync(ctx context.Context, url string) (time.Duration, int, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return 0, 0, err
	}
	defer pool.Close()
	quiet := slog.New(slog.DiscardHandler)
	if err := store.Migrate(ctx, pool, quiet); err != nil {
		return 0, 0, err
	}
	st := store.New(pool)
	lm, err := lease.New(st, lease.DefaultTimings(), lease.WithLogger(quiet))
	if err != nil {
		return 0, 0, err
	}
	if err := storeSyncDocuments(ctx, lm); err != nil {
		return 0, 0, err
	}
	f := fetch.New(fetch.Config{}, quiet)
	defer f.Close()
	syncer := updatecheck.NewSyncer(updatecheck.New(st, lm, f, quiet))
	m := syncManifest("1.0.0")
	for i := range m.Components[1:] {
		m.Components[i+1].Package = feedPackage(i)
	}
	start := time.Now()
	rep, err := syncer.Sync(ctx, m)
	wall := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if rep.Reevaluated != len(m.Components) {
		return 0, 0, fmt.Errorf("the feeds' sync evaluated %d components, want %d", rep.Reevaluated, len(m.Components))
	}
	var advised int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM component_results WHERE advisories::text LIKE '%"osv"%'`).Scan(&advised)
	return wall, advised, err
}
