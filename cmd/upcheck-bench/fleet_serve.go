package main

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/dev/lockgen"
	"github.com/upcheck/upcheck/internal/tree"
)

// pushes is how many pushes of each kind fleetPushes times (the median
// is reported).
const pushes = 3

// fleetServe starts `upcheck serve` on the filled and checked fleet and
// measures through HTTP, as a site's deploy step and the AdminCP reach
// it: one site's push of 1,000 packages (fleetPushes), then the Fleet
// page's first page against /healthz and the impact of an advisory under
// the summary's load test (fleetLoad).
func fleetServe(ctx context.Context, binary string, env []string, conn *pgx.Conn) error {
	// Named by the run, so that a kept fleet (-fleet-db) is measured
	// again with users and sites of its own.
	tag := time.Now().Unix() % 1000000
	email := fmt.Sprintf("bench-%d@example.test", tag)
	user := command(binary, env, "bench password 123\n", "user", "add", "--email", email, "--role", "admin")
	if out, err := user.CombinedOutput(); err != nil {
		return fmt.Errorf("user add: %v: %s", err, out)
	}
	out, err := command(binary, env, "", "token", "create", "--email", email).Output()
	if err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	token := strings.TrimSpace(string(out))
	serve := command(binary, append(env, "UPCHECK_CHECK_SCHEDULE=0 0 1 1 *", "UPCHECK_LOG_LEVEL=INFO", "UPCHECK_LISTEN=127.0.0.1:0"), "", "serve")
	stderr, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		return err
	}
	defer func() { serve.Process.Signal(syscall.SIGTERM); serve.Wait() }()
	addr, err := waitListening(stderr)
	if err != nil {
		return err
	}
	base := "http://" + addr
	if err := fleetPushes(binary, env, base, tag); err != nil {
		return err
	}
	return fleetLoad(ctx, base, token, conn)
}

// fleetPushes registers sites with `upcheck site add` (each push token
// its last line) and times pushes of a generated package-lock.json of
// fleetPerSite packages through `PUT /api/sites/{site}/lockfile`, each
// answered once its findings are evaluated (`evaluated: true`; one
// answered before, when a check or a feed sync held the lease, is counted
// apart, fleet_push_not_evaluated, target 0, and not timed): first pushes
// of new sites whose versions the fleet has (matched once already: no
// matching), then pushes to one site of versions no site has (every one
// matched against the feeds). The median of each is reported (target ≤
// 1 s), and the slowest.
func fleetPushes(binary string, env []string, base string, tag int64) error {
	var known, fresh []time.Duration
	var last string
	unevaluated := 0
	for i := range pushes {
		name := fmt.Sprintf("bench-push-%d-%d", tag, i)
		out, err := command(binary, env, "", "site", "add", name, "--owner", "bench").Output()
		if err != nil {
			return fmt.Errorf("site add: %w", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		token := strings.TrimSpace(lines[len(lines)-1])
		// The shape of a filled site (fillFleet) of an id past the
		// fleet's: its versions are the fleet's.
		wall, evaluated, err := push(base, name, token, fleetLock(fleetSites+10+i, func(k int) string {
			return fmt.Sprintf("1.0.%d", (fleetSites+10+i+k)%fleetVersions)
		}))
		if err != nil {
			return err
		}
		if evaluated {
			known = append(known, wall)
		} else {
			unevaluated++
		}
		last = token
	}
	// The last site again, each time every package at a version no site
	// has.
	for i := range pushes {
		wall, evaluated, err := push(base, fmt.Sprintf("bench-push-%d-%d", tag, pushes-1), last, fleetLock(fleetSites+10+pushes-1, func(k int) string {
			return fmt.Sprintf("%d.%d.%d", i+2, tag, k%fleetVersions) // the run's own: new to a kept fleet too
		}))
		if err != nil {
			return err
		}
		if evaluated {
			fresh = append(fresh, wall)
		} else {
			unevaluated++
		}
	}
	report("fleet_push_not_evaluated", float64(unevaluated), "pushes", "0", yes(unevaluated == 0))
	for _, p := range []struct {
		name  string
		walls []time.Duration
	}{{"fleet_push_known", known}, {"fleet_push_new", fresh}} {
		if len(p.walls) == 0 {
			continue
		}
		m := median(p.walls).Seconds()
		report(p.name+"_wall", m, "s", "<= 1", yes(m <= 1))
		report(p.name+"_slowest", slices.Max(p.walls).Seconds(), "s", "", nil)
	}
	return nil
}

// fleetLock is the package-lock.json of a site shaped as fillFleet's site
// s, each of its fleetPerSite packages (the k-th) a direct dependency at
// version(k).
func fleetLock(s int, version func(k int) string) []byte {
	t := &tree.Tree{}
	for k := range fleetPerSite {
		name, v := fleetName((s*37+k*10)%fleetNames), version(k)
		sum := sha512.Sum512([]byte(name + "@" + v))
		t.Packages = append(t.Packages, tree.Package{ID: "node_modules/" + name, Name: name, Version: v, Source: tree.SourceRegistry,
			Resolved:  "http://127.0.0.1:4873/" + name + "/-/" + name + "-" + v + ".tgz",
			Integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:])})
		t.Edges = append(t.Edges, tree.Edge{From: tree.Root, Name: name, Range: "^" + v, Kind: tree.KindProd, To: "node_modules/" + name})
	}
	t.Sort()
	lock, err := lockgen.PackageLock(t, fmt.Sprintf("site-%d", s))
	if err != nil {
		panic(err) // the edges are from the root: cannot fail
	}
	return lock
}

