package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// underLoad starts `upcheck serve` and drives 32 keep-alive clients against
// each route for a fixed time, in turns with /healthz (againstHealthz),
// the baseline the route's throughput and p99 are divided by: the
// summary, the dashboard, and the catalog page and API each at its first
// page, a filter, a search and page 50 (the API's through its next
// cursor). healthz's figures are all its turns together.
func underLoad(binary string, env []string) error {
	user := command(binary, env, "bench password 123\n", "user", "add", "--email", "bench@example.test", "--role", "admin")
	if out, err := user.CombinedOutput(); err != nil {
		return fmt.Errorf("user add: %v: %s", err, out)
	}
	out, err := command(binary, env, "", "token", "create", "--email", "bench@example.test").Output()
	if err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	token := strings.TrimSpace(string(out))
	serve := command(binary, append(env, "UPCHECK_CHECK_SCHEDULE=0 0 1 1 *", "UPCHECK_LOG_LEVEL=INFO"), "", "serve")
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
	api := "/api/admin/plugins/updates"
	after, err := cursorOfPage(base+api+"?per_page=50", token, 50)
	if err != nil {
		return err
	}
	// target: the least throughput ratio and the most p99 ratio to
	// /healthz; 0: no target.
	routes := []struct {
		name, path       string
		minRatio, maxP99 float64
	}{
		{"summary", api + "/summary", 0.5, 1.5},
		{"dashboard", "/admin", 0, 0},
		{"catalog_first", "/admin/plugins", 0.25, 3},
		{"catalog_filter", "/admin/plugins?status=security", 0.25, 3},
		{"catalog_search", "/admin/plugins?q=123", 0.25, 3},
		{"catalog_page50", "/admin/plugins?page=50", 0.25, 3},
		{"api_first", api + "?per_page=50", 0.25, 3},
		{"api_filter", api + "?per_page=50&status=security", 0.25, 3},
		{"api_search", api + "?per_page=50&q=123", 0.25, 3},
		{"api_page50", api + "?per_page=50&after=" + url.QueryEscape(after), 0.25, 3},
	}
	var health sample
	for _, r := range routes {
		got, h, err := againstHealthz(base, r.path, token)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		health.add(h)
		got.report(r.name)
		ratio, p99Ratio := got.rps()/h.rps(), got.p99()/h.p99()
		if r.minRatio == 0 {
			report(r.name+"_vs_healthz", ratio, "ratio", "", nil)
			continue
		}
		report(r.name+"_vs_healthz", ratio, "ratio", fmt.Sprintf(">= %g", r.minRatio), yes(ratio >= r.minRatio))
		report(r.name+"_p99_vs_healthz", p99Ratio, "ratio", fmt.Sprintf("<= %g", r.maxP99), yes(p99Ratio <= r.maxP99))
	}
	health.report("healthz")
	return nil
}

// cursorOfPage follows the catalog API's next cursor from the first page
// and returns the cursor that reads page n.
func cursorOfPage(first, token string, n int) (string, error) {
	after := ""
	for range n - 1 {
		u := first
		if after != "" {
			u += "&after=" + url.QueryEscape(after)
		}
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return "", err
		}
		var page struct {
			Next *string `json:"next"`
		}
		if err := json.Unmarshal(body, &page); err != nil || page.Next == nil {
			return "", fmt.Errorf("catalog API %s: %d, no next cursor (%v): %.300s", u, resp.StatusCode, err, body)
		}
		after = *page.Next
	}
	return after, nil
}

var listening = regexp.MustCompile(`msg=serving addr=http://(\S+)`)

func waitListening(r io.Reader) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-found:
		return a, nil
	case <-time.After(60 * time.Second):
		return "", fmt.Errorf("serve did not start listening")
	}
}

// load runs loadConns keep-alive clients against url for loadTime.
func load(url, token string) (int, []time.Duration, error) {
	return loadFor(url, token, loadConns, loadTime)
}

// loadWith runs conns keep-alive clients against url for loadTime.
func loadWith(url, token string, conns int) (int, []time.Duration, error) {
	return loadFor(url, token, conns, loadTime)
}

// sample is what a route answered under load: how many requests, their
// latencies, and for how long.
type sample struct {
	n    int
	lat  []time.Duration
	span time.Duration
}

func (s *sample) add(o sample) {
	s.n += o.n
	s.lat = append(s.lat, o.lat...)
	s.span += o.span
}

func (s sample) rps() float64 { return float64(s.n) / s.span.Seconds() }

func (s sample) p99() float64 { return percentile(s.lat, 0.99).Seconds() * 1000 }

func (s sample) report(name string) {
	report(name+"_rps", s.rps(), "req/s", "", nil)
	report(name+"_p50", percentile(s.lat, 0.50).Seconds()*1000, "ms", "", nil)
	report(name+"_p99", s.p99(), "ms", "", nil)
}

// loadTurns is how many turns againstHealthz takes of each route.
const loadTurns = 5

// againstHealthz measures path and /healthz in turns, loadTurns turns of
// loadTime/loadTurns each, so that the machine's load changing during
// the run (another process, the server's own background work) weighs on
// both alike and their ratios compare like with like; measured one after
// the other, the baseline of a route measured a minute later.
func againstHealthz(base, path, token string) (route, health sample, err error) {
	turn := loadTime / loadTurns
	for range loadTurns {
		for _, m := range []struct {
			path string
			into *sample
		}{{"/healthz", &health}, {path, &route}} {
			n, lat, err := loadFor(base+m.path, token, loadConns, turn)
			if err != nil {
				return sample{}, sample{}, err
			}
			m.into.add(sample{n: n, lat: lat, span: turn})
		}
	}
	return route, health, nil
}

// loadFor runs conns keep-alive clients against url for d.
func loadFor(url, token string, conns int, d time.Duration) (int, []time.Duration, error) {
	transport := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				start := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if firstErr != nil {
		return 0, nil, firstErr
	}
	return len(all), all, nil
}
