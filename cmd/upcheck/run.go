package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// versionText is what `upcheck version` (and --version) prints: the
// linker's version, else the module's version as go install built it,
// else "dev" with the commit the binary was built from, when known.
func versionText() string {
	if version != "dev" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return version + " (" + s.Value[:12] + ")"
		}
	}
	return version
}

const usage = `upcheck — which installed components have updates, and which fix security problems.

Usage:
  upcheck serve [--demo]        run the HTTP server and the daily check (migrates at start);
                                --demo adds a demo publisher and site (what make run shows)
  upcheck migrate               apply database migrations
  upcheck check [--manual]      run one locked check now; prints one JSON line, whose
                                "failures" say why each failed source failed
  upcheck components sync [--manifest FILE | --lockfile FILE [--include GLOB]... [--core NAME] [--policy JSON]]
                                make the installed components the manifest's entries
                                (default $UPCHECK_MANIFEST), or the packages of the site's
                                package-lock.json or pnpm-lock.yaml (default $UPCHECK_LOCKFILE):
                                --include (repeatable; $UPCHECK_LOCKFILE_INCLUDE) globs of
                                package names, default the site's own dependencies; --core
                                ($UPCHECK_LOCKFILE_CORE) the core's package; --policy the
                                site-wide policy, the JSON of a manifest's "policy"
                                ('{"offer":"security","soak":"72h"}'); prints one JSON line
  upcheck source import --source URL FILE [--sig FILE]
                                accept a document obtained elsewhere (a mirror, a USB stick)
                                for source URL (or offline:NAME) under the rules of a fetch;
                                --sig: its detached signature, as served at <url>.sig
  upcheck feed sync             sync every advisory feed of UPCHECK_FEEDS now (a check syncs
                                the due ones daily); prints one JSON line per feed
  upcheck feed import KIND FILE bring a feed's file by hand (KIND osv: an OSV archive, kev: the
                                KEV catalogue's JSON, epss: the EPSS CSV, gzipped or not)
                                under the rules of a fetch; prints one JSON line
  upcheck skip CODE VERSION --reason R [--site NAME]
                                skip a plain update: VERSION and the plain releases below it
                                are not offered to component CODE, a newer release is; never a
                                security release (dismiss its advisory instead); audited,
                                applied at once; prints the skip as one JSON line; --site: a
                                registered site's component (default: the local site)
  upcheck unskip CODE [--site NAME]
                                end CODE's skip (audited, applied at once); prints
                                {"code","ended"}, ended null when nothing was skipped
  upcheck approve CODE VERSION --reason R [--site NAME]
                                approve what VERSION of npm component CODE brings (its install
                                scripts, by the SHA-256 of their text, and its sources outside
                                the registry) for a policy whose approve holds it; audited,
                                applied at once; prints the approval as one JSON line
  upcheck user add --email E --role admin|viewer
                                create an account; the password is read from stdin
  upcheck user passwd --email E
                                set a new password (read from stdin) and end every session
                                of the account; its API tokens keep working
  upcheck user sites EMAIL [--sites NAME,… | --all]
                                limit the user to those sites (local: the site upcheck runs
                                beside), or let them see every site again; without either,
                                say which; prints {"email","limited","sites"}
  upcheck token create --email E [--name N] [--read-only] [--expires DURATION] [--sites NAME,…]
                                print an API token (Authorization: Bearer …) for that user;
                                --read-only: only the user's view permissions; --expires:
                                90d, 1y, 12h or never (default: never); --sites: only those
                                of the sites the user may see
  upcheck token list [--email E]
                                one token a line, tab-separated: id, name, owner, scope
                                (full|read-only), created, last used (or never), expires
                                (or never), active|expired|revoked, sites (all, or NAME,…)
  upcheck site add NAME [--owner O]
                                register a site that pushes its lockfile; prints its push
                                token on the last line, shown once
  upcheck site list             one site a line, tab-separated: name, owner, registered, last
                                push (or never), the push in words (…: stale), its policy
                                in words (- for the local site)
  upcheck site policy NAME [--policy JSON | --default]
                                a registered site's update policy, as a manifest's "policy"
                                ({"offer": "patch", "soak": "3d"}), or the default again;
                                its components are evaluated under it at once; without a
                                flag, say it; prints {"site","policy","text",…}
  upcheck site rotate NAME      a new push token on the last line, shown once; the old one
                                stops working
  upcheck site remove NAME      remove a registered site, its installed tree and history
                                (never the local site)
  upcheck site push --url URL --token-file F LOCKFILE
                                from a registered site's deploy step (no database): PUT
                                LOCKFILE to URL (https://HOST/api/sites/NAME/lockfile) with
                                the push token in F; prints the answer, exit 1 when refused
  upcheck token revoke ID       revoke token ID; exit 1 when no token has that id
  upcheck notify add webhook --url URL [--format standard|slack] [--events security|all] [--name N]
                                add a notification channel; prints its id, and a webhook's
                                signing secret (whsec_…) on the last line, shown once;
                                --sites NAME[,NAME] or --fleet: told of those sites, or of
                                every site (one message per finding), not the local site
  upcheck notify add email --to ADDR[,ADDR] [--events security|all] [--name N]
                                add an email channel: one message per check run
                                (needs UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM)
  upcheck notify list           channels and the newest events, as JSON lines
  upcheck notify test ID        send a test event to channel ID
  upcheck notify retry EVENT    send a failed event again (same event id)
  upcheck notify remove ID      delete channel ID and its events
  upcheck publisher init --publisher NAME [--package CODE]… [--dir DIR] [--expires TIME]
                                start an update document: writes updates.json (sequence 1),
                                publisher.key (private, mode 0600) and publisher.pub in DIR;
                                never overwrites (docs/publishing.md)
  upcheck publisher release add --package CODE --version V [--released TIME|now]
        [--requires-core RANGE] [--security] [--severity S] [--summary TEXT] [--url URL]
        [--expires TIME] DOCUMENT
                                append a release and add 1 to the sequence (--expires: set
                                the document's too); refused, file untouched, when the
                                result would not pass lint
  upcheck publisher advisory add --package CODE --id ID --affected RANGE [--fixed-in V]
        [--severity S] [--summary TEXT] [--url URL] [--aliases ID,…] [--cvss VECTOR]
        [--modified TIME|now] [--withdrawn TIME|now] [--references TYPE=URL]… [--expires TIME] DOCUMENT
                                append an advisory, the same way
  upcheck publisher lint DOCUMENT
                                every problem upcheck would refuse DOCUMENT for, as
                                FILE:LINE:COLUMN: PATH: message; exit 1 if any, else one ok line
  upcheck publisher keygen      make an Ed25519 key pair for signing update documents
  upcheck publisher sign [--key-file FILE]... [--write] DOCUMENT
                                sign DOCUMENT (keys from --key-file, repeated for a
                                signature set, or $UPCHECK_PUBLISHER_KEY)
  upcheck publisher rotate --new-key KEY... [--threshold N] (--current FILE | --version N)
                           [--publisher NAME] [--key-file FILE]... [--write DOCUMENT]
                                write a key statement naming the new keys, signed by
                                the current ones (DOCUMENT.keys and DOCUMENT.keys.sig)
  upcheck publisher osv2doc --package NAME FILE...
                                OSV records (JSON files) as the advisories of package NAME,
                                printed as a document's "packages" object
  upcheck version               print the version (also --version)
  upcheck help [COMMAND…]       this text, or the usage of COMMAND

Exit codes of check: 0 completed, 7 completed_with_failures (some sources gave
no usable document; "failed" counts them), 3 busy, 4 cooldown, 5 lease_lost,
6 skipped, 1 failed or cancelled (the JSON line says which) or an error (no
JSON line).

Exit codes of source import: 0 imported (or the same document again), 3 busy (a
check is running; nothing waits), 8 refused (the JSON line's "problem" says
why; the stored document stays), 1 an error.

Exit codes of skip: 0 skipped, 8 refused (stderr says why: a security
release, a version not newer than the installed one or not published, the
manifest's skip), 2 a usage mistake, 1 an error (no installed component
CODE, no site NAME).

Exit codes of unskip: 0 ended (also when nothing was skipped), 8 refused
(the manifest's skip), 2 a usage mistake, 1 an error (no installed
component CODE, no site NAME).

Exit codes of approve: 0 approved, 8 refused (stderr says why: the
version brings nothing to approve, the component is not an npm package),
2 a usage mistake, 1 an error (no installed component CODE, no site NAME).

Environment: UPCHECK_DATABASE_URL (unset: a private PostgreSQL cluster under
UPCHECK_DATA_DIR, default .data), UPCHECK_LISTEN (default 127.0.0.1:8080),
UPCHECK_MANIFEST or UPCHECK_LOCKFILE (with UPCHECK_LOCKFILE_INCLUDE and
UPCHECK_LOCKFILE_CORE; serve follows the lockfile's changes),
UPCHECK_NPM_REGISTRY and UPCHECK_NPMRC (the site's npm registry, scopes and
tokens), UPCHECK_NPM_MAX_DOCUMENT (bytes), UPCHECK_NPM_DEPENDENCY_DOCUMENTS,
UPCHECK_ALLOW_PRIVATE_SOURCES=1, UPCHECK_CHECK_SCHEDULE,
UPCHECK_TRUSTED_PROXIES (CIDRs of reverse proxies whose X-Forwarded-For is
believed), UPCHECK_METRICS_PUBLIC=1 (/metrics without an API token),
UPCHECK_SECURE_COOKIES=1, UPCHECK_FETCH_TIMEOUT, UPCHECK_LOG_LEVEL (serve's
log level; other commands log to stderr only at DEBUG),
UPCHECK_SMTP_URL and UPCHECK_SMTP_FROM (email notifications),
UPCHECK_TEST_TIMINGS (tests only). See README.md for the full list.
`