// push PUTs lock as site's package-lock.json with its push token and
// returns the answer's wall time and whether it says the tree was
// evaluated; an answer that is not 200 with the tree changed is an
// error.
func push(base, site, token string, lock []byte) (time.Duration, bool, error) {
	req, _ := http.NewRequest(http.MethodPut, base+"/api/sites/"+site+"/lockfile?name=package-lock.json", bytes.NewReader(lock))
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	wall := time.Since(start)
	if err != nil {
		return 0, false, err
	}
	var rep struct {
		Unchanged bool `json:"unchanged"`
		Evaluated bool `json:"evaluated"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &rep) != nil || rep.Unchanged {
		return 0, false, fmt.Errorf("push to %s: %d %.500s", site, resp.StatusCode, body)
	}
	return wall, rep.Evaluated, nil
}

// fleetLoad measures under load, as underLoad does (loadConns keep-alive
// clients for loadTime a route, in turns with /healthz): the Fleet page's
// first page (`/admin/fleet`, the AdminCP's, and `/api/admin/fleet`, the
// API's, and the page by its components' security updates), each p99
// against /healthz's (target ≤ 3); then the impact of
// an advisory (`/api/admin/fleet/impact?advisory=…`, the fleet's most
// installed one) from fleetImpactConns clients while the summary's load
// test runs beside it: its p99 (target ≤ 50 ms), and the summary's p99
// meanwhile.
func fleetLoad(ctx context.Context, base, token string, conn *pgx.Conn) error {
	var advisory string
	var sitesNow int
	if err := conn.QueryRow(ctx, `
		SELECT f.advisory_id, count(DISTINCT p.site_id)
		FROM tree_findings f JOIN tree_packages p ON p.name = f.name AND p.version = f.version
		WHERE NOT f.malicious
		GROUP BY f.advisory_id ORDER BY 2 DESC, 1 LIMIT 1`).Scan(&advisory, &sitesNow); err != nil {
		return err
	}
	report("fleet_impact_sites", float64(sitesNow), "sites", "", nil)
	var health sample
	for _, r := range []struct{ name, path string }{
		{"fleet_page_first", "/admin/fleet"}, {"fleet_api_first", "/api/admin/fleet"},
		{"fleet_page_security", "/admin/fleet?sort=security"},
	} {
		got, h, err := againstHealthz(base, r.path, token)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		health.add(h)
		report(r.name+"_rps", got.rps(), "req/s", "", nil)
		report(r.name+"_p99", got.p99(), "ms", "", nil)
		ratio := got.p99() / h.p99()
		report(r.name+"_p99_vs_healthz", ratio, "ratio", "<= 3", yes(ratio <= 3))
	}
	report("fleet_healthz_rps", health.rps(), "req/s", "", nil)
	report("fleet_healthz_p99", health.p99(), "ms", "", nil)
	impact := base + "/api/admin/fleet/impact?advisory=" + url.QueryEscape(advisory)
	var wg sync.WaitGroup
	var sumLat []time.Duration
	var sumErr error
	wg.Go(func() { _, sumLat, sumErr = load(base+"/api/admin/plugins/updates/summary", token) })
	_, lat, err := loadWith(impact, token, fleetImpactConns)
	wg.Wait()
	if err := errors.Join(err, sumErr); err != nil {
		return err
	}
	p99 := percentile(lat, 0.99).Seconds() * 1000
	report("fleet_impact_p50", percentile(lat, 0.50).Seconds()*1000, "ms", "", nil)
	report("fleet_impact_p99", p99, "ms", "<= 50", yes(p99 <= 50))
	report("fleet_impact_requests", float64(len(lat)), "requests", "", nil)
	report("fleet_impact_summary_p99", percentile(sumLat, 0.99).Seconds()*1000, "ms", "", nil)
	return nil
}

// fleetImpactConns is how many clients ask the impact while the summary's
// load test runs: an operator or two and their scripts.
const fleetImpactConns = 4
