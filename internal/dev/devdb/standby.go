package devdb

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// StartStandby makes a streaming standby of the running cluster c in dir
// and starts it on a port of its own: pg_basebackup -R (which writes
// primary_conninfo and standby.signal) over c's unix socket, run as the
// user c runs as. The standby connects to c under applicationName, the name
// c's synchronous_standby_names can give it. The failover drill of
// internal/testing/cluster uses it; docs/operations.md says what it shows.
func (c *Cluster) StartStandby(ctx context.Context, dir, applicationName string) (*Cluster, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &Cluster{Dir: dir, bin: c.bin, runAs: c.runAs, options: c.options}
	if len(s.socketDir())+len("/.s.PGSQL.65535") > 100 {
		return nil, fmt.Errorf("standby folder %s: socket path too long", dir)
	}
	for _, d := range []string{s.Dir, s.socketDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if s.Port, err = freePort(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "port"), []byte(strconv.Itoa(s.Port)+"\n"), 0o644); err != nil {
		return nil, err
	}
	if s.runAs != nil {
		if err := chownTree(s.Dir, int(s.runAs.Uid), int(s.runAs.Gid)); err != nil {
			return nil, err
		}
	}
	conn := url.Values{"host": {c.socketDir()}, "port": {strconv.Itoa(c.Port)},
		"user": {Superuser}, "application_name": {applicationName}}
	// -d with application_name: -R copies it into primary_conninfo.
	if err := s.run(ctx, "pg_basebackup", "-D", s.dataDir(), "-R", "-X", "stream", "-c", "fast",
		"-d", "postgres:///?"+conn.Encode()); err != nil {
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Promote ends a standby's recovery and waits until it accepts writes.
func (c *Cluster) Promote(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "promote", "-D", c.dataDir(), "-w", "-t", "60")
}

// Crash stops the server the way a power cut would: SIGKILL to the
// postmaster's process group, which is the postmaster and every backend
// at once (pg_ctl starts the postmaster in a session of its own). No
// checkpoint, no goodbye to clients; the next start recovers from the WAL.
func (c *Cluster) Crash(ctx context.Context) error {
	pid, err := c.postmasterPID()
	if err != nil {
		return err
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill postmaster %d and its backends: %w", pid, err)
	}
	return nil
}

// postmasterPID reads the first line of postmaster.pid.
func (c *Cluster) postmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.dataDir(), "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("postmaster pid: %w", err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 0 {
		return 0, fmt.Errorf("postmaster pid: %q", b)
	}
	return pid, nil
}
