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
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/store"
)

// runUser is `upcheck user add|passwd`.
func runUser(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "passwd" {
		return runUserPasswd(ctx, cfg, logger, args[1:], stdin, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "add" {
		fmt.Fprintf(stderr, "upcheck user: want \"add\" or \"passwd\"\n%s", helpPointer("user"))
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

// tokenList prints one token a line, its fields separated by tabs (a name
// holds no control character): id, name, owner's email, created, last used
// ("never" when it never was), and state (active, expired or revoked).
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
	w := bufio.NewWriter(stdout)
	for _, t := range tokens {
		lastUsed := "never"
		if t.LastUsedAt != nil {
			lastUsed = t.LastUsedAt.UTC().Format(time.RFC3339)
		}
		state := "active"
		switch {
		case t.Revoked:
			state = "revoked"
		case t.Expired:
			state = "expired"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.OwnerEmail, t.CreatedAt.UTC().Format(time.RFC3339), lastUsed, state)
	}
	return w.Flush()
}
