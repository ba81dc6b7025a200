package app

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/config"
)

// A URL naming several hosts with target_session_attrs=read-write (a
// primary and its standby, docs/operations.md) is taken as written: every
// host is tried in order, a server that is not read-write is refused, and
// a connect_timeout in the URL bounds each host's attempt instead of the
// 5 s default (a host that drops packets costs that long per new
// connection). The pool connects lazily, so nothing needs to listen here.
func TestOpenDatabaseMultiHostURL(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		url  string
		want time.Duration
	}{
		{"postgres://u@127.0.0.1:1,127.0.0.1:2/upcheck?sslmode=disable&target_session_attrs=read-write", 5 * time.Second},
		{"postgres://u@127.0.0.1:1,127.0.0.1:2/upcheck?sslmode=disable&target_session_attrs=read-write&connect_timeout=2", 2 * time.Second},
	} {
		pool, err := OpenDatabase(context.Background(), config.Config{DatabaseURL: tc.url}, logger)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		cfg := pool.Config()
		pool.Close()
		if cfg.ConnConfig.Port != 1 || len(cfg.ConnConfig.Fallbacks) != 1 || cfg.ConnConfig.Fallbacks[0].Port != 2 {
			t.Fatalf("%s: hosts %d then %+v, want ports 1 then 2", tc.url, cfg.ConnConfig.Port, cfg.ConnConfig.Fallbacks)
		}
		if cfg.ConnConfig.ValidateConnect == nil {
			t.Fatalf("%s: no read-write check on new connections", tc.url)
		}
		if cfg.ConnConfig.ConnectTimeout != tc.want {
			t.Fatalf("%s: connect timeout %s, want %s", tc.url, cfg.ConnConfig.ConnectTimeout, tc.want)
		}
	}
}
