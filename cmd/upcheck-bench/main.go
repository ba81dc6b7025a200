// Command upcheck-bench is `make bench`: it measures the check's throughput,
// the cost of fencing, the summary and the AdminCP pages under load, the
// lease operations, the notifications, the lock holds of a 10,000-component
// manifest sync, a check of 500 npm packages and the import of a 200,000-record
// OSV archive, side by side in one run,
// and prints ratios against baselines measured in the same run (absolute
// times on shared machines are noise; ratios are not). Each figure is one line "name value unit"
// (benchstat-friendly), then a table with targets and verdicts. It exits
// non-zero only when it could not run: a missed target is for us to chase,
// not a gate.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
)

const (
	sources    = 2000
	perSource  = 5 // 10,000 plugins and the core
	hosts      = 16
	latency    = 20 * time.Millisecond // the npm registry's (part 8); part 1 takes -latency
	poolSize   = 8                     // the fetcher's default concurrency
	loadTime   = 5 * time.Second
	loadConns  = 32
	writeIters = 400
)

type figure struct {
	name   string
	value  float64
	unit   string
	target string
	ok     *bool
}

var (
	figures   []figure
	only      string // -only: the one part to run after the check
	keep      bool   // -keep: do not drop the database
	latencies = durations{20 * time.Millisecond, 50 * time.Millisecond}
	runs      int
)

// reportMu guards figures: a part may report from several goroutines.
var reportMu sync.Mutex

func report(name string, value float64, unit, target string, ok *bool) {
	reportMu.Lock()
	defer reportMu.Unlock()
	figures = append(figures, figure{name, value, unit, target, ok})
	fmt.Printf("%s %.4g %s\n", name, value, unit)
}

func yes(b bool) *bool { return &b }

func main() {
	binary := flag.String("binary", "bin/upcheck", "the upcheck binary to measure")
	dataDir := flag.String("data", ".data/benchpg", "the private cluster for the benchmark")
	flag.StringVar(&only, "only", "", "run one part: check (the document check alone), load (the check, the summary and the pages), sync, npm, feeds, tree, tree-eval or fleet (that part alone)")
	flag.BoolVar(&keep, "keep", false, "keep the benchmark's database (its URL is printed), to EXPLAIN its queries")
	flag.Var(&latencies, "latency", "the publishers' latencies of the document check (part 1), comma-separated; each is measured -runs times")
	flag.IntVar(&fleetSites, "fleet-sites", fleetSites, "how many registered sites part 12 (-only fleet) fills: the issue's 10,000 by default, fewer for development")
	flag.StringVar(&fleetDB, "fleet-db", "", "part 12 (-only fleet) on a fleet database an earlier run kept (-keep printed its URL): the pushes and the reads only")
	flag.IntVar(&runs, "runs", 1, "how many times part 1 measures the document check at each latency (each in a database of its own); the ratios are printed as a table")
	flag.Parse()
	runs = max(runs, 1)
	if err := run(*binary, *dataDir); err != nil {
		fmt.Fprintln(os.Stderr, "upcheck-bench:", err)
		os.Exit(1)
	}
}

func run(binary, dataDir string) error {
	ctx := context.Background()
	binary, _ = filepath.Abs(binary)
	cluster, err := devdb.Ensure(ctx, dataDir, devdb.Options{MaxConnections: 200})
	if err != nil {
		return err
	}
	if part := alonePart(binary); part != nil {
		if err := part(ctx, cluster); err != nil {
			return err
		}
		printTable()
		return nil
	}
	// 1. The document check at each latency, -runs times; the database of
	// the first run is kept for the parts that follow.
	db, err := documentChecks(ctx, binary, cluster)
	if err != nil {
		return err
	}
	defer db.close()
	switch only {
	case "check":
		printTable()
		printChecks()
		return nil
	case "load":
		if err := underLoad(binary, db.env); err != nil {
			return err
		}
		printTable()
		return nil
	}
	for _, part := range laterParts(binary, cluster, db) {
		if err := part(ctx); err != nil {
			return err
		}
	}
	printTable()
	printChecks()
	return nil
}

