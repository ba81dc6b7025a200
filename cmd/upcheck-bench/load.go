package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// underLoad starts `upcheck serve` and drives 32 keep-alive clients against
// each route for a fixed time.
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
	routes := []struct{ name, path string }{
		{"healthz", "/healthz"},
		{"summary", "/api/admin/plugins/updates/summary"},
		{"dashboard", "/admin"},
		{"catalog", "/admin/plugins?page=3"},
	}
	rps := map[string]float64{}
	for _, r := range routes {
		n, lat, err := load(base+r.path, token)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		rps[r.name] = float64(n) / loadTime.Seconds()
		report(r.name+"_rps", rps[r.name], "req/s", "", nil)
		report(r.name+"_p50", percentile(lat, 0.50).Seconds()*1000, "ms", "", nil)
		p99 := percentile(lat, 0.99).Seconds() * 1000
		if r.name == "summary" {
			report(r.name+"_p99", p99, "ms", "<= 5", yes(p99 <= 5))
		} else {
			report(r.name+"_p99", p99, "ms", "", nil)
		}
	}
	for _, name := range []string{"summary", "dashboard", "catalog"} {
		ratio := rps[name] / rps["healthz"]
		if name == "summary" {
			report(name+"_vs_healthz", ratio, "ratio", ">= 0.5", yes(ratio >= 0.5))
		} else {
			report(name+"_vs_healthz", ratio, "ratio", "", nil)
		}
	}
	return nil
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
	transport := &http.Transport{MaxIdleConnsPerHost: loadConns, MaxConnsPerHost: loadConns}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	deadline := time.Now().Add(loadTime)
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for range loadConns {
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
