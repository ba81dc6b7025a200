//go:build crash

package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// TestBehindNginx runs docs/deploy.md's setup — nginx with TLS in front
// of three instances of the real binary on one database — and checks what
// the guide promises, one step after the other on the same cluster.
func TestBehindNginx(t *testing.T) {
	d := pgtest.New(t)
	pub := newPublisher(t)
	c := startCluster(t, d, pub)
	admin := newBrowser(t, c, "127.0.0.2")

	t.Run("a session survives being served by every instance", func(t *testing.T) {
		code, cookie := admin.login("session", adminPassword)
		if code != http.StatusSeeOther || cookie == "" {
			t.Fatalf("login through nginx: %d, cookie %q", code, cookie)
		}
		// Behind TLS termination upcheck sees plain HTTP:
		// UPCHECK_SECURE_COOKIES=1 is what makes the cookie Secure.
		if !strings.Contains(cookie, "; Secure") || !strings.Contains(cookie, "; HttpOnly") {
			t.Fatalf("session cookie %q, want Secure and HttpOnly", cookie)
		}
		answered := map[string]bool{}
		for i := range 6 {
			uri := fmt.Sprintf("/admin?probe=session-%d", i)
			code, page, _ := admin.do(http.MethodGet, uri, nil)
			if code != http.StatusOK || !strings.Contains(page, adminEmail) {
				t.Fatalf("GET %s: %d, signed in: %v", uri, code, strings.Contains(page, adminEmail))
			}
			e := answeredBy(t, c, uri)
			answered[e.upstreams[len(e.upstreams)-1]] = true
		}
		if len(answered) != len(c.Instances) {
			t.Fatalf("the signed-in pages were served by %v, want all %d instances", answered, len(c.Instances))
		}
	})

	t.Run("the login throttle counts the client nginx saw, not the one it claims", func(t *testing.T) {
		guesser := newBrowser(t, c, "127.0.0.3")
		instances := map[string]bool{}
		for i := range 5 {
			// A new made-up address per guess: if upcheck believed it,
			// no address would ever reach 5 failures.
			probe := fmt.Sprintf("guess-%d", i)
			if code, _ := guesser.login(probe, "a wrong password", "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1)); code != http.StatusUnauthorized {
				t.Fatalf("wrong password: %d, want 401", code)
			}
			e := answeredBy(t, c, "/login?probe="+probe)
			if e.client != "127.0.0.3" {
				t.Fatalf("nginx saw the guesser as %s, want 127.0.0.3", e.client)
			}
			instances[e.upstreams[len(e.upstreams)-1]] = true
		}
		if len(instances) < 2 {
			t.Fatalf("the guesses all went to %v; the test wants them spread over instances", instances)
		}
		if code, _ := guesser.login("guess-right", adminPassword, "X-Forwarded-For", "198.51.100.99"); code != http.StatusTooManyRequests {
			t.Fatalf("the guesser with the right password: %d, want 429 (locked whatever address it claims)", code)
		}
		// Everybody reaches upcheck from nginx's 127.0.0.1: had upcheck
		// counted that address, the owner would be locked out too.
		owner := newBrowser(t, c, "127.0.0.4")
		if code, _ := owner.login("owner", adminPassword); code != http.StatusSeeOther {
			t.Fatalf("the owner from another address: %d, want 303", code)
		}
		keys := query[string](t, d, `SELECT coalesce(string_agg(key || '=' || failures, ' ' ORDER BY key), '') FROM login_attempts WHERE key LIKE 'ip:%'`)
		if !regexp.MustCompile(`(^| )ip:127\.0\.0\.3=[5-9]( |$)`).MatchString(keys) ||
			strings.Contains(keys, "198.51.100") || strings.Contains(keys, "ip:127.0.0.1=") {
			t.Fatalf("throttled addresses %q: want 127.0.0.3 with 5 or more failures, never a claimed address nor nginx's", keys)
		}
	})

	t.Run("one check for three clicks on three instances", func(t *testing.T) {
		token := admin.csrf()
		release := pub.Hold("/core.json").Release
		defer release()
		before := pub.Requests("/core.json")
		codes := make([]int, 3)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				code, body, _, err := admin.send(http.MethodPost, fmt.Sprintf("/api/admin/plugins/updates/check?probe=check-%d", i), url.Values{}, "X-CSRF-Token", token)
				if err != nil {
					t.Error(err)
				}
				codes[i] = code
				t.Logf("click %d: %d %s", i, code, strings.TrimSpace(body))
			})
		}
		// The first click holds the lease while the publisher waits; the
		// two others are refused as busy.
		waitFor(t, 20*time.Second, "two busy runs", func() bool {
			return query[int](t, d, `SELECT count(*)::int FROM check_runs WHERE trigger = 'manual' AND status = 'busy'`) == 2
		})
		release()
		wg.Wait()
		slices.Sort(codes)
		if !slices.Equal(codes, []int{http.StatusOK, http.StatusConflict, http.StatusConflict}) {
			t.Fatalf("answers %v, want one 200 and two 409", codes)
		}
		answered := map[string]bool{}
		for i := range codes {
			e := answeredBy(t, c, fmt.Sprintf("/api/admin/plugins/updates/check?probe=check-%d", i))
			answered[e.upstreams[len(e.upstreams)-1]] = true
		}
		if len(answered) != 3 {
			t.Fatalf("the clicks were answered by %v, want three instances", answered)
		}
		if n := query[int](t, d, `SELECT count(*)::int FROM check_runs WHERE trigger = 'manual' AND status = 'completed'`); n != 1 {
			t.Fatalf("%d completed manual checks, want 1", n)
		}
		if n := pub.Requests("/core.json") - before; n != 1 {
			t.Fatalf("the publisher was asked %d times, want once", n)
		}
	})

	t.Run("SIGKILL loses no GET, and the check being served is not replayed", func(t *testing.T) {
		time.Sleep(1100 * time.Millisecond) // past the 1 s cooldown
		token := admin.csrf()
		lastRun := query[int64](t, d, `SELECT max(id) FROM check_runs`)
		started := checksStarted(c)
		release := pub.Hold("/core.json").Release
		defer release()
		asked := pub.Requests("/core.json")
		post := make(chan int, 1)
		go func() {
			code, _, _, err := admin.send(http.MethodPost, "/api/admin/plugins/updates/check?probe=killed", url.Values{}, "X-CSRF-Token", token)
			if err != nil {
				t.Error(err)
			}
			post <- code
		}()
		pub.AwaitRequests(t, "/core.json", asked+1, 20*time.Second) // the check reached the publisher
		var victim *Instance
		waitFor(t, 5*time.Second, "the instance running the check", func() bool {
			for i, n := range checksStarted(c) {
				if n > started[i] {
					victim = c.Instances[i]
				}
			}
			return victim != nil
		})
		stream := startStream(t, admin, 4)
		time.Sleep(300 * time.Millisecond)
		victim.Kill()
		select {
		case code := <-post:
			if code != http.StatusBadGateway {
				t.Fatalf("the click whose instance died: %d, want 502 (nginx must not send it again)", code)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no answer to the click whose instance died")
		}
		time.Sleep(1500 * time.Millisecond)
		n, failures := stream.stop()
		if len(failures) > 0 || n < 20 {
			t.Fatalf("%d GETs during the kill, failures: %v", n, failures)
		}
		// The dead instance's run is the only one: no other instance was
		// asked to check (it would have recorded busy).
		if runs := query[string](t, d, `SELECT string_agg(status, ',') FROM check_runs WHERE id > $1`, lastRun); runs != "running" {
			t.Fatalf("runs since the click: %q, want only the killed instance's (running)", runs)
		}
		retried := 0
		for _, e := range readAccessLog(t, c) {
			if strings.Contains(e.uri, "probe=stream") && len(e.upstreams) > 1 && e.upstreams[0] == victim.Addr() && e.status == http.StatusOK {
				retried++
			}
		}
		if retried == 0 {
			t.Fatalf("no GET was tried on the killed instance %s and then answered by another: the test proves nothing", victim.Addr())
		}
		// Back on the same port, as systemd's Restart=on-failure brings it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := victim.Start(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a rolling restart loses no GET, and the session lives on", func(t *testing.T) {
		stream := startStream(t, admin, 4)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, in := range c.Instances {
			in.Stop() // SIGTERM, as systemctl restart sends
			if err := in.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		n, failures := stream.stop()
		if len(failures) > 0 || n < 20 {
			t.Fatalf("%d GETs during the restarts, failures: %v", n, failures)
		}
		if code, page, _ := admin.do(http.MethodGet, "/admin?probe=after", nil); code != http.StatusOK || !strings.Contains(page, adminEmail) {
			t.Fatalf("after every instance restarted: %d, signed in: %v", code, strings.Contains(page, adminEmail))
		}
	})
}

// checksStarted counts, per instance, the manual checks it started.
func checksStarted(c *Cluster) []int {
	var out []int
	for _, in := range c.Instances {
		n := 0
		for line := range strings.SplitSeq(in.Output(), "\n") {
			if strings.Contains(line, `msg="update check started"`) && strings.Contains(line, "trigger=manual") {
				n++
			}
		}
		out = append(out, n)
	}
	return out
}

// stream is GETs of the summary sent back to back by several goroutines.
type stream struct {
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	n        int
	failures []string
}

func startStream(t *testing.T, b *browser, workers int) *stream {
	s := &stream{done: make(chan struct{})}
	for w := range workers {
		s.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-s.done:
					return
				default:
				}
				code, body, _, err := b.send(http.MethodGet, fmt.Sprintf("/api/admin/plugins/updates/summary?probe=stream-%d-%d", w, i), nil)
				s.mu.Lock()
				s.n++
				switch {
				case err != nil:
					s.failures = append(s.failures, err.Error())
				case code != http.StatusOK || !strings.Contains(body, `"components"`):
					s.failures = append(s.failures, fmt.Sprintf("%d %s", code, body))
				}
				s.mu.Unlock()
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	return s
}

// stop ends the stream and returns how many GETs it sent and what failed.
func (s *stream) stop() (int, []string) {
	close(s.done)
	s.wg.Wait()
	return s.n, s.failures
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
