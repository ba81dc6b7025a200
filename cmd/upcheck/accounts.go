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
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/app"
	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/store"
)

// runUser is `upcheck user add|passwd|sites`.
func runUser(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "passwd" {
		return runUserPasswd(ctx, cfg, logger, args[1:], stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "sites" {
		return runUserSites(ctx, cfg, logger, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "add" {
		fmt.Fprintf(stderr, "upcheck user: want \"add\", \"passwd\" or \"sites\"\n%s", helpPointer("user"))
		return errUsage
	}
	return runUserAdd(ctx, cfg, logger, args, stdin, stdout, stderr)
}

// runUserPasswd is `upcheck user passwd --email E`: the new password comes
// on stdin, under the rule of `user add`. Every browser session of the
// account ends, so whoever knew the old password is signed out; its API
// tokens keep working, and the command says how many there are and how to
// list them. It prints one JSON line: id, email, sessions_ended,
// live_tokens.
func runUserPasswd(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var email string
	if _, err := parseFlags("user passwd", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "the account's email")
	}); err != nil {
		return err
	}
	if email == "" {
		fmt.Fprintln(stderr, "upcheck user passwd: --email is required")
		return errUsage
	}
	password, err := readPassword(stdin)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		change, err := a.Auth.SetPassword(ctx, email, password)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("user passwd: no account has the email %q", email)
		}
		if err != nil {
			return fmt.Errorf("user passwd: %w", err)
		}
		if change.LiveTokens > 0 {
			fmt.Fprintf(stderr, "upcheck: %s still has %d API token(s) that work; list them with `bin/upcheck token list --email %s` and revoke any you do not recognise\n",
				change.User.Email, change.LiveTokens, change.User.Email)
		}
		return json.NewEncoder(stdout).Encode(map[string]any{
			"id": change.User.ID, "email": change.User.Email,
			"sessions_ended": change.SessionsEnded, "live_tokens": change.LiveTokens,
		})
	})
}

// readPassword reads a password from the first line of stdin (at most 4
// KiB), never from the command line where other users of the machine could
// see it. The length rule is the auth package's.
func readPassword(stdin io.Reader) (string, error) {
	if stdin == nil {
		return "", nil
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// runToken is `upcheck token create|list|revoke`.
func runToken(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "upcheck token: want create, list or revoke\n%s", helpPointer("token"))
		return errUsage
	}
	switch args[0] {
	case "create":
		return runTokenCreate(ctx, cfg, logger, args, stdout, stderr)
	case "list":
		var email string
		if _, err := parseFlags("token list", args[1:], stderr, func(fs *flag.FlagSet) {
			fs.StringVar(&email, "email", "", "list only this user's tokens")
		}); err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error { return tokenList(ctx, a, email, stdout) })
	case "revoke":
		id, err := oneArg("token revoke", args[1:], stderr, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
		if err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error {
			err := a.Auth.RevokeToken(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("token revoke: no API token has id %d (bin/upcheck token list shows them)", id)
			}
			if err != nil {
				return fmt.Errorf("token revoke: %w", err)
			}
			_, err = fmt.Fprintf(stdout, "token %d revoked\n", id)
			return err
		})
	}
	fmt.Fprintf(stderr, "upcheck token: unknown command %q\n%s", args[0], helpPointer("token"))
	return errUsage
}

