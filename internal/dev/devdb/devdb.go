// Package devdb runs the private PostgreSQL cluster behind `make run` and the
// tests: it finds the machine's PostgreSQL binaries (installing Debian's
// package when they are missing and we are root), initialises a cluster under
// a folder of the project, starts it on a unix socket in that folder and a
// loopback port, and creates the database.
//
// PostgreSQL refuses to run as root. When this process is root, every server
// program runs as the `postgres` OS user (which Debian's package creates) and
// the cluster folder is handed to that user.
package devdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
)

// Superuser is the role initdb creates; the cluster trusts local connections,
// which only this machine can make (unix socket and loopback).
const Superuser = "upcheck"

// ErrNoPostgres means no PostgreSQL server binaries were found and they could
// not be installed.
var ErrNoPostgres = errors.New("postgresql server binaries not found")

// Options tune a cluster. The zero value is a durable development cluster.
type Options struct {
	// Fast trades durability for speed (fsync off): for throwaway test clusters.
	Fast bool
	// MaxConnections is passed to the server (default 100).
	MaxConnections int
	// Logger receives progress messages; nil discards them.
	Logger *slog.Logger
}

// Cluster is a running private cluster.
type Cluster struct {
	Dir     string // the cluster folder: data/, run/ (sockets), port, server.log
	Port    int
	bin     string
	runAs   *syscall.Credential
	options Options
}

// Ensure returns a running cluster in dir, creating and starting it as
// needed. It is safe to call from several processes at once: they serialise
// on a lock file next to dir. A second call reuses the data.
func Ensure(ctx context.Context, dir string, opts Options) (*Cluster, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxConnections == 0 {
		opts.MaxConnections = 100
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()

	bin, err := findBinaries(ctx, opts.Logger)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, options: opts}
	if os.Geteuid() == 0 {
		if c.runAs, err = postgresUser(); err != nil {
			return nil, err
		}
	}
	if reason := c.unusable(); reason != "" {
		// Keep the cluster next to the system's temporary files instead,
		// under a name derived from the project folder so it is reused.
		sum := sha256.Sum256([]byte(dir))
		c.Dir = filepath.Join(os.TempDir(), "upcheck-pg-"+hex.EncodeToString(sum[:6]))
		opts.Logger.InfoContext(ctx, "private cluster placed outside the project", "reason", reason, "dir", c.Dir)
	}
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// unusable says why the cluster cannot live in c.Dir: a unix socket path
// there would be too long, or the postgres user cannot reach the folder (a
// checkout under a private 0700 folder of root's).
func (c *Cluster) unusable() string {
	if len(c.socketDir())+len("/.s.PGSQL.65535") > 100 {
		return "socket path too long"
	}
	if c.runAs == nil {
		return ""
	}
	for d := filepath.Dir(c.Dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err.Error()
		}
		sys, _ := st.Sys().(*syscall.Stat_t)
		searchable := st.Mode().Perm()&0o001 != 0 ||
			(sys != nil && sys.Uid == c.runAs.Uid && st.Mode().Perm()&0o100 != 0) ||
			(sys != nil && sys.Gid == c.runAs.Gid && st.Mode().Perm()&0o010 != 0)
		if !searchable {
			return "the postgres user cannot enter " + d
		}
		if d == "/" {
			return ""
		}
	}
}

func (c *Cluster) dataDir() string   { return filepath.Join(c.Dir, "data") }
func (c *Cluster) socketDir() string { return filepath.Join(c.Dir, "run") }

// URL is the connection string for database name on this cluster.
func (c *Cluster) URL(database string) string {
	q := url.Values{"host": {c.socketDir()}, "port": {strconv.Itoa(c.Port)}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User(Superuser), Path: "/" + database, RawQuery: q.Encode()}).String()
}

// CreateDatabase creates database name unless it exists.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return fmt.Errorf("connect to private cluster: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr interface{ SQLState() string }
	if errors.As(err, &pgErr) && pgErr.SQLState() == pgerrcode.DuplicateDatabase { // created meanwhile
		return nil
	}
	return err
}

// Stop shuts the cluster down (fast mode: open sessions are ended).
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "stop", "-D", c.dataDir(), "-m", "fast", "-w")
}

