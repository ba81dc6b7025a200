// Package verdaccio runs a real npm registry for tests: Verdaccio, as
// package.json and package-lock.json beside this file pin it (with pnpm,
// which writes the tests' pnpm lockfiles), installed by `make deps` into
// .data/verdaccio. Packages go into it with the real npm
// client (npm publish, npm deprecate, npm dist-tag), so what upcheck reads
// is what a registry serves, not what a test thought it would.
//
// Each registry listens on loopback and has no uplink: it never reaches
// another registry. Packages whose names start with "@private/" need a
// token to be read.
package verdaccio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds a registry's start.
const startTimeout = 30 * time.Second

// Registry is one running Verdaccio.
type Registry struct {
	// URL is the registry's address, with a trailing slash, as
	// `npm config get registry` prints one.
	URL  string
	dir  string
	host string // 127.0.0.1:PORT, the .npmrc key's host
}

// Start runs a registry for t, stopped when t ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatalf("verdaccio: %v", err)
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatalf("verdaccio: %v", err)
	}
	r := &Registry{dir: dir, host: fmt.Sprintf("127.0.0.1:%d", port)}
	r.URL = "http://" + r.host + "/"
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(config(dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	listening, exited, log := r.run(t, bin, cfg)
	select {
	case <-listening:
	case <-exited:
		t.Fatalf("verdaccio exited before it listened:\n%s", log.String())
	case <-time.After(startTimeout):
		t.Fatalf("verdaccio did not listen within %v:\n%s", startTimeout, log.String())
	}
	r.waitAnswers(t, exited, log)
	return r
}

// config is the registry's configuration, its storage and users under dir:
// packages under @private/ need a login to read; publishing always does.
func config(dir string) string {
	return fmt.Sprintf(`storage: %s
auth:
  htpasswd:
    file: %s
    max_users: 1000
uplinks: {}
packages:
  '@private/*':
    access: $authenticated
    publish: $authenticated
    unpublish: $authenticated
  '**':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
max_body_size: 200mb
web: { enable: false }
log: { type: stdout, format: pretty, level: warn }
`, filepath.Join(dir, "storage"), filepath.Join(dir, "htpasswd"))
}

// run starts the registry's process, stopped when t ends: listening closes
// when it says its address, exited when it ends, and log keeps the last of
// what it printed.
func (r *Registry) run(t testing.TB, bin, cfg string) (listening, exited <-chan struct{}, log *logTail) {
	t.Helper()
	cmd := exec.Command("node", bin, "--config", cfg, "--listen", r.host)
	cmd.Dir = r.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("verdaccio: start: %v", err)
	}
	done := make(chan struct{})
	heard := make(chan struct{})
	log = &logTail{}
	go func() {
		sc := bufio.NewScanner(out)
		var once sync.Once
		for sc.Scan() {
			log.add(sc.Text())
			if strings.Contains(sc.Text(), "http address") {
				once.Do(func() { close(heard) })
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return heard, done, log
}

// waitAnswers waits for the registry to answer /-/ping: the address line
// comes as the server binds, a ping says it answers.
func (r *Registry) waitAnswers(t testing.TB, exited <-chan struct{}, log *logTail) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.URL+"-/ping", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("verdaccio does not answer /-/ping: %v\n%s", err, log.String())
		case <-exited:
			t.Fatalf("verdaccio exited:\n%s", log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// AddUser creates a user and returns its token, as `npm adduser` does.
func (r *Registry) AddUser(t testing.TB, name string) string {
	t.Helper()
	body := fmt.Sprintf(`{"name": %q, "password": "the-tests-password"}`, name)
	req, _ := http.NewRequest(http.MethodPut, r.URL+"-/user/org.couchdb.user:"+name, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("verdaccio: add user %s: %v", name, err)
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		t.Fatalf("verdaccio: add user %s: %s %v %s", name, resp.Status, err, out.Error)
	}
	return out.Token
}

// Npmrc writes an .npmrc naming the registry and, when token is not "",
// its token, as a site's would be; it returns the file's path.
func (r *Registry) Npmrc(t testing.TB, token string) string {
	t.Helper()
	text := "registry=" + r.URL + "\n"
	if token != "" {
		text += "//" + r.host + "/:_authToken=" + token + "\n"
	}
	f, err := os.CreateTemp(r.dir, "npmrc-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// Package is a package version to publish.
type Package struct {
	Name, Version    string
	PeerDependencies map[string]string
	// Tag is the dist-tag it is published under; "" is npm's "latest".
	Tag string
	// Files are extra files of the tarball (name → content).
	Files map[string]string
	// Fields are more fields of its package.json ("dependencies",
	// "optionalDependencies", "scripts").
	Fields map[string]any
}

// Publish publishes p with `npm publish`, as the user of token.
func (r *Registry) Publish(t testing.TB, token string, p Package) {
	t.Helper()
	dir, err := os.MkdirTemp(r.dir, "package-*")
	if err != nil {
		t.Fatal(err)
	}
	r.writePackage(t, dir, p)
	args := []string{"publish"}
	if p.Tag != "" {
		args = append(args, "--tag", p.Tag)
	}
	r.npm(t, dir, token, args...)
}

// PublishAll publishes pkgs (none with a Tag) as the user of token, a few
// npm processes in all rather than one each: each round of distinct names
// is one `npm publish --workspaces`, in the order given.
func (r *Registry) PublishAll(t testing.TB, token string, pkgs ...Package) {
	t.Helper()
	for len(pkgs) > 0 {
		root, err := os.MkdirTemp(r.dir, "packages-*")
		if err != nil {
			t.Fatal(err)
		}
		var later []Package
		var dirs []string
		names := map[string]bool{}
		for _, p := range pkgs {
			if p.Tag != "" {
				t.Fatalf("PublishAll: %s@%s has a tag: use Publish", p.Name, p.Version)
			}
			if names[p.Name] {
				later = append(later, p)
				continue
			}
			names[p.Name] = true
			dir := fmt.Sprintf("p%d", len(dirs))
			if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
			r.writePackage(t, filepath.Join(root, dir), p)
			dirs = append(dirs, dir)
		}
		b, err := json.Marshal(map[string]any{"name": "publish-round", "private": true, "workspaces": dirs})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "package.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r.npm(t, root, token, "publish", "--workspaces", "--ignore-scripts")
		pkgs = later
	}
}

// writePackage writes p's package.json and files into dir.
func (r *Registry) writePackage(t testing.TB, dir string, p Package) {
	t.Helper()
	manifest := map[string]any{"name": p.Name, "version": p.Version, "license": "MIT"}
	if p.PeerDependencies != nil {
		manifest["peerDependencies"] = p.PeerDependencies
	}
	for k, v := range p.Fields {
		manifest[k] = v
	}
	b, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"package.json": string(b), "index.js": "module.exports = {};\n"}
	for name, content := range p.Files {
		files[name] = content
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Deprecate runs `npm deprecate spec message` ("" undeprecates).
func (r *Registry) Deprecate(t testing.TB, token, spec, message string) {
	t.Helper()
	r.npm(t, r.dir, token, "deprecate", spec, message)
}

// DistTag runs `npm dist-tag add spec tag`.
func (r *Registry) DistTag(t testing.TB, token, spec, tag string) {
	t.Helper()
	r.npm(t, r.dir, token, "dist-tag", "add", spec, tag)
}

// npm runs the npm client in dir against this registry only, with a cache
// of its own.
func (r *Registry) npm(t testing.TB, dir, token string, args ...string) {
	t.Helper()
	rc := r.Npmrc(t, token)
	cmd := exec.Command("npm", append(args, "--userconfig", rc, "--registry", r.URL, "--cache", filepath.Join(r.dir, "npm-cache"),
		"--no-audit", "--no-fund", "--no-update-notifier", "--loglevel", "error")...)
	cmd.Dir = dir
	// Nothing of the machine's npm settings applies.
	cmd.Env = append(os.Environ(), "npm_config_globalconfig="+filepath.Join(r.dir, "no-global-npmrc"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// binary is Verdaccio's entry point.
func binary() (string, error) {
	bin, err := tool("verdaccio", "bin", "verdaccio")
	if err != nil {
		return "", err
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", errors.New("npm is not installed: run `make deps`")
	}
	return bin, nil
}

// tool is the path of a file of an npm package under the module's
// .data/verdaccio, where make deps installs them.
func tool(pkg string, path ...string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
	file := filepath.Join(append([]string{dir, ".data", "verdaccio", "node_modules", pkg}, path...)...)
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("%s is not installed (%s): run `make deps`", pkg, file)
	}
	return file, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail keeps the registry's last lines for a failure's message.
type logTail struct {
	mu    sync.Mutex
	lines []string
}

func (l *logTail) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
	if len(l.lines) > 40 {
		l.lines = l.lines[1:]
	}
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