// runTokenCreate is `upcheck token create --email E [--name N]
// [--read-only] [--expires DURATION] [--sites NAME,…]`: prints an API
// token carrying that user's permissions (only its view permissions with
// --read-only; only those of the user's sites with --sites), and
// nothing else, on stdout; stderr says its id, scope and expiry. It is
// shown once; only its hash is kept. Without --expires the token lasts
// until revoked (auth.Config.TokenTTL when one is set).
func runTokenCreate(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintf(stderr, "upcheck token: want \"create\"\n%s", helpPointer("token"))
		return errUsage
	}
	var email, name, expires, sites string
	var readOnly bool
	if _, err := parseFlags("token create", args[1:], stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "the user the token acts as")
		fs.StringVar(&name, "name", "cli", "a name to recognise the token by")
		fs.BoolVar(&readOnly, "read-only", false, "only the user's view permissions: the token changes nothing")
		fs.StringVar(&expires, "expires", "", "lifetime: days (90d), years (1y), a duration (12h) or never (the default)")
		fs.StringVar(&sites, "sites", "", "only these sites, comma-separated, of those the user may see (default: all the user's)")
	}); err != nil {
		return err
	}
	if email == "" {
		fmt.Fprintln(stderr, "upcheck token create: --email is required")
		return errUsage
	}
	lifetime, err := auth.ParseTokenLifetime(expires)
	if err != nil {
		fmt.Fprintf(stderr, "upcheck token create: --expires %q: want never, days (90d), years (1y) or a duration (12h), from a minute to 100 years\n", expires)
		return errUsage
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		secret, t, err := a.Auth.CreateTokenFor(ctx, auth.TokenRequest{Email: email, Name: name, ReadOnly: readOnly, Expires: lifetime,
			Sites: config.SplitList(sites)})
		switch {
		case errors.Is(err, auth.ErrUnknownSite), errors.Is(err, auth.ErrSitesBeyondOwner):
			return fmt.Errorf("token create: --sites: %w", err)
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("token create: no account has the email %q", email)
		case errors.Is(err, auth.ErrDisabled):
			return fmt.Errorf("token create: the account %q is disabled", email)
		case errors.Is(err, auth.ErrInvalidTokenName):
			return fmt.Errorf("token create: --name must be at most 100 bytes, without control characters")
		case err != nil:
			return fmt.Errorf("token create: %w", err)
		}
		fmt.Fprintf(stderr, "upcheck: token %d for %s, %s, expires %s\n", t.ID, email, auth.TokenScope(t.ReadOnly), timeOrNever(t.ExpiresAt))
		_, err = fmt.Fprintln(stdout, secret)
		return err
	})
}

// timeOrNever is a time as the token commands print it: RFC 3339 in UTC,
// or "never".
func timeOrNever(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// tokenList prints one token a line, its fields separated by tabs (a name
// holds no control character): id, name, owner's email, scope (full or
// read-only), created, last used ("never" when it never was), expires
// ("never" when it does not), state (active, expired or revoked), and the
// sites it sees within its owner's ("all", or their names comma-separated).
// Times are RFC 3339 in UTC. The secret is not there: only its hash is
// stored.
func tokenList(ctx context.Context, a *app.App, email string, stdout io.Writer) error {
	tokens, err := a.Auth.Tokens(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("token list: no account has the email %q", email)
	}
	if err != nil {
		return fmt.Errorf("token list: %w", err)
	}
	sites, err := a.Auth.TokenSites(ctx)
	if err != nil {
		return fmt.Errorf("token list: %w", err)
	}
	w := bufio.NewWriter(stdout)
	for _, t := range tokens {
		state := "active"
		switch {
		case t.Revoked:
			state = "revoked"
		case t.Expired:
			state = "expired"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.OwnerEmail, auth.TokenScope(t.ReadOnly),
			t.CreatedAt.UTC().Format(time.RFC3339), timeOrNever(t.LastUsedAt), timeOrNever(t.ExpiresAt), state,
			tokenSitesText(t.SitesLimited, sites[t.ID]))
	}
	return w.Flush()
}

// runUserAdd is `upcheck user add --email E --role admin|viewer`; the
// password comes on stdin (its first line), never on the command line where
// other users of the machine could see it.
func runUserAdd(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		fmt.Fprintf(stderr, "upcheck user: want \"add\"\n%s", helpPointer("user"))
		return errUsage
	}
	var email, role string
	if _, err := parseFlags("user add", args[1:], stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "the account's email")
		fs.StringVar(&role, "role", "", "admin or viewer")
	}); err != nil {
		return err
	}
	if email == "" || (role != "admin" && role != "viewer") {
		fmt.Fprintln(stderr, "upcheck user add: --email and --role admin|viewer are required")
		return errUsage
	}
	password, err := readPassword(stdin)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		u, err := a.Auth.CreateUser(ctx, email, role, password)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"id": u.ID, "email": u.Email, "role": u.Role})
	})
}
