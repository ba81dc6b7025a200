// Command upcheck-cluster is `make cluster`: docs/deploy.md's setup on one
// machine for a person to try. It starts (or reuses) the private
// PostgreSQL of `make run` with a database of its own, a demo publisher,
// three instances of bin/upcheck on 127.0.0.1:8081-8083 and nginx with the
// guide's site on https://127.0.0.1:8443, prints the admin's credentials,
// and stops nginx and the instances on Ctrl-C (the database keeps
// running, as after `make run`; `make stop` stops it).
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/upcheck/upcheck/internal/dev/demo"
	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/testing/cluster"
)

const (
	adminEmail = "admin@upcheck.test"
	database   = "upcheck_cluster"
	https      = "127.0.0.1:8443"
)

var ports = []int{8081, 8082, 8083}

func main() {
	binary := flag.String("binary", "bin/upcheck", "the upcheck binary the instances run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *binary, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "upcheck-cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, binary string, out io.Writer) error {
	bin, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	root := os.Getenv("UPCHECK_DATA_DIR")
	if root == "" {
		root = ".data"
	}
	if root, err = filepath.Abs(root); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	pg, err := devdb.Ensure(ctx, filepath.Join(root, "pg"), devdb.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("private postgresql cluster: %w", err)
	}
	if err := pg.CreateDatabase(ctx, database); err != nil {
		return err
	}
	dir := filepath.Join(root, "cluster")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}

	// The demo publisher lives here, not in an instance, so that killing
	// any instance leaves the sources up.
	srv, manifest, err := servePublisher(dir)
	if err != nil {
		return err
	}
	defer srv.Close()

	env := []string{
		"UPCHECK_DATABASE_URL=" + pg.URL(database),
		"UPCHECK_ALLOW_PRIVATE_SOURCES=1", // the demo publisher is on loopback
		"UPCHECK_TRUSTED_PROXIES=127.0.0.1",
		"UPCHECK_SECURE_COOKIES=1",
		"UPCHECK_MANIFEST=" + manifest,
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}
	password, err := prepareDatabase(ctx, bin, env)
	if err != nil {
		return err
	}

	c, err := cluster.Start(ctx, cluster.Options{Binary: bin, Dir: dir, Env: env, Ports: ports, HTTPS: https, Log: out})
	if err != nil {
		return err
	}
	defer c.Close()
	var instances []string
	for _, in := range c.Instances {
		instances = append(instances, "http://"+in.Addr())
	}
	fmt.Fprintf(out, `
  upcheck cluster: sign in at %s/login (self-signed certificate: accept it)
  email:     %s
  password:  %s
  instances: %s (each log line starts with its port)
  nginx:     %s/nginx.conf, access log %s
  Ctrl-C stops nginx and the instances; make stop stops the database.

`, c.URL, adminEmail, password, strings.Join(instances, ", "), dir, c.AccessLog)
	<-ctx.Done()
	fmt.Fprintln(out, "stopping nginx and the instances")
	return nil
}

// servePublisher serves the demo publisher on a port of 127.0.0.1 and
// writes its manifest into dir, returning the server (its caller closes
// it) and the manifest's path.
func servePublisher(dir string) (*http.Server, string, error) {
	pub, err := demo.NewPublisher(time.Now())
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: pub, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	manifest := filepath.Join(dir, "manifest.json")
	b, err := json.MarshalIndent(pub.Manifest("http://"+ln.Addr().String()), "", "  ")
	if err != nil {
		srv.Close()
		return nil, "", err
	}
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		srv.Close()
		return nil, "", err
	}
	return srv, manifest, nil
}

// prepareDatabase migrates the database of env with bin and makes the
// admin's account, or gives the account made before a new password; it
// returns the password (UPCHECK_ADMIN_PASSWORD's, or a random one).
func prepareDatabase(ctx context.Context, bin string, env []string) (string, error) {
	if err := command(ctx, bin, env, "", "migrate"); err != nil {
		return "", err
	}
	password := os.Getenv("UPCHECK_ADMIN_PASSWORD")
	if password == "" {
		raw := make([]byte, 12)
		rand.Read(raw)
		password = base64.RawURLEncoding.EncodeToString(raw)
	}
	if err := command(ctx, bin, env, password+"\n", "user", "add", "--email", adminEmail, "--role", "admin"); err != nil {
		// A cluster started before: the account is there; give it this
		// password (which signs it out everywhere).
		if err2 := command(ctx, bin, env, password+"\n", "user", "passwd", "--email", adminEmail); err2 != nil {
			return "", errors.Join(err, err2)
		}
	}
	return password, nil
}

// command runs an upcheck command to its end; its output is in the error.
func command(ctx context.Context, bin string, env []string, stdin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("upcheck %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
