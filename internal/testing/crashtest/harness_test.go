//go:build crash

// Package crashtest kills, pauses and starves the real upcheck binary and
// checks what the database, the publishers and the processes say afterwards.
// `make test` runs it (build tag crash); docs/reliability.md explains each
// scenario.
package crashtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testbin"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// timings make a lease last seconds: 3 s lease, renewed every 500 ms.
const timings = "lease=3s,heartbeat=500ms,cooldown=20s"

var binary string

func TestMain(m *testing.M) { testbin.Main(m, &binary) }

// proc is one running upcheck process.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    testkit.Buffer
	done   chan struct{}
	code   int
	listen string // "host:port" once a serve process is listening
}

// env is a scenario's environment for its processes.
type env map[string]string

func baseEnv(d *pgtest.DB) env {
	return env{
		"UPCHECK_DATABASE_URL":          d.URL,
		"UPCHECK_ALLOW_PRIVATE_SOURCES": "1",
		"UPCHECK_TEST_TIMINGS":          timings,
		"UPCHECK_LISTEN":                "127.0.0.1:0",
		"UPCHECK_LOG_LEVEL":             "DEBUG",
		"PATH":                          os.Getenv("PATH"),
		"HOME":                          os.Getenv("HOME"),
	}
}

func (e env) with(kv ...string) env {
	out := env{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func start(t *testing.T, e env, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, cmd: exec.Command(binary, args...), done: make(chan struct{})}
	for k, v := range e {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if in, ok := e["_STDIN"]; ok {
		p.cmd.Stdin = strings.NewReader(in)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.code = -int(ws.Signal())
		}
		_ = err
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Signal(syscall.SIGCONT)
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("output of upcheck %s (pid %d):\n%s", strings.Join(args, " "), p.cmd.Process.Pid, p.out.String())
		}
	})
	return p
}

// peakRSS follows the process's peak resident memory (VmHWM in
// /proc/PID/status, KiB), read every 10 ms while it runs; the returned func
// waits for the process and gives the highest value read. Not getrusage's
// Maxrss: Go starts a child with vfork, sharing the test's memory until
// exec, and Maxrss keeps that memory's high-water mark (the test process's
// own, large under -race); VmHWM is of the memory the process has after
// exec.
func (p *proc) peakRSS() func() int64 {
	var max atomic.Int64
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		path := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
		for {
			if b, err := os.ReadFile(path); err == nil {
				for line := range strings.SplitSeq(string(b), "\n") {
					if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						if kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil && kib > max.Load() {
							max.Store(kib)
						}
					}
				}
			}
			select {
			case <-p.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		<-stopped
		return max.Load()
	}
}

// wait returns the exit code, failing the test after d.
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

func (p *proc) signal(s syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		p.t.Fatalf("signal %s: %v", s, err)
	}
}

var servingRE = regexp.MustCompile(`msg=serving addr=http://(\S+)`)

// serve starts `upcheck serve` and waits until it listens.
func serve(t *testing.T, e env, args ...string) *proc {
	t.Helper()
	p := start(t, e, append([]string{"serve"}, args...)...)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingRE.FindStringSubmatch(p.out.String()); m != nil {
			p.listen = m[1]
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("serve exited early (%d):\n%s", p.code, p.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not listen:\n%s", p.out.String())
	return nil
}

// line returns the last JSON line a check process printed.
func (p *proc) line() string {
	sc := bufio.NewScanner(strings.NewReader(p.out.String()))
	last := ""
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "{") {
			last = sc.Text()
		}
	}
	return last
}

// document is the crash publisher's document of the given sequence and
// packages.
func document(seq int, packages string) []byte {
	return fmt.Appendf(nil, `{"format": 1, "publisher": "crash", "sequence": %d, "packages": {%s}}`, seq, packages)
}

// manifest writes a manifest for the given sources and returns its path.
func manifest(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// site installs a core and two plugins on two sources of pub.
func site(t *testing.T, e env, pub *publisher.Publisher) env {
	t.Helper()
	pub.Set("/core.json", document(1, `"core": {"releases": [{"version": "1.1.0"}]}`))
	pub.Set("/slow.json", document(1, `"blog": {"releases": [{"version": "2.0.0", "security": true}]}, "forms": {"releases": [{"version": "1.0.0"}]}`))
	path := manifest(t, fmt.Sprintf(`{"components": [
		{"code": "core", "name": "Core", "version": "1.0.0", "source": "%[1]s/core.json"},
		{"code": "blog", "name": "Blog", "version": "1.0.0", "source": "%[1]s/slow.json"},
		{"code": "forms", "name": "Forms", "version": "1.0.0", "source": "%[1]s/slow.json"}]}`, pub.URL))
	e = e.with("UPCHECK_MANIFEST", path)
	if code := start(t, e, "components", "sync").wait(60 * time.Second); code != 0 {
		t.Fatalf("components sync: exit %d", code)
	}
	return e
}

// query runs a one-value query on the scenario's database.
func query[T any](t *testing.T, d *pgtest.DB, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := d.Pool.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}
