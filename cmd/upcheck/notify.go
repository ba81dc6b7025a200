package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// runNotify is `upcheck notify add|list|test|retry|remove`.
func runNotify(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "upcheck notify: want add, list, test, retry or remove\n%s", helpPointer("notify"))
		return errUsage
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "add":
		return runNotifyAdd(ctx, cfg, logger, rest, stdout, stderr)
	case "list":
		if _, err := parseFlags("notify list", rest, stderr, nil); err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error { return notifyList(ctx, a, stdout) })
	case "test", "remove":
		id, err := oneArg("notify "+sub, rest, stderr, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
		if err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error {
			if sub == "remove" {
				return a.Notify.DeleteChannel(ctx, id)
			}
			event, err := a.Notify.QueueTest(ctx, id)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(stdout, event)
			return err
		})
	case "retry":
		id, err := oneArg("notify retry", rest, stderr, uuid.Parse)
		if err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error { return a.Notify.Retry(ctx, id) })
	}
	fmt.Fprintf(stderr, "upcheck notify: unknown command %q\n%s", args[0], helpPointer("notify"))
	return errUsage
}

// runNotifyAdd is `upcheck notify add webhook --url URL [--format
// standard|slack] [--events security|all] [--min-epss P] [--name N] [--sites N,N|--fleet]` or `upcheck notify
// add email --to ADDR[,ADDR] [--events security|all] [--min-epss P] [--name N]`: it prints
// the channel's id, and a webhook's signing secret on the last line (shown
// once).
func runNotifyAdd(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "email" {
		return runNotifyAddEmail(ctx, cfg, logger, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "webhook" {
		fmt.Fprintf(stderr, "upcheck notify add: want \"webhook\" or \"email\"\n%s", helpPointer("notify add"))
		return errUsage
	}
	c := store.NewChannel{Kind: string(readmodel.ChannelWebhook)}
	var format string
	var sc scopeFlags
	if _, err := parseFlags("notify add webhook", args[1:], stderr, func(fs *flag.FlagSet) {
		sc.add(fs)
		fs.StringVar(&c.Target, "url", "", "where to POST the events")
		fs.StringVar(&format, "format", "standard", "standard (signed Standard Webhooks JSON) or slack ({\"text\": …})")
		fs.StringVar(&c.Events, "events", string(readmodel.ChannelEventsSecurity), "security (security updates, unfixed advisories, failing sources, overdue checks) or all (every update too)")
		fs.StringVar(&c.Name, "name", "", "a name to recognise the channel by (default: the URL's host)")
		minEPSSFlag(fs, &c)
	}); err != nil {
		return err
	}
	switch format {
	case "standard":
	case "slack":
		c.Kind = string(readmodel.ChannelSlack)
	default:
		fmt.Fprintln(stderr, "upcheck notify add webhook: --format must be standard or slack")
		return errUsage
	}
	if !sc.ok("notify add webhook", stderr) {
		return errUsage
	}
	return addChannel(ctx, cfg, logger, c, sc, stdout)
}

// runNotifyAddEmail is `upcheck notify add email`: refused before the
// database is opened when this process has no mail server or an address
// does not parse.
func runNotifyAddEmail(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	c := store.NewChannel{Kind: string(readmodel.ChannelEmail)}
	var sc scopeFlags
	if _, err := parseFlags("notify add email", args, stderr, func(fs *flag.FlagSet) {
		sc.add(fs)
		fs.StringVar(&c.Target, "to", "", "the addresses to send to, separated by commas")
		fs.StringVar(&c.Events, "events", string(readmodel.ChannelEventsSecurity), "security (security updates, unfixed advisories, failing sources, overdue checks) or all (every update too)")
		fs.StringVar(&c.Name, "name", "", "a name to recognise the channel by (default: the first address)")
		minEPSSFlag(fs, &c)
	}); err != nil {
		return err
	}
	if cfg.SMTP.Host == "" {
		return fmt.Errorf("notify add email: %w", notify.ErrNoSMTP)
	}
	if c.Target == "" {
		fmt.Fprintln(stderr, "upcheck notify add email: --to is required")
		return errUsage
	}
	if _, err := notify.ParseRecipients(c.Target); err != nil {
		return fmt.Errorf("notify add email: %w", err)
	}
	if !sc.ok("notify add email", stderr) {
		return errUsage
	}
	return addChannel(ctx, cfg, logger, c, sc, stdout)
}

// addChannel creates the channel and prints its id and its full target
// (the only time it is shown whole: list masks a webhook URL), and a
// webhook's secret.
func addChannel(ctx context.Context, cfg config.Config, logger *slog.Logger, c store.NewChannel, sc scopeFlags, stdout io.Writer) error {
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		switch {
		case sc.fleet:
			c.Scope = readmodel.ScopeFleet
		case sc.sites != "":
			c.Scope = readmodel.ScopeSites
			ids, err := a.Notify.SiteIDs(ctx, strings.Split(sc.sites, ","))
			if err != nil {
				return err
			}
			c.SiteIDs = ids
		}
		created, err := a.Notify.AddChannel(ctx, c)
		if err != nil {
			return err
		}
		ch, err := a.Store.Channel(ctx, created.ID)
		if err != nil {
			return err
		}
		queued := "1 outstanding event queued"
		if created.Queued != 1 {
			queued = strconv.Itoa(created.Queued) + " outstanding events queued"
		}
		fmt.Fprintf(stdout, "channel %d %s (%s)\n", created.ID, ch.Target, queued)
		if created.Secret != "" {
			fmt.Fprintln(stdout, created.Secret)
		}
		return nil
	})
}

