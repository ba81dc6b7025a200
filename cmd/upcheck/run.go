package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `upcheck — which installed components have updates, and which fix security problems.

Usage:
  upcheck serve       run the HTTP server (migrates at start)
  upcheck migrate     apply database migrations
  upcheck version     print the version

Environment: UPCHECK_DATABASE_URL (unset: a private PostgreSQL cluster under
UPCHECK_DATA_DIR, default .data), UPCHECK_LISTEN (default 127.0.0.1:8080),
UPCHECK_MANIFEST, UPCHECK_ALLOW_PRIVATE_SOURCES=1, UPCHECK_LOG_LEVEL,
UPCHECK_TEST_TIMINGS (tests only).
`

// exitError carries a specific exit code (DESIGN.md section 6).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errUsage is a command-line mistake: exit 2 after the usage text.
var errUsage = errors.New("usage")

// run is the whole program behind main, so tests can drive it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))

	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		if err := noArgs(cmd, rest, stderr); err != nil {
			return err
		}
		return app.Serve(ctx, cfg, logger, nil)
	case "migrate":
		if err := noArgs(cmd, rest, stderr); err != nil {
			return err
		}
		return app.Migrate(ctx, cfg, logger)
	case "version":
		fmt.Fprintln(stdout, "upcheck", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "upcheck: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}

func noArgs(cmd string, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "upcheck %s: unexpected argument %q\n", cmd, fs.Arg(0))
		return errUsage
	}
	return nil
}

// exitCode maps run's error to the process exit status and reports it.
func exitCode(err error, stderr io.Writer) int {
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, &ee):
		return ee.code
	}
	fmt.Fprintln(stderr, "upcheck:", err)
	return 1
}
