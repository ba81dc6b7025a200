package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/dev/devdb"
)

// durations is a flag of comma-separated durations (-latency 20ms,50ms).
type durations []time.Duration

func (d *durations) String() string {
	var s []string
	for _, v := range *d {
		s = append(s, v.String())
	}
	return strings.Join(s, ",")
}

func (d *durations) Set(v string) error {
	*d = nil
	for _, f := range strings.Split(v, ",") {
		t, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || t < 0 {
			return fmt.Errorf("latency %q: a duration such as 20ms", f)
		}
		*d = append(*d, t)
	}
	if len(*d) == 0 {
		return fmt.Errorf("no latency given")
	}
	return nil
}

// benchDB is a database with the 10,001 components stored, the
// publishers that serve their sources, and the environment of the
// upcheck processes that use it.
type benchDB struct {
	url   string
	env   []string
	pubs  *publishers
	close func()
}

// setUp creates a database, starts publishers answering after delay, and
// stores the manifest's components in it.
func setUp(ctx context.Context, binary string, cluster *devdb.Cluster, delay time.Duration, keepIt bool) (*benchDB, error) {
	name := fmt.Sprintf("bench_%d", time.Now().UnixNano())
	if err := cluster.CreateDatabase(ctx, name); err != nil {
		return nil, err
	}
	db := &benchDB{url: cluster.URL(name)}
	var undo []func()
	db.close = func() {
		for _, f := range slices.Backward(undo) {
			f()
		}
	}
	if keepIt {
		fmt.Println("database", db.url)
	} else {
		undo = append(undo, func() { dropDatabase(cluster, name) })
	}
	pubs, err := startPublishers(delay)
	if err != nil {
		db.close()
		return nil, err
	}
	db.pubs = pubs
	undo = append(undo, pubs.close)
	dir, err := os.MkdirTemp("", "upcheck-bench-")
	if err != nil {
		db.close()
		return nil, err
	}
	undo = append(undo, func() { os.RemoveAll(dir) })
	manifest := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifest, pubs.manifest(), 0o644); err != nil {
		db.close()
		return nil, err
	}
	db.env = []string{
		"UPCHECK_DATABASE_URL=" + db.url, "UPCHECK_MANIFEST=" + manifest, "UPCHECK_ALLOW_PRIVATE_SOURCES=1",
		"UPCHECK_LOG_LEVEL=WARN", "UPCHECK_LISTEN=127.0.0.1:0", "PATH=" + os.Getenv("PATH"),
	}
	for _, args := range [][]string{{"migrate"}, {"components", "sync"}} {
		if out, err := command(binary, db.env, "", args...).CombinedOutput(); err != nil {
			db.close()
			return nil, fmt.Errorf("upcheck %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return db, nil
}

// checkRun is one measurement of part 1: the check and the bare fetcher
// over the same URLs at one latency, one after the other.
type checkRun struct {
	latency     time.Duration
	check, bare time.Duration
}

func (r checkRun) ratio() float64 { return r.bare.Seconds() / r.check.Seconds() }

var checkRuns []checkRun

// documentChecks is part 1: at each -latency, -runs times, a database of
// its own with the 10,001 components, the first check (every document
// new) against a bare fetcher of the same URLs; in each latency's first
// run also the check answered by 304s, and in the very first the cost of
// one source's fenced write (sourceWrites). The database of the first run
// is returned for the parts that follow; the others are dropped.
func documentChecks(ctx context.Context, binary string, cluster *devdb.Cluster) (*benchDB, error) {
	var first *benchDB
	for li, delay := range latencies {
		for run := range runs {
			isFirst := li == 0 && run == 0
			db, err := setUp(ctx, binary, cluster, delay, keep && isFirst)
			if err != nil {
				if first != nil {
					first.close()
				}
				return nil, err
			}
			err = documentCheck(ctx, binary, db, delay, run == 0, isFirst)
			if isFirst {
				first = db
			} else {
				db.close()
			}
			if err != nil {
				first.close()
				return nil, err
			}
		}
	}
	return first, nil
}

// documentCheck measures one run of part 1 at latency delay.
func documentCheck(ctx context.Context, binary string, db *benchDB, delay time.Duration, with304, withWrites bool) error {
	sfx := "_" + delay.String()
	pubs := db.pubs
	ideal := time.Duration(sources) * delay / poolSize
	res, rss, err := check(binary, db.env)
	if err != nil {
		return err
	}
	if res.Fetched != sources {
		return fmt.Errorf("first check fetched %d of %d sources: %+v", res.Fetched, sources, res)
	}
	wall := time.Duration(res.DurationMS) * time.Millisecond
	report("check_wall"+sfx, wall.Seconds(), "s", "", nil)
	ratio := ideal.Seconds() / wall.Seconds()
	report("check_throughput_ratio"+sfx, ratio, "ideal/actual", ">= 0.90", yes(ratio >= 0.90))
	report("check_bytes"+sfx, float64(pubs.bytes.Swap(0)), "B", "", nil)
	bare, err := bareFetch(ctx, pubs)
	if err != nil {
		return err
	}
	pubs.bytes.Swap(0)
	report("bare_fetch_wall"+sfx, bare.Seconds(), "s", "", nil)
	run := checkRun{latency: delay, check: wall, bare: bare}
	checkRuns = append(checkRuns, run)
	report("check_vs_bare"+sfx, run.ratio(), "bare/check", ">= 0.95", yes(run.ratio() >= 0.95))
	report("check_cpu"+sfx, res.cpu.Seconds(), "s", "", nil)
	report("check_peak_rss"+sfx, float64(rss)/1024, "MiB", "< 150", yes(rss < 150<<10))
	if withWrites {
		// One source's write, now that every source and result is stored.
		if err := sourceWrites(ctx, db.url); err != nil {
			return err
		}
	}
	if !with304 {
		return nil
	}
	res304, rss304, err := check(binary, db.env)
	if err != nil {
		return err
	}
	report("check304_wall"+sfx, float64(res304.DurationMS)/1000, "s", "", nil)
	report("check304_not_modified"+sfx, float64(res304.NotModified), "sources", fmt.Sprint(sources), yes(res304.NotModified == sources))
	report("check304_bytes"+sfx, float64(pubs.bytes.Swap(0)), "B", "", nil)
	report("check304_cpu"+sfx, res304.cpu.Seconds(), "s", "", nil)
	report("check304_peak_rss"+sfx, float64(rss304)/1024, "MiB", "< 150", yes(rss304 < 150<<10))
	return nil
}

// printChecks prints part 1's runs as a table: per run, at each latency,
// the check's and the bare fetcher's wall times and bare ÷ check, then
// each latency's lowest and median ratio.
func printChecks() {
	if len(checkRuns) == 0 {
		return
	}
	fmt.Println()
	fmt.Printf("%-6s", "run")
	for _, l := range latencies {
		fmt.Printf(" | %-30s", fmt.Sprintf("%s: check / bare (bare÷check)", l))
	}
	fmt.Println()
	byLatency := map[time.Duration][]checkRun{}
	for _, r := range checkRuns {
		byLatency[r.latency] = append(byLatency[r.latency], r)
	}
	for i := range runs {
		fmt.Printf("%-6d", i+1)
		for _, l := range latencies {
			if rs := byLatency[l]; i < len(rs) {
				r := rs[i]
				fmt.Printf(" | %-30s", fmt.Sprintf("%.2f s / %.2f s (%.3f)", r.check.Seconds(), r.bare.Seconds(), r.ratio()))
			} else {
				fmt.Printf(" | %-30s", "")
			}
		}
		fmt.Println()
	}
	for _, row := range []string{"lowest", "median"} {
		fmt.Printf("%-6s", row)
		for _, l := range latencies {
			var ratios []float64
			for _, r := range byLatency[l] {
				ratios = append(ratios, r.ratio())
			}
			slices.Sort(ratios)
			v := ratios[0]
			if row == "median" {
				v = ratios[len(ratios)/2]
			}
			verdict := "met"
			if v < 0.95 {
				verdict = "MISSED"
			}
			fmt.Printf(" | %-30s", fmt.Sprintf("%.3f (>= 0.95 %s)", v, verdict))
		}
		fmt.Println()
	}
}