// exitError carries a specific exit code (docs/design.md section 6).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errUsage is a command-line mistake: exit 2 after the usage text.
var errUsage = errors.New("usage")

// checkExit maps a check's status to its exit code.
var checkExit = map[updatecheck.Status]int{
	updatecheck.Completed:             0,
	updatecheck.Busy:                  3,
	updatecheck.Cooldown:              4,
	updatecheck.LeaseLost:             5,
	updatecheck.Skipped:               6,
	updatecheck.CompletedWithFailures: 7, // "failed" in the JSON line counts the sources
	updatecheck.Failed:                1, // the JSON line's status tells these two apart
	updatecheck.Cancelled:             1,
}

// runWithoutConfig runs the commands that read no configuration (help,
// version, publisher's tools, a site's push from where no database is);
// done is false for every other command.
func runWithoutConfig(ctx context.Context, cmd string, rest []string, getenv func(string) string, stdout, stderr io.Writer) (done bool, err error) {
	if wantsHelp(rest) {
		return true, printHelp(cmd, rest, stdout, stderr)
	}
	switch cmd {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "upcheck", versionText())
		return true, nil
	case "help", "-h", "--help":
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			return true, printHelp(rest[0], rest[1:], stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return true, nil
	case "publisher":
		return true, runPublisher(rest, getenv, stdout, stderr)
	case "site":
		// A site's deploy step pushes where no database is.
		if len(rest) > 0 && rest[0] == "push" {
			return true, runSitePush(ctx, rest[1:], stdout, stderr)
		}
	}
	return false, nil
}

