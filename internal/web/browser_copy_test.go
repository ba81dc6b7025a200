package web_test

import (
	"context"
	"regexp"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// The update command's field is there without JavaScript (its text
// selectable); with app.js its copy button shows, and a click puts the
// command on the clipboard.
func TestBrowserCopiesTheUpdateCommand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil || res.Status != updatecheck.CompletedWithFailures {
		t.Fatalf("check: %+v %v", res, err)
	}
	page := b.login("admin@example.test").do("GET", "/admin/plugins/blog", "", "", nil)
	want := regexp.MustCompile(`id="update-command" class="code" readonly value="([^"]+)"`).FindStringSubmatch(page.body)
	if want == nil || !regexp.MustCompile(`data-copy="update-command" hidden`).MatchString(page.body) {
		t.Fatalf("the page, as sent, has no update command field with a hidden copy button:\n%s", page.body)
	}

	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	grant := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := cdp.Call(ctx, tg, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: b.server.URL,
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err := chromedp.Do(ctx, grant,
		chromedp.Navigate(b.server.URL+"/admin/plugins/blog"),
		chromedp.WaitVisible(chromedp.CSS(`button[data-copy="update-command"]`)),
		chromedp.Click(chromedp.CSS(`button[data-copy="update-command"]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "update-command", regexp.MustCompile(`Copied`))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil || got != want[1] {
		t.Errorf("the clipboard holds %q (%v), want %q", got, err, want[1])
	}
}
