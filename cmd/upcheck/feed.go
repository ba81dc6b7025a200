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
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// feedExit is the exit code of a feed command: 3 when a check held the
// lease (as check's busy), 8 when a feed's sync failed (as a refused
// import).
const (
	feedBusy   = 3
	feedFailed = 8
)

// runFeed is `upcheck feed sync` and `upcheck feed import KIND FILE`.
func runFeed(ctx context.Context, cfg config.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "sync" && args[0] != "import") {
		fmt.Fprintf(stderr, "upcheck feed: want \"sync\" or \"import\"\n%s", helpPointer("feed"))
		return errUsage
	}
	sub := args[0]
	rest, err := parseFlags("feed "+sub, args[1:], stderr, func(*flag.FlagSet) {}) // no flags; KIND FILE are arguments
	if err != nil {
		return err
	}
	settings, err := app.SettingsFrom(cfg)
	if err != nil {
		return err
	}
	switch {
	case sub == "sync" && len(rest) != 0:
		fmt.Fprintln(stderr, "upcheck feed sync: takes no arguments")
		return errUsage
	case sub == "sync" && len(settings.Feeds) == 0:
		return fmt.Errorf("feed sync: %w: set it to kind=URL pairs (docs/feeds.md)", feedsync.ErrNotConfigured)
	case sub == "import" && len(rest) != 2:
		fmt.Fprintln(stderr, "upcheck feed import: want KIND (osv, kev or epss) and one FILE")
		return errUsage
	}
	return withApp(ctx, cfg, logger, func(a *app.App) error {
		var results []feedsync.Result
		var err error
		if sub == "sync" {
			results, err = a.Feeds.RunLockedFeedSync(ctx)
		} else {
			var res feedsync.Result
			res, err = a.Feeds.RunLockedFeedImport(ctx, readmodel.FeedKind(rest[0]), rest[1])
			results = []feedsync.Result{res}
		}
		if errors.Is(err, feedsync.ErrBusy) {
			fmt.Fprintln(stderr, "upcheck feed "+sub+": a check is running; nothing was synced. Try again when it has finished.")
			return &exitError{code: feedBusy, err: err}
		}
		enc := json.NewEncoder(stdout)
		failed := false
		for _, r := range results {
			if r.Kind == "" {
				continue
			}
			if r.Status == readmodel.FeedSyncFailed {
				failed = true
				fmt.Fprintf(stderr, "upcheck feed %s: %s: %s What was stored stays.\n", sub, r.Kind, r.Error)
			}
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("feed %s: %w", sub, err)
		}
		if failed {
			return &exitError{code: feedFailed, err: fmt.Errorf("feed %s failed", sub)}
		}
		return nil
	})
}