// notifyList prints the channels and the newest events as JSON lines. A
// webhook URL is a credential: it is shown masked (notify.ShownTarget, as
// to an admin), whole only by add.
func notifyList(ctx context.Context, a *app.App, stdout io.Writer) error {
	channels, err := a.Store.Channels(ctx)
	if err != nil {
		return err
	}
	events, err := a.Store.Events(ctx, 50)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, c := range channels {
		line := map[string]any{"channel": c.ID, "name": c.Name, "kind": c.Kind, "url": notify.ShownTarget(c.Kind, c.Target, true),
			"events": c.Events, "enabled": c.Enabled, "scope": c.Scope}
		if c.Scope == readmodel.ScopeSites {
			line["sites"] = c.Sites
		}
		if c.Kind == string(readmodel.ChannelEmail) {
			delete(line, "url")
			line["to"] = c.Target
		}
		if c.DisabledReason != "" {
			line["disabled_reason"] = c.DisabledReason
		}
		if c.MinEPSS != nil {
			line["min_epss"] = *c.MinEPSS
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	for _, e := range events {
		line := map[string]any{"event": e.ID, "channel": e.ChannelID, "type": e.Type, "key": e.Key, "state": e.State, "attempts": e.Attempts}
		if e.LastError != "" {
			line["last_error"] = e.LastError
		}
		if e.MessageID != uuid.Nil {
			line["message"] = e.MessageID
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

// oneArg parses the single positional argument of a subcommand.
func oneArg[T any](cmd string, args []string, stderr io.Writer, parse func(string) (T, error)) (T, error) {
	var zero T
	rest, err := parseFlags(cmd, args, stderr, func(*flag.FlagSet) {})
	if err != nil {
		return zero, err
	}
	if len(rest) != 1 {
		fmt.Fprintf(stderr, "upcheck %s: want one id\n", cmd)
		return zero, errUsage
	}
	v, err := parse(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "upcheck %s: %q is not an id\n", cmd, rest[0])
		return zero, errUsage
	}
	return v, nil
}

// minEPSSFlag is --min-epss: the least EPSS probability (0 to 1) an
// unfixed advisory must have to be sent to the channel; unset, every one
// is. Known-exploited and malicious-package events are always sent.
func minEPSSFlag(fs *flag.FlagSet, c *store.NewChannel) {
	fs.Func("min-epss", "send an unfixed advisory only when its EPSS probability is at least this (0 to 1); exploited and malicious packages are always sent", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("want a probability from 0 to 1, such as 0.1, not %q", v)
		}
		c.MinEPSS = &f
		return nil
	})
}

// scopeFlags are notify add's --sites and --fleet: which sites the
// channel is told of (neither: the local site).
type scopeFlags struct {
	sites string
	fleet bool
}

func (sc *scopeFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&sc.sites, "sites", "", "told of these registered sites (names, separated by commas), not the local site unless named (local)")
	fs.BoolVar(&sc.fleet, "fleet", false, "told of every site, present and future: one message per finding, naming its sites")
}

// ok refuses --sites with --fleet, in words.
func (sc scopeFlags) ok(cmd string, stderr io.Writer) bool {
	if sc.fleet && strings.TrimSpace(sc.sites) != "" {
		fmt.Fprintf(stderr, "upcheck %s: --sites and --fleet do not go together (the fleet is every site)\n", cmd)
		return false
	}
	return true
}