// alonePart is the part -only names when it runs without the document
// check before it (sync, npm, feeds, tree, tree-eval); nil for the others.
func alonePart(binary string) func(context.Context, *devdb.Cluster) error {
	switch only {
	case "sync":
		return syncHolds
	case "npm":
		return func(ctx context.Context, c *devdb.Cluster) error { return npmCheck(ctx, binary, c) }
	case "feeds":
		return func(ctx context.Context, c *devdb.Cluster) error { return feedImport(ctx, binary, c) }
	case "tree":
		return func(ctx context.Context, c *devdb.Cluster) error { return treeSync(ctx, binary, c) }
	case "tree-eval":
		return func(ctx context.Context, c *devdb.Cluster) error { return treeEval(ctx, binary, c) }
	case "fleet":
		return func(ctx context.Context, c *devdb.Cluster) error { return fleet(ctx, binary, c) }
	}
	return nil
}

// laterParts are parts 2 to 11, in the order they run after the document
// check, on its kept database (db) or the cluster.
func laterParts(binary string, cluster *devdb.Cluster, db *benchDB) []func(context.Context) error {
	return []func(context.Context) error{
		// 2. The cost of fencing one source's write.
		func(ctx context.Context) error { return fencedWrites(ctx, db.url) },
		// 3 and 4. The summary and the pages under load, against /healthz.
		func(context.Context) error { return underLoad(binary, db.env) },
		// 5. Lease operations on one connection.
		func(ctx context.Context) error { return leaseOps(ctx, db.url) },
		// 6. Notifications: the cost of queueing on the fenced write, deliveries per second.
		func(ctx context.Context) error { return notifications(ctx, db.url) },
		// 7. A manifest sync of 10,000 components: how long the lease's lock is held.
		func(ctx context.Context) error { return syncHolds(ctx, cluster) },
		// 8. A check of 500 npm packages on a loopback registry, against a bare fetcher.
		func(ctx context.Context) error { return npmCheck(ctx, binary, cluster) },
		// 9. An OSV archive of 200,000 records imported, imported again unchanged, and 10,000 components evaluated against it.
		func(ctx context.Context) error { return feedImport(ctx, binary, cluster) },
		// 10. The installed tree of a lockfile of 3,000 packages: first sync, unchanged, 10 changed.
		func(ctx context.Context) error { return treeSync(ctx, binary, cluster) },
		// 11. A tree of 3,000 installed packages evaluated against an OSV archive of 200,000 records.
		func(ctx context.Context) error { return treeEval(ctx, binary, cluster) },
	}
}

// printTable prints every figure that has a target, with its verdict.
func printTable() {
	fmt.Println()
	fmt.Printf("%-28s %12s %-14s %-10s %s\n", "figure", "value", "unit", "target", "verdict")
	for _, f := range figures {
		if f.ok == nil {
			continue
		}
		verdict := "met"
		if !*f.ok {
			verdict = "MISSED"
		}
		fmt.Printf("%-28s %12.4g %-14s %-10s %s\n", f.name, f.value, f.unit, f.target, verdict)
	}
}

func command(binary string, env []string, stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return cmd
}

type checkResult struct {
	Status      string `json:"status"`
	Fetched     int    `json:"fetched"`
	NotModified int    `json:"not_modified"`
	Failed      int    `json:"failed"`
	DurationMS  int64  `json:"duration_ms"`
	// cpu is the CPU time (user and system) the check process used: on a
	// shared machine, what the check costs whatever the others do.
	cpu time.Duration
}

// check runs `upcheck check` (an operator run: no cooldown) and returns its
// result and the process's peak RSS in KiB (peakRSS).
func check(binary string, env []string) (checkResult, int64, error) {
	cmd := command(binary, env, "", "check")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, rss, err := peakRSS(cmd)
	if err != nil {
		return checkResult{}, 0, fmt.Errorf("check: %v: %s%s", err, out, stderr.Bytes())
	}
	var res checkResult
	if err := json.Unmarshal(out, &res); err != nil {
		return res, 0, fmt.Errorf("check output %q: %w", out, err)
	}
	res.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if rss == 0 {
		return res, 0, fmt.Errorf("the check's peak RSS could not be read from /proc")
	}
	return res, rss, nil
}

// publishers are 16 loopback hosts answering after delay, with ETags.
type publishers struct {
	servers []*http.Server
	urls    []string
	bytes   atomic.Int64
	delay   time.Duration
}