// run is the whole program behind main, so tests can drive it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	if done, err := runWithoutConfig(ctx, cmd, rest, getenv, stdout, stderr); done {
		return err
	}

	cfg, err := config.FromEnv(getenv)
	if err == nil {
		// The settings that stand for domain values are read by their
		// packages' rules here, before any command, as config reads the
		// others.
		_, err = app.SettingsFrom(cfg)
	}
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	cfg.Version = version
	logger := commandLogger(cmd, cfg, stderr)

	switch cmd {
	case "serve":
		if _, err := parseFlags(cmd, rest, stderr, func(fs *flag.FlagSet) {
			fs.BoolVar(&cfg.Demo, "demo", false, "serve a demo publisher on loopback and a demo site using it")
		}); err != nil {
			return err
		}
		return app.Serve(ctx, cfg, logger, nil)
	case "migrate":
		if _, err := parseFlags(cmd, rest, stderr, nil); err != nil {
			return err
		}
		return app.Migrate(ctx, cfg, logger)
	case "check":
		var manual bool
		if _, err := parseFlags(cmd, rest, stderr, func(fs *flag.FlagSet) {
			fs.BoolVar(&manual, "manual", false, "apply the manual cooldown, like the AdminCP button")
		}); err != nil {
			return err
		}
		return runCheck(ctx, cfg, logger, manual, stdout)
	case "notify":
		return runNotify(ctx, cfg, logger, rest, stdout, stderr)
	case "components":
		return runComponents(ctx, cfg, logger, rest, stdout, stderr)
	case "user":
		return runUser(ctx, cfg, logger, rest, stdin, stdout, stderr)
	case "token":
		return runToken(ctx, cfg, logger, rest, stdout, stderr)
	case "source":
		return runSource(ctx, cfg, logger, rest, stdout, stderr)
	case "feed":
		return runFeed(ctx, cfg, logger, rest, stdout, stderr)
	case "skip":
		return runSkip(ctx, cfg, logger, rest, stdout, stderr)
	case "unskip":
		return runUnskip(ctx, cfg, logger, rest, stdout, stderr)
	case "approve":
		return runApprove(ctx, cfg, logger, rest, stdout, stderr)
	case "site":
		return runSite(ctx, cfg, logger, rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "upcheck: unknown command %q\n%s", cmd, helpPointer(""))
	return errUsage
}

