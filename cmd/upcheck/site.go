package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// runSite is `upcheck site add|list|rotate|remove` (docs/design.md "Many
// sites"): registering the sites that push their lockfiles (site push,
// runSitePush, needs no database and runs before the configuration is
// read).
func runSite(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "upcheck site: want add, list, policy, rotate, remove or push\n%s", helpPointer("site"))
		return errUsage
	}
	switch args[0] {
	case "add":
		return runSiteAdd(ctx, cfg, logger, args[1:], stdout, stderr)
	case "list":
		if _, err := parseFlags("site list", args[1:], stderr, nil); err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error { return siteList(ctx, a, cfg.SiteStaleAfter, stdout) })
	case "policy":
		return runSitePolicy(ctx, cfg, logger, args[1:], stdout, stderr)
	case "rotate":
		name, err := oneName("site rotate", args[1:], stderr)
		if err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error {
			raw, site, err := a.Auth.RotateSiteToken(ctx, name)
			if err != nil {
				return siteError("site rotate", name, err)
			}
			fmt.Fprintf(stdout, "site %s: a new push token, shown once; the old one no longer works\n", site.Name)
			_, err = fmt.Fprintln(stdout, raw)
			return err
		})
	case "remove":
		name, err := oneName("site remove", args[1:], stderr)
		if err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error {
			site, err := a.Auth.RemoveSite(ctx, name)
			if err != nil {
				return siteError("site remove", name, err)
			}
			_, err = fmt.Fprintf(stdout, "site %s removed, its installed tree and history with it\n", site.Name)
			return err
		})
	}
	fmt.Fprintf(stderr, "upcheck site: unknown command %q\n%s", args[0], helpPointer("site"))
	return errUsage
}

// runSiteAdd is `upcheck site add NAME [--owner O]`: registers the site
// and prints one line saying so, then its push token alone on the last
// line, shown once (only its SHA-256 is kept).
func runSiteAdd(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	var owner string
	pos, err := interspersed("site add", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&owner, "owner", owner, "who the site is for (a customer, a team)")
	})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "upcheck site add: one NAME is required (lower-case letters, digits and hyphens)\n%s", helpPointer("site"))
		return errUsage
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		raw, site, err := a.Auth.AddSite(ctx, pos[0], owner)
		if err != nil {
			return siteError("site add", pos[0], err)
		}
		fmt.Fprintf(stdout, "site %s added; its push token, shown once (PUT /api/sites/%s/lockfile, Authorization: Bearer):\n", site.Name, site.Name)
		_, err = fmt.Fprintln(stdout, raw)
		return err
	})
}

// siteError words a refusal of a site command.
func siteError(cmd, name string, err error) error {
	switch {
	case errors.Is(err, auth.ErrInvalidSiteName), errors.Is(err, auth.ErrInvalidSiteOwner), errors.Is(err, auth.ErrLocalSite),
		errors.Is(err, updatecheck.ErrSitePolicyLocal):
		return fmt.Errorf("%s: %w", cmd, err)
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%s: a site named %q is registered already", cmd, name)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s: no site is named %q (bin/upcheck site list shows them)", cmd, name)
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// siteList prints one site a line, the local one first, its fields
// separated by tabs (an owner holds no control character): name, owner,
// registered (RFC 3339 in UTC; "-" for the local site), last push (RFC
// 3339, "never", or "-" for the local site), the push in words
// (readmodel.SitePushText: "never pushed", "last push 9 days ago: stale")
// and a registered site's policy in words (readmodel.PolicyText; "-" for
// the local site, whose policy is its manifest's). Never a push token:
// only their hashes are stored.
func siteList(ctx context.Context, a *app.App, staleAfter time.Duration, stdout io.Writer) error {
	sites, err := a.Store.Sites(ctx, readmodel.SiteStaleAfter(staleAfter))
	if err != nil {
		return fmt.Errorf("site list: %w", err)
	}
	policies, err := a.Store.SitePolicies(ctx)
	if err != nil {
		return fmt.Errorf("site list: %w", err)
	}
	now := time.Now()
	w := bufio.NewWriter(stdout)
	for _, s := range sites {
		registered, pushed, words := s.CreatedAt.UTC().Format(time.RFC3339), timeOrNever(s.PushedAt), readmodel.SitePushText(now, s.PushedAt, s.Stale)
		policy := "-"
		if s.Local() {
			registered, pushed, words = "-", "-", readmodel.SiteLocalPushText
		} else {
			p, err := release.ParsePolicyText(policies[s.ID])
			if err != nil {
				return fmt.Errorf("site list: %s: %w", s.Name, err)
			}
			policy = policyWords(p)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Owner, registered, pushed, words, policy)
	}
	return w.Flush()
}

// sitePolicyLine is the JSON line of `upcheck site policy`: the site's
// policy as a manifest's "policy" holds it ({} the default) and in words;
// after a change, what it did.
type sitePolicyLine struct {
	Site   string         `json:"site"`
	Policy release.Policy `json:"policy"`
	Text   string         `json:"text"`
	// Unchanged, Components and Reevaluated are a change's
	// (updatecheck.SitePolicyReport).
	Unchanged   *bool `json:"unchanged,omitempty"`
	Components  *int  `json:"components,omitempty"`
	Reevaluated *int  `json:"reevaluated,omitempty"`
}

// runSitePolicy is `upcheck site policy NAME [--policy JSON | --default]`:
// a registered site's own update policy (docs/policy.md), the object a
// manifest's "policy" holds, read by the manifest's parser; --default
// gives it the default again (every release at once). Its components are
// written under it and evaluated again at once from the stored documents
// (updatecheck.Checker.SetSitePolicy). Without a flag it only says. One
// JSON line; a policy the parser refuses changes nothing and exits 1 with
// its words; the local site's policy is its manifest's (exit 1).
func runSitePolicy(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	var policy string
	var def bool
	pos, err := interspersed("site policy", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&policy, "policy", policy, `the site's policy, as a manifest's "policy" (JSON)`)
		fs.BoolVar(&def, "default", def, "the default policy again: every release at once")
	})
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		fmt.Fprintf(stderr, "upcheck site policy: one NAME is required\n%s", helpPointer("site"))
		return errUsage
	case def && policy != "":
		fmt.Fprintf(stderr, "upcheck site policy: --policy or --default, not both\n%s", helpPointer("site"))
		return errUsage
	}
	if def {
		policy = "{}"
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		site, err := a.Store.SiteByName(ctx, pos[0], 0)
		if err != nil {
			return siteError("site policy", pos[0], err)
		}
		line := sitePolicyLine{Site: site.Name}
		if policy == "" {
			line.Policy, err = a.Checker.SitePolicy(ctx, site)
		} else {
			var rep updatecheck.SitePolicyReport
			rep, err = a.Checker.SetSitePolicy(ctx, updatecheck.SitePolicyRequest{Site: site, Body: []byte(policy)})
			line.Policy, line.Unchanged, line.Components, line.Reevaluated = rep.Policy, &rep.Unchanged, &rep.Components, &rep.Reevaluated
		}
		if err != nil {
			return siteError("site policy", pos[0], err)
		}
		line.Text = policyWords(line.Policy)
		return json.NewEncoder(stdout).Encode(line)
	})
}