func startPublishers(delay time.Duration) (*publishers, error) {
	p := &publishers{delay: delay}
	for h := range hosts {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", h+2))
		if err != nil {
			p.close()
			return nil, fmt.Errorf("listen on 127.0.0.%d (loopback aliases are needed): %w", h+2, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		p.servers = append(p.servers, srv)
		p.urls = append(p.urls, "http://"+ln.Addr().String())
	}
	return p, nil
}

func (p *publishers) close() {
	for _, s := range p.servers {
		s.Close()
	}
}

var sourcePath = regexp.MustCompile(`^/s(\d+)\.json$`)

func (p *publishers) serve(w http.ResponseWriter, r *http.Request) {
	time.Sleep(p.delay)
	m := sourcePath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	etag := `"` + m[1] + `-v1"`
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	var pkgs []string
	for c := range perSource {
		pkgs = append(pkgs, fmt.Sprintf(`"p%s-%d": %s`, m[1], c, packageDoc(m[1], c)))
	}
	body := fmt.Sprintf(`{"format": 1, "publisher": "bench", "sequence": 1, "packages": {%s}}`, strings.Join(pkgs, ","))
	w.Header().Set("ETag", etag)
	// Counted before it is sent: the bench reads the count once its client
	// has the body, which may be before this handler returns.
	p.bytes.Add(int64(len(body)))
	io.WriteString(w, body)
}

// packageDoc is the publisher's entry for the c-th plugin of source s: a
// mix, so that every filter of the catalog has rows and the attention list
// has every kind: the first plugin of a source has a security release and
// an advisory fixed by it, the second an advisory without a fix, the third
// a plain update, the others are up to date.
func packageDoc(s string, c int) string {
	switch c {
	case 0:
		return fmt.Sprintf(`{"releases": [{"version": "1.0.0"}, {"version": "1.1.0", "security": true, "severity": "high"}],
			"advisories": [{"id": "A-%s-%d", "affected": "<1.1.0", "fixed_in": "1.1.0", "severity": "high"}]}`, s, c)
	case 1:
		return fmt.Sprintf(`{"releases": [{"version": "1.0.0"}],
			"advisories": [{"id": "A-%s-%d", "affected": "<2.0.0", "severity": "medium"}]}`, s, c)
	case 2:
		return `{"releases": [{"version": "1.0.0"}, {"version": "1.1.0"}]}`
	}
	return `{"releases": [{"version": "1.0.0"}]}`
}

func (p *publishers) manifest() []byte {
	var comps []string
	comps = append(comps, `{"code": "core", "name": "Core", "version": "1.0.0"}`)
	for s := range sources {
		url := fmt.Sprintf("%s/s%d.json", p.urls[s%hosts], s)
		for c := range perSource {
			comps = append(comps, fmt.Sprintf(`{"code": "p%d-%d", "name": "Plugin %d-%d", "version": "1.0.0", "source": %q}`, s, c, s, c, url))
		}
	}
	return []byte(`{"components": [` + strings.Join(comps, ",\n") + `]}`)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// leaseOps measures acquire+release cycles and renewals on one connection.
func leaseOps(ctx context.Context, url string) error {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return err
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	lm, err := lease.New(store.New(pool), lease.DefaultTimings(), lease.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	const cycles = 500
	start := time.Now()
	for range cycles {
		a, err := lm.Acquire(ctx, lease.Operator)
		if err != nil || a.Outcome != lease.Acquired {
			return fmt.Errorf("acquire: %v %v", a.Outcome, err)
		}
		if _, err := lm.Release(ctx, a.Lease.Owner, false); err != nil {
			return err
		}
	}
	report("lease_acquire_release", cycles/time.Since(start).Seconds(), "cycles/s", "", nil)
	a, err := lm.Acquire(ctx, lease.Operator)
	if err != nil || a.Outcome != lease.Acquired {
		return fmt.Errorf("acquire: %v %v", a.Outcome, err)
	}
	start = time.Now()
	for range cycles {
		if err := lm.Renew(ctx, a.Lease.Owner); err != nil {
			return err
		}
	}
	report("lease_renew", cycles/time.Since(start).Seconds(), "renewals/s", "", nil)
	_, err = lm.Release(ctx, a.Lease.Owner, false)
	return err
}

func dropDatabase(c *devdb.Cluster, name string) {
	conn, err := pgx.Connect(context.Background(), c.URL("postgres"))
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}
