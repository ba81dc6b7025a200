// Package cluster runs several upcheck instances on one database behind
// nginx with TLS, configured as docs/deploy.md says: `make cluster` starts
// one for a person to try, and the proxy test (build tag crash) starts one
// to prove what the deployment promises. The nginx site and the systemd
// unit of the guide are the files in deploy/, which a test compares with
// the guide's blocks.
package cluster

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// NginxSite is docs/deploy.md's nginx site, with its production values
// (ports 8081-8083, port 443, /etc/ssl/upcheck, /var/log/nginx); SiteConfig
// moves it to a running cluster's.
//
//go:embed deploy/upcheck.nginx.conf
var NginxSite string

// SystemdUnit is docs/deploy.md's systemd unit.
//
//go:embed deploy/upcheck@.service
var SystemdUnit string

// Options say what to start.
type Options struct {
	// Binary is the upcheck binary.
	Binary string
	// Dir holds nginx's configuration, certificate, logs and temporary
	// files; it must exist.
	Dir string
	// Env is every instance's environment (UPCHECK_DATABASE_URL,
	// UPCHECK_TRUSTED_PROXIES, …), as KEY=value; UPCHECK_LISTEN is set per
	// instance.
	Env []string
	// Ports are the instances' ports on 127.0.0.1, one instance each; 0
	// lets the system choose.
	Ports []int
	// HTTPS is nginx's address, such as 127.0.0.1:8443.
	HTTPS string
	// Log, when set, receives every instance's output as it comes, each
	// line prefixed with the instance's port.
	Log io.Writer
}

// Cluster is a running nginx in front of running instances.
type Cluster struct {
	// URL is nginx's https:// address.
	URL string
	// CertPEM is the self-signed certificate nginx serves.
	CertPEM []byte
	// AccessLog is the path of nginx's access log (the site's format).
	AccessLog string
	// Instances are in the order of Options.Ports.
	Instances []*Instance

	opts  Options
	nginx *process
}

// Start starts the instances, waits until each answers /readyz, then
// starts nginx in front of them. On error it stops what it started.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	c := &Cluster{opts: opts, URL: "https://" + opts.HTTPS, AccessLog: filepath.Join(opts.Dir, "log", "upcheck.access.log")}
	for _, port := range opts.Ports {
		in := &Instance{env: opts.Env, binary: opts.Binary, log: opts.Log, Port: port}
		c.Instances = append(c.Instances, in)
		if err := in.Start(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.startNginx(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close stops nginx and every instance (SIGTERM, then SIGKILL after the
// shutdown deadline).
func (c *Cluster) Close() {
	if c.nginx != nil {
		c.nginx.stop(syscall.SIGQUIT, 10*time.Second) // QUIT: graceful
	}
	for _, in := range c.Instances {
		in.Stop()
	}
}

// NginxLog is what nginx wrote to its error log.
func (c *Cluster) NginxLog() string {
	b, _ := os.ReadFile(filepath.Join(c.opts.Dir, "log", "error.log"))
	return string(b)
}

// Instance is one `upcheck serve` on 127.0.0.1.
type Instance struct {
	// Port is where it listens (known once it is started).
	Port int

	env    []string
	binary string
	log    io.Writer
	mu     sync.Mutex
	p      *process
	// outputs keeps the output of every run of this instance.
	outputs []*buffer
}

var servingRE = regexp.MustCompile(`msg=serving addr=http://127\.0\.0\.1:(\d+)`)

// Start runs `upcheck serve` on the instance's port (a free one the first
// time when Port is 0) and waits until /readyz answers 200.
func (in *Instance) Start(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := &buffer{prefix: fmt.Sprintf("[%d] ", in.Port), w: in.log}
	cmd := exec.Command(in.binary, "serve")
	cmd.Env = append(append([]string{}, in.env...), "UPCHECK_LISTEN=127.0.0.1:"+strconv.Itoa(in.Port))
	cmd.Stdout, cmd.Stderr = out, out
	p, err := startProcess(cmd)
	if err != nil {
		return err
	}
	in.p = p
	in.outputs = append(in.outputs, out)
	// The serving line, not /readyz alone: another process on the port
	// must not pass for this one.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := servingRE.FindStringSubmatch(out.String()); m != nil {
			in.Port, _ = strconv.Atoi(m[1])
			out.setPrefix(fmt.Sprintf("[%d] ", in.Port))
			break
		}
		if err := p.waitOrTick(ctx, deadline); err != nil {
			return fmt.Errorf("upcheck serve did not listen: %w\n%s", err, out.String())
		}
	}
	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", in.Port)
	for {
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := p.waitOrTick(ctx, deadline); err != nil {
			return fmt.Errorf("%s did not answer 200: %w\n%s", ready, err, out.String())
		}
	}
}

// Kill sends SIGKILL and waits for the process to end.
func (in *Instance) Kill() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.p != nil {
		in.p.stop(syscall.SIGKILL, time.Minute)
	}
}

// Stop sends SIGTERM, as systemd does, and waits for the process to end
// (SIGKILL after 40 s, the unit's TimeoutStopSec).
func (in *Instance) Stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.p != nil {
		in.p.stop(syscall.SIGTERM, 40*time.Second)
	}
}

// Output is everything the instance printed, over all its runs.
func (in *Instance) Output() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var s string
	for _, o := range in.outputs {
		s += o.String()
	}
	return s
}

// Addr is "127.0.0.1:port", as nginx's $upstream_addr names the instance.
func (in *Instance) Addr() string { return "127.0.0.1:" + strconv.Itoa(in.Port) }

// process is a started command and its end.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func startProcess(cmd *exec.Cmd) (*process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitOrTick waits a moment; it fails when the process ended, ctx ended
// or the deadline passed.
func (p *process) waitOrTick(ctx context.Context, deadline time.Time) error {
	if time.Now().After(deadline) {
		return errors.New("timed out")
	}
	select {
	case <-p.done:
		return fmt.Errorf("exited: %v", p.err)
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return nil
	}
}

// stop signals the process unless it ended, and kills it after d.
func (p *process) stop(sig syscall.Signal, d time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// buffer keeps a process's output and copies it, line by line with a
// prefix, to w.
type buffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	line   []byte
	prefix string
	w      io.Writer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Write(p)
	if b.w != nil {
		b.line = append(b.line, p...)
		for {
			i := bytes.IndexByte(b.line, '\n')
			if i < 0 {
				break
			}
			fmt.Fprintf(b.w, "%s%s", b.prefix, b.line[:i+1])
			b.line = b.line[i+1:]
		}
	}
	return len(p), nil
}

func (b *buffer) setPrefix(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prefix = s
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