// policyWords is p in the words every page says a policy with
// (readmodel.PolicyText).
func policyWords(p release.Policy) string {
	soak := ""
	if d, err := p.SoakDuration(); err == nil && d > 0 {
		soak = readmodel.DurationText(d)
	}
	return readmodel.PolicyText(string(p.Offer), p.Hold, soak, p.Approve)
}

// oneName reads the one NAME of a site command.
func oneName(cmd string, args []string, stderr io.Writer) (string, error) {
	pos, err := parseFlags(cmd, args, stderr, func(*flag.FlagSet) {})
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "upcheck %s: one NAME is required\n%s", cmd, helpPointer("site"))
		return "", errUsage
	}
	return pos[0], nil
}

// interspersed parses flags given before, between or after the positional
// arguments ("site add NAME --owner O"), and returns the positional ones.
func interspersed(cmd string, args []string, stderr io.Writer, define func(*flag.FlagSet)) ([]string, error) {
	var pos []string
	for rest := args; ; {
		more, err := parseFlags(cmd, rest, stderr, define)
		if err != nil {
			return nil, err
		}
		if len(more) == 0 {
			return pos, nil
		}
		pos, rest = append(pos, more[0]), more[1:]
	}
}

// runUserSites is `upcheck user sites EMAIL [--sites a,b | --all]`: with
// --sites the user sees those sites only (the local one is "local"), with
// --all every site again; with neither it only says. One JSON line:
// email, limited, sites (the names, [] when not limited).
func runUserSites(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	var sites string
	var all bool
	pos, err := interspersed("user sites", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&sites, "sites", sites, "the sites the user may see, comma-separated (local: the site upcheck runs beside)")
		fs.BoolVar(&all, "all", all, "let the user see every site")
	})
	if err != nil {
		return err
	}
	names := config.SplitList(sites)
	switch {
	case len(pos) != 1:
		fmt.Fprintf(stderr, "upcheck user sites: one EMAIL is required\n%s", helpPointer("user"))
		return errUsage
	case all && sites != "":
		fmt.Fprintf(stderr, "upcheck user sites: --sites or --all, not both\n%s", helpPointer("user"))
		return errUsage
	case sites != "" && len(names) == 0:
		fmt.Fprintf(stderr, "upcheck user sites: --sites names no site (--all for every site)\n%s", helpPointer("user"))
		return errUsage
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		var us auth.UserSites
		var err error
		if all || len(names) > 0 {
			us, err = a.Auth.SetUserSites(ctx, pos[0], all, names)
		} else {
			us, err = a.Auth.UserSiteLimit(ctx, pos[0])
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("user sites: no account has the email %q", pos[0])
		case errors.Is(err, auth.ErrUnknownSite):
			return fmt.Errorf("user sites: %w (bin/upcheck site list shows them)", err)
		case err != nil:
			return fmt.Errorf("user sites: %w", err)
		}
		if us.Sites == nil {
			us.Sites = []string{}
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"email": us.User.Email, "limited": us.Limited, "sites": us.Sites})
	})
}

// tokenSitesText is a token's sites as token list prints them: "all", or
// the names comma-separated ("none" when its sites were all removed).
func tokenSitesText(limited bool, names []string) string {
	switch {
	case !limited:
		return "all"
	case len(names) == 0:
		return "none"
	}
	return strings.Join(names, ",")
}