// Start starts a stopped cluster again, on the same port.
func (c *Cluster) Start(ctx context.Context) error { return c.start(ctx) }

func (c *Cluster) init(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); err == nil {
		return c.readPort()
	}
	c.options.Logger.InfoContext(ctx, "creating private postgresql cluster", "dir", c.Dir)
	if err := os.RemoveAll(c.Dir); err != nil { // a half-made cluster from an interrupted init
		return err
	}
	for _, d := range []string{c.Dir, c.socketDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.Port = port
	if err := os.WriteFile(filepath.Join(c.Dir, "port"), []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		return err
	}
	if c.runAs != nil {
		if err := chownTree(c.Dir, int(c.runAs.Uid), int(c.runAs.Gid)); err != nil {
			return err
		}
	}
	return c.run(ctx, "initdb", "-D", c.dataDir(), "-U", Superuser, "--auth=trust",
		"--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions", "--no-sync")
}

func (c *Cluster) readPort() error {
	b, err := os.ReadFile(filepath.Join(c.Dir, "port"))
	if err != nil {
		return fmt.Errorf("read cluster port: %w", err)
	}
	c.Port, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return err
}

func (c *Cluster) start(ctx context.Context) error {
	if err := c.run(ctx, "pg_ctl", "status", "-D", c.dataDir()); err == nil {
		return nil // already running
	}
	settings := []string{
		"-p", strconv.Itoa(c.Port),
		"-k", c.socketDir(),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=" + strconv.Itoa(c.options.MaxConnections),
		"-c", "shared_buffers=64MB",
	}
	if c.options.Fast {
		settings = append(settings, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	c.options.Logger.InfoContext(ctx, "starting private postgresql cluster", "dir", c.Dir, "port", c.Port)
	err := c.run(ctx, "pg_ctl", "start", "-D", c.dataDir(), "-w", "-t", "60",
		"-l", filepath.Join(c.Dir, "server.log"), "-o", strings.Join(settings, " "))
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
		return fmt.Errorf("%w\nserver log (tail):\n%s", err, tail(log, 2000))
	}
	return nil
}

// run executes one of the cluster's programs, as the postgres user when root.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = "/" // the postgres user may not be allowed into the caller's folder
	// pg_ctl's server must outlive this process and not get its signals
	// (a Ctrl-C on `make run` must not kill the cluster half-way).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.runAs}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, args[0], err, strings.TrimSpace(out.String()))
	}
	return nil
}

// findBinaries looks for initdb and pg_ctl on PATH, then in Debian's
// /usr/lib/postgresql/<version>/bin (newest first), and installs Debian's
// postgresql package when there are none and we may.
func findBinaries(ctx context.Context, logger *slog.Logger) (string, error) {
	for attempt := 0; ; attempt++ {
		if dir, ok := lookBinaries(); ok {
			return dir, nil
		}
		if attempt > 0 {
			return "", fmt.Errorf("%w after installing the postgresql package", ErrNoPostgres)
		}
		if os.Geteuid() != 0 {
			return "", fmt.Errorf("%w: install them (Debian: sudo apt-get install postgresql) or set UPCHECK_DATABASE_URL", ErrNoPostgres)
		}
		logger.InfoContext(ctx, "installing postgresql with apt-get")
		for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "postgresql"}} {
			cmd := exec.CommandContext(ctx, "apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("%w: apt-get %s: %v: %s", ErrNoPostgres, args[0], err, tail(out, 1000))
			}
		}
	}
}

func lookBinaries() (string, bool) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if dir := filepath.Dir(p); isFile(filepath.Join(dir, "initdb")) {
			return dir, true
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, dir := range dirs {
		if isFile(filepath.Join(dir, "pg_ctl")) && isFile(filepath.Join(dir, "initdb")) {
			return dir, true
		}
	}
	return "", false
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and postgresql refuses to run as root: no 'postgres' OS user to run it as (install Debian's postgresql package or create the user): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func chownTree(root string, uid, gid int) error {
	return filepath.WalkDir(root, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockFile takes an exclusive flock on path, waiting for other processes.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); _ = f.Close() }, nil
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
