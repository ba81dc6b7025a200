// Package npme2e runs the real upcheck binary against a real npm registry
// (internal/testing/verdaccio): packages published with `npm publish`,
// deprecated with `npm deprecate`, retagged with `npm dist-tag`, lockfiles
// written by the real npm and pnpm clients, and upcheck configured as an
// operator configures it (UPCHECK_NPM_REGISTRY, UPCHECK_NPMRC,
// UPCHECK_LOCKFILE). What it asserts is what an operator sees: the check's
// JSON line, the read model the pages and the API read, the queued
// notifications. One registry serves the whole package (TestAgainstVerdaccio
// starts it; its scenarios run in parallel, each on a database of its own
// and packages of its own).
package npme2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testbin"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// timings make a lease last seconds, as the crash tests' do.
const timings = "lease=3s,heartbeat=500ms,cooldown=20s"

// serveWait bounds what waits on a serve process (its start, its checks,
// its watcher): longer than wait.Guard, as the machine runs other tests'
// processes and Verdaccio beside it.
const serveWait = time.Minute

var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// site is one scenario's upcheck: a database of its own and the
// environment its processes run with.
type site struct {
	t     *testing.T
	db    *pgtest.DB
	env   map[string]string
	procs []*proc // every process started, for what they printed
}

func newSite(t *testing.T, env map[string]string) *site {
	t.Helper()
	d := pgtest.New(t)
	s := &site{t: t, db: d, env: map[string]string{
		"UPCHECK_DATABASE_URL":          d.URL,
		"UPCHECK_ALLOW_PRIVATE_SOURCES": "1", // the registry is on loopback
		"UPCHECK_TEST_TIMINGS":          timings,
		"UPCHECK_LISTEN":                "127.0.0.1:0",
		"UPCHECK_CHECK_SCHEDULE":        "0 0 1 1 *", // serve runs no check but its catch-up
		"PATH":                          os.Getenv("PATH"),
		"HOME":                          t.TempDir(),
	}}
	for k, v := range env {
		s.env[k] = v
	}
	return s
}

// proc is one upcheck process.
type proc struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr testkit.Buffer
	done           chan struct{}
	code           int
}

// start runs `upcheck args…` with the site's environment; it is killed
// when the test ends if it has not exited.
func (s *site) start(args ...string) *proc {
	s.t.Helper()
	return s.startIn("", args...)
}

// startIn is start with stdin as the process's standard input.
func (s *site) startIn(stdin string, args ...string) *proc {
	s.t.Helper()
	p := &proc{t: s.t, cmd: exec.Command(binary, args...), done: make(chan struct{})}
	p.cmd.Stdin = strings.NewReader(stdin)
	for k, v := range s.env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.procs = append(s.procs, p)
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	s.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
		if s.t.Failed() {
			s.t.Logf("upcheck %s (exit %d)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), p.code, p.stdout.String(), p.stderr.String())
		}
	})
	return p
}

// printed is everything the site's processes printed, stdout and stderr,
// each under a line naming the process and the stream.
func (s *site) printed() map[string]string {
	out := map[string]string{}
	for i, p := range s.procs {
		name := fmt.Sprintf("%d: upcheck %s", i+1, strings.Join(p.cmd.Args[1:], " "))
		out[name+" (stdout)"], out[name+" (stderr)"] = p.stdout.String(), p.stderr.String()
	}
	return out
}

// wait returns the process's exit code, failing the test after d.
func (p *proc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		p.t.Fatalf("upcheck %v did not exit within %s", p.cmd.Args[1:], d)
	}
	return 0
}

// run runs `upcheck args…` to its end and returns its stdout and exit code.
func (s *site) run(args ...string) (string, int) {
	s.t.Helper()
	p := s.start(args...)
	code := p.wait(2 * time.Minute)
	return p.stdout.String(), code
}

// sync loads the manifest body (JSON) into the site's database.
func (s *site) sync(manifest string) {
	s.t.Helper()
	path := s.t.TempDir() + "/manifest.json"
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if out, code := s.run("components", "sync", "--manifest", path); code != 0 {
		s.t.Fatalf("components sync: exit %d: %s", code, out)
	}
}

// checkLine is what the tests read of a check's JSON line.
type checkLine struct {
	Status      string `json:"status"`
	Sources     int    `json:"sources"`
	Fetched     int    `json:"fetched"`
	NotModified int    `json:"not_modified"`
	Failed      int    `json:"failed"`
	Failures    []struct {
		Source, Kind, Message string
	} `json:"failures"`
	Summary *readmodel.Summary `json:"summary"`
	raw     string
}

// check runs `upcheck check` and returns its one JSON line and exit code.
func (s *site) check() (checkLine, int) {
	s.t.Helper()
	out, code := s.run("check")
	return parseLine(s.t, out), code
}

func parseLine(t *testing.T, out string) checkLine {
	t.Helper()
	var line checkLine
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		n++
		line.raw = sc.Text()
	}
	if n != 1 {
		t.Fatalf("check printed %q, want one JSON line", out)
	}
	if err := json.Unmarshal([]byte(line.raw), &line); err != nil {
		t.Fatalf("check line %q: %v", line.raw, err)
	}
	return line
}

// row is the catalog's row of code, as the pages and the API read it.
func (s *site) row(code string) readmodel.CatalogRow {
	s.t.Helper()
	r, ok := s.lookRow(code)
	if !ok {
		s.t.Fatalf("the catalog has no component %q", code)
	}
	return r
}

func (s *site) lookRow(code string) (readmodel.CatalogRow, bool) {
	s.t.Helper()
	rows, _, err := catalog.ReadPage(context.Background(), store.New(s.db.Pool), store.CatalogFilter{Limit: 1000})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, r := range rows {
		if r.Code == code {
			return r.CatalogRow, true
		}
	}
	return readmodel.CatalogRow{}, false
}

// detail is the detail page's facts of code.
func (s *site) detail(code string) catalog.Detail {
	s.t.Helper()
	d, err := catalog.New(store.New(s.db.Pool)).Detail(context.Background(), code)
	if err != nil {
		s.t.Fatalf("detail of %s: %v", code, err)
	}
	return d
}

// rowJSON is a row for a failure's message.
func rowJSON(r any) string {
	b, _ := json.Marshal(r)
	return string(b)
}
