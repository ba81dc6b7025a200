package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// browser starts Debian's headless Chromium for one test. Chromium is
// required (`make test` installs it); a missing browser fails the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Fatal("chromium not found: run `make deps` (Debian: apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // the machines run as root
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		// A closed network: without these Chromium stalls on refused
		// background connections.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first Run starts the browser, bound to ctx (no timeout on it: a
	// timeout there would stop the browser).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifacts is where screenshots go: $UPCHECK_ARTIFACTS or <repo>/artifacts
// (git-ignored).
func artifacts(t *testing.T) string {
	dir := os.Getenv("UPCHECK_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func signIn(t *testing.T, ctx context.Context, base, email string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/admin"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="email"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), email),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), testPassword),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="updates-widget"]`)),
	)
	if err != nil {
		t.Fatalf("sign in as %s: %v", email, err)
	}
}

func text(t *testing.T, ctx context.Context, testID string) string {
	t.Helper()
	s, err := textOf(ctx, testID)
	if err != nil {
		t.Fatalf("text of %s: %v", testID, err)
	}
	return s
}

// textOf is the element's text, its white space folded.
func textOf(ctx context.Context, testID string) (string, error) {
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`[data-testid="`+testID+`"]`)))
	return strings.Join(strings.Fields(s), " "), err
}

// waitText waits until the element's text matches re. The page may
// replace the element while it is read (app.js refreshing the banner): a
// read that finds no node is tried again, until the deadline.
func waitText(t *testing.T, ctx context.Context, testID string, re *regexp.Regexp) string {
	t.Helper()
	var s string
	wait.For(t, testID+" matching "+re.String(), wait.Guard, func() (bool, error) {
		var err error
		s, err = textOf(ctx, testID)
		return err == nil && re.MatchString(s), wait.Notf("%q (%v)", s, err)
	})
	return s
}

// The AdminCP as a person uses it: sign in, see the badge and the security
// alert, press "Check for updates", read the outcome and see the widget and
// badge refresh without a reload, press again and see the cooldown count
// down. A viewer sees no button and is refused the check.
func TestBrowserDashboard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The demo's Shop source fails, so checks complete with failures.
	if res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil || res.Status != "completed_with_failures" {
		t.Fatalf("first check: %+v %v", res, err)
	}
	// Make the stored state differ from what the next check will find, so
	// a refresh after the click is visible: blog's security update and its
	// advisory are "forgotten" until the check fetches them again.
	b.db.MustExec(t, "UPDATE component_results SET update_available = false, security = false, advisory_ids = '{}', fix_ids = '{}' WHERE code = 'blog'")

	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	// The badge counts what needs attention: Gallery (no fix) alone.
	if got := text(t, ctx, "nav-attention-badge"); !strings.HasPrefix(got, "1") {
		t.Fatalf("badge before the check = %q, want 1 component needing attention", got)
	}
	if got := text(t, ctx, "security-alert"); !strings.Contains(got, "vulnerable") {
		t.Fatalf("security alert = %q", got)
	}
	if got := text(t, ctx, "widget-security"); !strings.HasPrefix(got, "0") {
		t.Fatalf("widget security before the check = %q", got)
	}
	if got := text(t, ctx, "widget-last-check"); !strings.HasSuffix(got, "(completed with failures, command line check)") {
		t.Fatalf("last check before the click = %q", got)
	}
	screenshot(t, ctx, "dashboard.png")

	// A marker that a page reload would wipe. And a word of the page's own
	// changed: app.js words the note with what the page carries.
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.__noReload = true;
			document.querySelector('[data-testid="widget-last-check"]').textContent = "not yet refreshed"`),
		chromedp.Click(chromedp.CSS(`[data-testid="check-button"]`)),
	); err != nil {
		t.Fatal(err)
	}
	outcome := waitText(t, ctx, "check-outcome", regexp.MustCompile(`Check completed`))
	if !strings.Contains(outcome, "fetched") {
		t.Fatalf("outcome = %q", outcome)
	}
	waitText(t, ctx, "nav-attention-badge", regexp.MustCompile(`^2`))
	waitText(t, ctx, "widget-security", regexp.MustCompile(`^1`))
	// The first check came from the command line; app.js takes this
	// one's note as the server renders it now (data-live), without a
	// reload.
	waitText(t, ctx, "widget-last-check", regexp.MustCompile(`^just now \(completed with failures, manual check\)$`))
	if marker, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload === true`)); err != nil || !marker {
		t.Fatalf("the page reloaded (marker %v, %v)", marker, err)
	}
	// The banner is refreshed from the page after the summary (refreshLive).
	waitText(t, ctx, "security-alert", regexp.MustCompile(`security update`))

	// Again: the cooldown, with a live countdown.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="check-button"]`))); err != nil {
		t.Fatal(err)
	}
	first := waitText(t, ctx, "check-outcome", regexp.MustCompile(`again in \d+`))
	if secondsIn(first) <= 0 {
		t.Fatalf("the cooldown counts no seconds: %q", first)
	}
	wait.For(t, "the countdown counts down from "+first, wait.Guard, func() (bool, error) {
		second, err := textOf(ctx, "check-outcome") // the page may be replacing it: asked again
		n := secondsIn(second)
		return err == nil && n > 0 && n < secondsIn(first), wait.Notf("now %q (%v)", second, err)
	})

	if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/plugins"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="catalog-table"]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "catalog.png")
}

func TestBrowserViewer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "viewer@example.test")
	buttons, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="check-button"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if buttons != 0 {
		t.Fatal("a viewer sees the check button")
	}
	// The viewer's own session posting the check, as a crafted request would.
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/api/admin/plugins/updates/check", {method: "POST", credentials: "same-origin",
		headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if status != 403 {
		t.Fatalf("viewer's check POST = %d, want 403", status)
	}
}

var digits = regexp.MustCompile(`(?:(\d+) min )?(\d+)\s*s\b`)

// secondsIn reads a wait worded as "45 s" or "1 min 53 s".
func secondsIn(s string) int {
	m := digits.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	mins, _ := strconv.Atoi(m[1])
	n, _ := strconv.Atoi(m[2])
	return 60*mins + n
}
