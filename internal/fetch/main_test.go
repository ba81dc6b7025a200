package fetch

import (
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// TestMain fails the package when any test leaves a goroutine behind: a
// worker, a retry timer or a connection the Fetcher did not let go of.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// setup returns a Fetcher for cfg that logs into the test's output and drops
// its idle connections when the test ends. Retries are made fast unless the
// test asks otherwise.
func setup(t *testing.T, cfg Config) *Fetcher {
	t.Helper()
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = time.Millisecond
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := New(cfg, logger)
	t.Cleanup(f.Close)
	return f
}

// serve starts h, answering every path, on ip (a loopback address such as
// 127.0.0.3, so that several servers are distinct hosts): the shared test
// publisher, with the test's handler. It closes when the test ends.
func serve(t *testing.T, ip string, h http.Handler) *publisher.Publisher {
	t.Helper()
	return publisher.New(t, publisher.On(net.JoinHostPort(ip, "0")), publisher.Fallback(h))
}

// gauge measures requests in flight and the highest number seen, from the
// server's side.
type gauge struct {
	cur, peak atomic.Int64
}

func (g *gauge) enter() {
	n := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.cur.Add(-1) }
