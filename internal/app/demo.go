package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/upcheck/upcheck/internal/demo"
	"github.com/upcheck/upcheck/internal/lease"
)

// demoSite is the demo publisher served on loopback by this process.
type demoSite struct {
	publisher *demo.Publisher
	server    *http.Server
	base      string
	logger    *slog.Logger
}

func startDemo(logger *slog.Logger) (*demoSite, error) {
	p, err := demo.NewPublisher(time.Now())
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo publisher: %w", err)
	}
	d := &demoSite{publisher: p, server: &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}, base: "http://" + ln.Addr().String(), logger: logger}
	go d.server.Serve(ln) //nolint:errcheck // ends with close()
	logger.Info("demo publisher serving", "addr", d.base)
	return d, nil
}

// install makes the demo site's components the installed ones.
func (d *demoSite) install(ctx context.Context, a *App) error {
	_, err := a.Checker.SyncComponents(ctx, d.publisher.Manifest(d.base))
	return err
}

// firstCheck runs one check at start, so the AdminCP shows results at once.
func (d *demoSite) firstCheck(ctx context.Context, a *App) {
	res, err := a.Checker.RunLockedUpdateCheck(ctx, lease.Operator, "demo")
	if err != nil {
		d.logger.WarnContext(ctx, "demo: first check could not run", "error", err)
		return
	}
	d.logger.InfoContext(ctx, "demo: first check", "status", res.Status)
}

func (d *demoSite) close() { _ = d.server.Close() }
