//go:build crash

package cluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testbin"
)

var binary string

// TestMain builds the real binary once.
func TestMain(m *testing.M) { testbin.Main(m, &binary) }

const (
	adminEmail    = "admin@example.test"
	adminPassword = "a long enough password"
)

// newPublisher serves the one update document of the cluster's tests, at
// /core.json.
func newPublisher(t *testing.T) *publisher.Publisher {
	p := publisher.New(t)
	p.Set("/core.json", []byte(`{"format": 1, "publisher": "proxy", "sequence": 1, "packages": {"core": {"releases": [{"version": "1.1.0"}]}}}`))
	return p
}

// run runs an upcheck command to its end.
func run(t *testing.T, env []string, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("upcheck %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// freeAddr is a loopback address nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startCluster is what docs/deploy.md sets up: 3 instances on one
// database, nginx with TLS in front, the proxy trusted, Secure cookies;
// an admin account, one component on pub, and one check already run so
// that no instance starts a catch-up check.
func startCluster(t *testing.T, d *pgtest.DB, pub *publisher.Publisher) *Cluster {
	t.Helper()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifest, fmt.Appendf(nil, `{"components": [{"code": "core", "name": "Core", "version": "1.0.0", "source": "%s/core.json"}]}`, pub.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"UPCHECK_DATABASE_URL=" + d.URL,
		"UPCHECK_ALLOW_PRIVATE_SOURCES=1",
		"UPCHECK_TEST_TIMINGS=lease=3s,heartbeat=500ms,cooldown=1s",
		"UPCHECK_TRUSTED_PROXIES=127.0.0.1",
		"UPCHECK_SECURE_COOKIES=1",
		"UPCHECK_MANIFEST=" + manifest,
		"UPCHECK_LOG_LEVEL=INFO",
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}
	run(t, env, adminPassword+"\n", "user", "add", "--email", adminEmail, "--role", "admin")
	run(t, env, "", "components", "sync")
	run(t, env, "", "check")
	nginxDir := filepath.Join(dir, "nginx")
	if err := os.Mkdir(nginxDir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Binary: binary, Dir: nginxDir, Env: env, Ports: []int{0, 0, 0}, HTTPS: freeAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			for _, in := range c.Instances {
				t.Logf("instance %s:\n%s", in.Addr(), in.Output())
			}
			t.Logf("nginx error log:\n%s", c.NginxLog())
			b, _ := os.ReadFile(c.AccessLog)
			t.Logf("nginx access log:\n%s", b)
		}
	})
	return c
}

// browser is an HTTP client that connects to nginx from its own loopback
// address (127.0.0.2, …), trusts the cluster's certificate, keeps cookies
// and does not follow redirects.
type browser struct {
	t      *testing.T
	c      *Cluster
	from   string
	client *http.Client
}

func newBrowser(t *testing.T, c *Cluster, from string) *browser {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.CertPEM) {
		t.Fatal("the cluster's certificate does not parse")
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	return &browser{t: t, c: c, from: from, client: &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{DialContext: dialer.DialContext, TLSClientConfig: &tls.Config{RootCAs: roots}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// send sends a request as a browser on the cluster's page would: a POST
// carries the page's Origin. It returns the status, body and header.
func (b *browser) send(method, path string, form url.Values, header ...string) (int, string, http.Header, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.c.URL+path, body)
	if err != nil {
		return 0, "", nil, err
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", b.c.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, "", nil, fmt.Errorf("%s %s from %s: %w", method, path, b.from, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", nil, fmt.Errorf("%s %s from %s: %w", method, path, b.from, err)
	}
	return resp.StatusCode, string(out), resp.Header, nil
}

// do is send on the test's goroutine, failing the test on error.
func (b *browser) do(method, path string, form url.Values, header ...string) (int, string, http.Header) {
	b.t.Helper()
	code, body, h, err := b.send(method, path, form, header...)
	if err != nil {
		b.t.Fatal(err)
	}
	return code, body, h
}

// login posts the login form; it returns the status and the session
// cookie's Set-Cookie line, if any.
func (b *browser) login(probe, password string, header ...string) (int, string) {
	b.t.Helper()
	code, _, h := b.do(http.MethodPost, "/login?probe="+probe, url.Values{"email": {adminEmail}, "password": {password}}, header...)
	for _, sc := range h.Values("Set-Cookie") {
		if strings.HasPrefix(sc, auth.DefaultCookieName+"=") {
			return code, sc
		}
	}
	return code, ""
}

var csrfRE = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)"`)

// csrf reads the session's CSRF token from a page.
func (b *browser) csrf() string {
	b.t.Helper()
	code, page, _ := b.do(http.MethodGet, "/admin", nil)
	m := csrfRE.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		b.t.Fatalf("GET /admin: %d, no CSRF token", code)
	}
	return m[1]
}

// accessLog is nginx's access log, one entry per answered request, in the
// site's format.
type accessEntry struct {
	client, method, uri string
	status              int
	upstreams           []string // every instance tried, in order
}

var accessRE = regexp.MustCompile(`^(\S+) \[[^\]]+\] "(\S+) (\S+) [^"]*" (\d+) upstream="([^"]*)"`)

func readAccessLog(t *testing.T, c *Cluster) []accessEntry {
	t.Helper()
	f, err := os.Open(c.AccessLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []accessEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := accessRE.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("access log line not in the site's format: %s", sc.Text())
		}
		e := accessEntry{client: m[1], method: m[2], uri: m[3]}
		fmt.Sscan(m[4], &e.status)
		for _, u := range strings.Split(m[5], ",") {
			if u = strings.TrimSpace(u); u != "" && u != "-" {
				e.upstreams = append(e.upstreams, u)
			}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// answeredBy is the access log's entry for uri. nginx writes it once the
// answer is sent, so it may come a moment after the client has it.
func answeredBy(t *testing.T, c *Cluster, uri string) accessEntry {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, e := range readAccessLog(t, c) {
			if e.uri == uri {
				return e
			}
		}
	}
	t.Fatalf("no access log entry for %s", uri)
	return accessEntry{}
}

// query runs a one-value query.
func query[T any](t *testing.T, d *pgtest.DB, sql string, args ...any) T {
	t.Helper()
	var v T
	d.QueryRow(t, sql, args...).Scan(&v)
	return v
}

// Every upcheck command the guide runs exists as written: its --help
// exits 0.
func TestGuideCommandsExist(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, m := range regexp.MustCompile(`/usr/local/bin/upcheck((?: [a-z]+)+)`).FindAllStringSubmatch(string(guide)+"\n"+SystemdUnit, -1) {
		words := strings.Fields(m[1])
		found++
		cmd := exec.Command(binary, append(words, "--help")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the guide runs `upcheck %s`: --help says %v\n%s", strings.Join(words, " "), err, out)
		}
	}
	if found < 3 {
		t.Fatalf("found %d upcheck commands in the guide; the parsing is broken", found)
	}
}
