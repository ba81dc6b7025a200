package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// skipRefusedExit is the exit code of a skip or unskip refused for what
// the component's releases or its manifest say, as source import's
// refusal (docs/design.md section 6).
const skipRefusedExit = 8

// skipLine is the JSON line of `upcheck skip`: the skip as stored.
type skipLine struct {
	Code         string    `json:"code"`
	Version      string    `json:"version"`
	Reason       string    `json:"reason"`
	By           string    `json:"by"`
	At           time.Time `json:"at"`
	FromManifest bool      `json:"from_manifest"`
}

// runSkip is `upcheck skip CODE VERSION --reason R [--site NAME]`: the
// detail page's skip (docs/policy.md "Skips") of the site's component
// (the local site's by default), by the command line
// (readmodel.ActorCLI), audited and applied at once. It prints the skip as
// one JSON line; a refusal is said in words on stderr (exit 8).
func runSkip(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	code, version, reason, siteName, err := versionReasonArgs("skip", args, stderr,
		"why this site does not take this version (required; kept in the audit log)", skipMissing)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		site, err := cliSite(ctx, a, cfg, siteName)
		if err != nil {
			return fmt.Errorf("skip: %w", err)
		}
		sk, err := updatecheck.NewSkips(a.Checker).Skip(ctx,
			updatecheck.SkipRequest{Site: site.ID, Code: code, Version: version, Reason: reason, By: readmodel.ActorCLI})
		if err != nil {
			return skipRefusal("skip", site, code, version, err, stderr)
		}
		return json.NewEncoder(stdout).Encode(skipLine{Code: code, Version: sk.Version, Reason: sk.Reason,
			By: readmodel.SkippedByText(sk.By, sk.FromManifest), At: sk.At,
			FromManifest: sk.FromManifest})
	})
}

// runUnskip is `upcheck unskip CODE [--site NAME]`: the skip of the
// site's component (the local site's by default) ends, audited, and the
// component is evaluated again at once. It prints {"code", "ended"}: the
// version that was skipped, or null when none was (exit 0, as token
// revoke of a revoked token); the manifest's skip is refused (exit 8).
func runUnskip(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	var siteName string
	var pos []string
	for rest := args; ; {
		more, err := parseFlags("unskip", rest, stderr, func(fs *flag.FlagSet) { siteFlag(fs, &siteName) })
		if err != nil {
			return err
		}
		if len(more) == 0 {
			break
		}
		pos, rest = append(pos, more[0]), more[1:]
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "upcheck unskip: one CODE is required\n%s", helpPointer("unskip"))
		return errUsage
	}
	code := pos[0]
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		site, err := cliSite(ctx, a, cfg, siteName)
		if err != nil {
			return fmt.Errorf("unskip: %w", err)
		}
		line := struct {
			Code  string  `json:"code"`
			Ended *string `json:"ended"`
		}{Code: code}
		sk, err := updatecheck.NewSkips(a.Checker).Unskip(ctx, site.ID, code, 0, readmodel.ActorCLI)
		switch {
		case errors.Is(err, updatecheck.ErrNoSkip):
			fmt.Fprintf(stderr, "upcheck unskip: %s skips no version: nothing to end.\n", code)
		case err != nil:
			return skipRefusal("unskip", site, code, "", err, stderr)
		default:
			line.Ended = &sk.Version
		}
		return json.NewEncoder(stdout).Encode(line)
	})
}

// skipRefusal turns a refused skip or unskip into its exit: 8 with the
// reason in words on stderr, or 1 for a component that is not installed
// and for any other error.
func skipRefusal(cmd string, site store.Site, code, version string, err error, stderr io.Writer) error {
	what := code
	if version != "" {
		what = version + " of " + code
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s: %s", cmd, noComponentText(site, code))
	}
	r := updatecheck.SkipRefusalOf(err)
	if r == "" {
		return err
	}
	words := readmodel.SkipRefusalText(r, version, store.MaxReasonLength)
	fmt.Fprintf(stderr, "upcheck %s: refused: %s: %s\n", cmd, what, words)
	return &exitError{code: skipRefusedExit, err: fmt.Errorf("%s refused", cmd)}
}

// versionReasonArgs reads the arguments CODE VERSION --reason R
// [--site NAME] of the command name (the flags may come before, between
// or after them), its --reason described by usage; what is missing
// (missing's words) is said on stderr, errUsage returned. site is ""
// without --site: the local site.
func versionReasonArgs(name string, args []string, stderr io.Writer, usage string,
	missing func(pos []string, reason string) string) (code, version, reason, site string, err error) {
	define := func(fs *flag.FlagSet) {
		fs.StringVar(&reason, "reason", reason, usage)
		siteFlag(fs, &site)
	}
	var pos []string
	for rest := args; ; {
		more, err := parseFlags(name, rest, stderr, define)
		if err != nil {
			return "", "", "", "", err
		}
		if len(more) == 0 {
			break
		}
		pos, rest = append(pos, more[0]), more[1:]
	}
	if m := missing(pos, reason); m != "" {
		fmt.Fprintf(stderr, "upcheck %s: %s\n%s", name, m, helpPointer(name))
		return "", "", "", "", errUsage
	}
	return pos[0], pos[1], reason, site, nil
}

// siteFlag defines --site NAME: the site whose component a command acts
// on, the local site when not given.
func siteFlag(fs *flag.FlagSet, site *string) {
	fs.StringVar(site, "site", *site, "the site whose component it is (default: the local site, "+store.LocalSiteName+")")
}

// cliSite is the site a command's --site names: the local site for ""
// or "local"; an error in words for a site that does not exist.
func cliSite(ctx context.Context, a *app.App, cfg config.Config, name string) (store.Site, error) {
	if name == "" || name == store.LocalSiteName {
		return store.Site{ID: store.LocalSite, Name: store.LocalSiteName}, nil
	}
	site, err := a.Store.SiteByName(ctx, name, readmodel.SiteStaleAfter(cfg.SiteStaleAfter))
	if errors.Is(err, store.ErrNotFound) {
		return store.Site{}, fmt.Errorf("no site is named %q (upcheck site list names them)", name)
	}
	return site, err
}

// noComponentText says that site installs no component code: the local
// site's words as before sites, a registered site named.
func noComponentText(site store.Site, code string) string {
	if site.Local() {
		return fmt.Sprintf("no installed component has the code %q", code)
	}
	return fmt.Sprintf("site %s has no installed component with the code %q", site.Name, code)
}

// skipMissing names what `upcheck skip CODE VERSION --reason R` lacks, in
// one line ("" when nothing): the missing argument alone, not all three.
func skipMissing(pos []string, reason string) string {
	switch {
	case len(pos) == 0:
		return "CODE and VERSION are required: the component and the version to skip"
	case len(pos) == 1:
		return "VERSION is required: the version of " + pos[0] + " to skip"
	case len(pos) > 2:
		return "unexpected argument " + strconv.Quote(pos[2]) + ": CODE VERSION --reason R"
	case strings.TrimSpace(reason) == "":
		return "--reason R is required: why this site does not take " + pos[1] + " (kept in the audit log)"
	}
	return ""
}