// commandLogger is where a command's log lines go: always stderr, so that
// stdout carries the command's result alone. The server (serve) logs at
// UPCHECK_LOG_LEVEL (default INFO); a one-shot command says what it did on
// stdout, and its log lines (the check's, River's, the migrations') are
// written only at UPCHECK_LOG_LEVEL=DEBUG, for whoever looks into one.
func commandLogger(cmd string, cfg config.Config, stderr io.Writer) *slog.Logger {
	if cmd != "serve" && cfg.LogLevel > slog.LevelDebug {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

func runCheck(ctx context.Context, cfg config.Config, logger *slog.Logger, manual bool, stdout io.Writer) error {
	trigger := lease.Operator
	if manual {
		trigger = lease.Manual
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		res, err := a.Checker.RunLockedUpdateCheck(ctx, trigger, readmodel.ActorCLI)
		if err != nil {
			return err
		}
		// The JSON line carries the stored summary too, so a script sees
		// what the check found without a second call, and why each source
		// it could not read failed, in the words of Source health.
		line := struct {
			updatecheck.Result
			Failures []updatecheck.SourceFailure `json:"failures"`
			Summary  *readmodel.Summary          `json:"summary,omitempty"`
		}{Result: res}
		// Read after the check, from what it stored: when the database
		// cannot say any more, "failures" is null (not known), not [].
		if line.Failures, err = a.Checker.Failures(ctx, res); err != nil {
			a.Logger.WarnContext(ctx, "read the check's failures", "error", err)
		}
		if sum, err := a.Reads.Summary(ctx); err == nil {
			line.Summary = &sum
		}
		if err := json.NewEncoder(stdout).Encode(line); err != nil {
			return err
		}
		code, ok := checkExit[res.Status]
		if !ok {
			code = 1
		}
		if code != 0 {
			return &exitError{code: code, err: fmt.Errorf("check %s", res.Status)}
		}
		return nil
	})
}

func withApp(ctx context.Context, cfg config.Config, logger *slog.Logger, fn func(*app.App) error) error {
	a, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

// parseFlags parses a subcommand's flags and returns its positional
// arguments; define adds the flags (nil for none).
func parseFlags(cmd string, args []string, stderr io.Writer, define func(*flag.FlagSet)) ([]string, error) {
	fs := flag.NewFlagSet("upcheck "+cmd, flag.ContinueOnError)
	// A mistake is said in one line with where the usage is, not with
	// the flag package's list of every flag.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if define != nil {
		define(fs)
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "upcheck %s: %v\n%s", cmd, err, helpPointer(strings.Fields(cmd)[0]))
		return nil, errUsage
	}
	if define == nil && fs.NArg() > 0 {
		fmt.Fprintf(stderr, "upcheck %s: unexpected argument %q\n", cmd, fs.Arg(0))
		return nil, errUsage
	}
	return fs.Args(), nil
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
