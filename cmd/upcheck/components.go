package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// globs is a repeatable flag of globs (--include); given once or more, it
// replaces the setting's list.
type globs struct {
	list []string
	set  bool
}

func (g *globs) String() string { return fmt.Sprint(g.list) }

func (g *globs) Set(v string) error {
	if !g.set {
		g.list, g.set = nil, true
	}
	g.list = append(g.list, config.SplitList(v)...)
	return nil
}

// runComponents is `upcheck components sync`: the installed components
// become exactly the manifest's entries (--manifest, UPCHECK_MANIFEST) or
// the lockfile's chosen packages (--lockfile, UPCHECK_LOCKFILE, with
// --include and --core or their settings, and --policy as the site-wide
// policy). A flag names the file to read
// whatever the other setting says; both flags at once are a usage mistake.
func runComponents(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "sync" {
		fmt.Fprintf(stderr, "upcheck components: want \"sync\"\n%s", helpPointer("components"))
		return errUsage
	}
	var manifestPath, lockfilePath, policy string
	include := globs{list: cfg.LockfileInclude}
	core := cfg.LockfileCore
	settings, err := app.SettingsFrom(cfg)
	if err != nil {
		return err
	}
	sitePolicy := settings.Lockfile.Policy
	set := map[string]bool{}
	fs := flag.NewFlagSet("upcheck components sync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&manifestPath, "manifest", "", "the manifest file (JSON or YAML); default $UPCHECK_MANIFEST")
	fs.StringVar(&lockfilePath, "lockfile", "", "the site's package-lock.json or pnpm-lock.yaml; default $UPCHECK_LOCKFILE")
	fs.Var(&include, "include", "a glob of package names that are components (repeatable); default $UPCHECK_LOCKFILE_INCLUDE")
	fs.StringVar(&core, "core", core, "the core's package name; default $UPCHECK_LOCKFILE_CORE")
	fs.StringVar(&policy, "policy", "", `the site-wide policy, as a manifest's "policy" (JSON); default $UPCHECK_LOCKFILE_POLICY`)
	if err := fs.Parse(args[1:]); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "upcheck components sync: unexpected argument %q\n%s", fs.Arg(0), helpPointer("components"))
		return errUsage
	}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["manifest"] && set["lockfile"]:
		fmt.Fprintf(stderr, "upcheck components sync: --manifest and --lockfile are exclusive: the components come from one of them\n%s", helpPointer("components"))
		return errUsage
	case set["manifest"] && (set["include"] || set["core"]):
		fmt.Fprintf(stderr, "upcheck components sync: --include and --core choose a lockfile's packages; a manifest names its components\n%s", helpPointer("components"))
		return errUsage
	case !set["manifest"] && !set["lockfile"]:
		manifestPath, lockfilePath = cfg.Manifest, cfg.Lockfile
	}
	if set["policy"] && manifestPath != "" && lockfilePath == "" {
		fmt.Fprintf(stderr, "upcheck components sync: --policy is a lockfile's site-wide policy; a manifest says its own policy\n%s", helpPointer("components"))
		return errUsage
	}
	if manifestPath == "" && lockfilePath == "" {
		return errors.New("components sync: no manifest or lockfile: set UPCHECK_MANIFEST or UPCHECK_LOCKFILE, or pass --manifest or --lockfile")
	}
	opt := lockfile.Options{Include: include.list, Core: core, Policy: sitePolicy}
	if set["policy"] {
		p, err := manifest.ParsePolicy([]byte(policy))
		if err != nil {
			fmt.Fprintf(stderr, "upcheck components sync: --policy: %v\n%s", err, helpPointer("components"))
			return errUsage
		}
		opt.Policy = p
	}
	if lockfilePath != "" {
		if err := opt.Validate(); err != nil {
			fmt.Fprintf(stderr, "upcheck components sync: %v\n%s", err, helpPointer("components"))
			return errUsage
		}
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		var rep updatecheck.SyncReport
		var err error
		if lockfilePath != "" {
			rep, err = a.SyncLockfile(ctx, lockfilePath, opt)
		} else {
			rep, err = a.SyncManifest(ctx, manifestPath)
		}
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(rep)
	})
}
