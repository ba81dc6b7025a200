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
	"slices"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/dev/demo"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// demoHandler serves the demo's publisher and npm registry, and its
// advisory feeds under demo.FeedsPath.
func demoHandler(p *demo.Publisher, feeds *demo.Feeds) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, demo.FeedsPath) {
			feeds.ServeHTTP(w, r)
			return
		}
		p.ServeHTTP(w, r)
	})
}

// demoSite is the demo publisher served on loopback by this process.
type demoSite struct {
	publisher *demo.Publisher
	server    *http.Server
	base      string
	logger    *slog.Logger
	out       io.Writer
}

func startDemo(logger *slog.Logger, out io.Writer) (*demoSite, error) {
	now := time.Now()
	p, err := demo.NewPublisher(now)
	if err != nil {
		return nil, err
	}
	feeds, err := demo.NewFeeds(now)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo publisher: %w", err)
	}
	d := &demoSite{publisher: p, server: &http.Server{Handler: demoHandler(p, feeds), ReadHeaderTimeout: 5 * time.Second}, base: "http://" + ln.Addr().String(), logger: logger, out: out}
	go d.server.Serve(ln) //nolint:errcheck // ends with close()
	logger.Info("demo publisher serving", "addr", d.base, "npm_registry", demo.RegistryURL(d.base))
	return d, nil
}

// install points the checks at the demo's npm registry, makes the demo
// site's components the installed ones and looks after the demo admin. On an installation with no users yet it creates
// admin@upcheck.test, with UPCHECK_ADMIN_PASSWORD or a generated password
// printed this once. On a later start UPCHECK_ADMIN_PASSWORD, when set, is
// applied to that account if it is not its password already (which ends
// the account's sessions, as `upcheck user passwd` does); the output says
// what happened, and how to change the password when nothing was applied.
func (d *demoSite) install(ctx context.Context, a *App) error {
	// The demo's npm packages are read from the demo itself, whatever
	// UPCHECK_NPM_REGISTRY and UPCHECK_NPMRC say, through the same guarded
	// fetcher as its documents (serve allows loopback in the demo).
	reg, err := npm.ParseRegistryURL(demo.RegistryURL(d.base))
	if err != nil {
		return fmt.Errorf("demo registry: %w", err)
	}
	a.Npm = &npm.Client{Fetcher: a.Fetcher, Registries: npm.Registries{Default: reg}, MaxDocument: a.Settings.NpmMaxDocument}
	a.Checker.UseNpm(a.Npm)
	// And its advisory feeds, whatever UPCHECK_FEEDS says.
	feeds, err := feed.ParseList(demo.FeedsSetting(d.base))
	if err != nil {
		return fmt.Errorf("demo feeds: %w", err)
	}
	a.Feeds = updatecheck.NewFeeds(a.Checker, feeds, a.Config.FeedDir)
	a.Checker.UseFeeds(a.Feeds)
	if _, err := a.Syncer.Sync(ctx, d.publisher.NpmManifest(d.base)); err != nil {
		return err
	}
	users, err := a.Store.Users(ctx)
	if err != nil {
		return err
	}
	if len(users) == 0 {
		return d.createAdmin(ctx, a)
	}
	hasAdmin := slices.ContainsFunc(users, func(u store.User) bool { return strings.EqualFold(u.Email, DemoAdminEmail) })
	return d.applyAdminPassword(ctx, a, hasAdmin)
}

// createAdmin creates the demo admin on an installation with no users.
func (d *demoSite) createAdmin(ctx context.Context, a *App) error {
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

// applyAdminPassword is the demo admin's password on an installation that
// has users: UPCHECK_ADMIN_PASSWORD applied when it changes something, and
// a plain word on what happened either way.
func (d *demoSite) applyAdminPassword(ctx context.Context, a *App, hasAdmin bool) error {
	password := a.Config.AdminPassword
	login := "http://" + a.Config.Listen + "/login"
	passwd := "bin/upcheck user passwd --email " + DemoAdminEmail
	switch {
	case !hasAdmin && password == "":
		fmt.Fprintf(d.out, "\n  upcheck demo: sign in at %s with an account of this installation\n\n", login)
		return nil
	case !hasAdmin:
		d.logger.WarnContext(ctx, "demo: UPCHECK_ADMIN_PASSWORD not applied: this installation has accounts but none is "+DemoAdminEmail)
		fmt.Fprintf(d.out, "\n  upcheck demo: UPCHECK_ADMIN_PASSWORD was NOT applied: this installation has accounts, none of them %s.\n"+
			"  Change an account's password with: bin/upcheck user passwd --email EMAIL (new password on stdin)\n\n", DemoAdminEmail)
		return nil
	case password == "":
		fmt.Fprintf(d.out, "\n  upcheck demo: sign in at %s as %s (password chosen at the first start).\n"+
			"  Lost it? Start again with UPCHECK_ADMIN_PASSWORD=… set, or run: %s\n\n", login, DemoAdminEmail, passwd)
		return nil
	}
	same, err := a.Auth.PasswordIs(ctx, DemoAdminEmail, password)
	if err != nil {
		return fmt.Errorf("demo admin: %w", err)
	}
	if same {
		d.logger.InfoContext(ctx, "demo: UPCHECK_ADMIN_PASSWORD is already the demo admin's password", "email", DemoAdminEmail)
		fmt.Fprintf(d.out, "\n  upcheck demo: sign in at %s as %s with UPCHECK_ADMIN_PASSWORD (unchanged)\n\n", login, DemoAdminEmail)
		return nil
	}
	change, err := a.Auth.SetPassword(ctx, DemoAdminEmail, password)
	if err != nil {
		return fmt.Errorf("demo admin: UPCHECK_ADMIN_PASSWORD: %w", err)
	}
	d.logger.InfoContext(ctx, "demo: UPCHECK_ADMIN_PASSWORD applied to the demo admin", "email", DemoAdminEmail, "sessions_ended", change.SessionsEnded)
	fmt.Fprintf(d.out, "\n  upcheck demo: UPCHECK_ADMIN_PASSWORD applied: it is now %s's password (%d session(s) signed out).\n  Sign in at %s\n\n",
		DemoAdminEmail, change.SessionsEnded, login)
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
