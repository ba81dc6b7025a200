package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/upcheck/upcheck/internal/demo"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// demoSite is the demo publisher served on loopback by this process.
type demoSite struct {
	publisher *demo.Publisher
	server    *http.Server
	base      string
	logger    *slog.Logger
	out       io.Writer
}

func startDemo(logger *slog.Logger, out io.Writer) (*demoSite, error) {
	p, err := demo.NewPublisher(time.Now())
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo publisher: %w", err)
	}
	d := &demoSite{publisher: p, server: &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}, base: "http://" + ln.Addr().String(), logger: logger, out: out}
	go d.server.Serve(ln) //nolint:errcheck // ends with close()
	logger.Info("demo publisher serving", "addr", d.base)
	return d, nil
}

// install makes the demo site's components the installed ones and, on an
// installation with no users yet, creates the admin account: its password
// is UPCHECK_ADMIN_PASSWORD or a generated one, printed this once.
func (d *demoSite) install(ctx context.Context, a *App) error {
	if _, err := a.Checker.SyncComponents(ctx, d.publisher.Manifest(d.base)); err != nil {
		return err
	}
	users, err := a.Store.Users(ctx)
	if err != nil || len(users) > 0 {
		return err
	}
	password := a.Config.AdminPassword
	if password == "" {
		b := make([]byte, 12)
		rand.Read(b)
		password = base64.RawURLEncoding.EncodeToString(b)
	}
	if _, err := a.Auth.CreateUser(ctx, DemoAdminEmail, "admin", password); err != nil {
		return fmt.Errorf("demo admin: %w", err)
	}
	fmt.Fprintf(d.out, "\n  upcheck demo: sign in at http://%s/login\n  email:    %s\n  password: %s\n  (shown once; set UPCHECK_ADMIN_PASSWORD to choose it)\n\n",
		a.Config.Listen, DemoAdminEmail, password)
	return nil
}

// DemoAdminEmail is the demo admin's sign-in.
const DemoAdminEmail = "admin@upcheck.test"

// firstCheck runs one check at start, so the AdminCP shows results at once:
// the demo's sources move to a new port at every start, and until they are
// fetched nothing is known about them. Serve runs it before the scheduler
// starts: the scheduler's catch-up then finds it completed instead of
// racing it (one of them would be refused as busy, a history row caused by
// the start itself). When another holder has the lease (a previous serve
// killed during its check), it tries again once that lease could have
// expired, a few times.
func (d *demoSite) firstCheck(ctx context.Context, a *App) {
	wait := a.Lease.Timings().Lease
	for attempt := 1; ; attempt++ {
		res, err := a.Checker.RunLockedUpdateCheck(ctx, lease.Operator, readmodel.ActorDemo)
		if err != nil {
			d.logger.WarnContext(ctx, "demo: first check could not run", "error", err)
			return
		}
		d.logger.InfoContext(ctx, "demo: first check", "status", res.Status)
		if res.Status != updatecheck.Busy || attempt == demoCheckAttempts {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// demoCheckAttempts bounds the demo's first check while the lease is busy.
const demoCheckAttempts = 3

func (d *demoSite) close() { _ = d.server.Close() }
