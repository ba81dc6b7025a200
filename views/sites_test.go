package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Each site shows its name, owner and push in readmodel's words, a stale
// one marked; the local site has no rotate or remove; a viewer sees no
// form and no actions; the push token shows once, when given.
func TestSitesPage(t *testing.T) {
	t.Parallel()
	now := tokensLayout().now()
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	props := SitesProps{Layout: tokensLayout(), CanManage: true, CanAdd: true, NewToken: "ups_secret", NewTokenSite: "acme",
		Sites: []SiteRow{
			{Name: "local", Local: true, CreatedAt: now},
			{Name: "acme", Owner: "Acme Ltd", CreatedAt: now.Add(-30 * 24 * time.Hour), PushedAt: ago(2 * time.Hour)},
			{Name: "quiet", CreatedAt: now.Add(-30 * 24 * time.Hour), PushedAt: ago(9 * 24 * time.Hour), Stale: true},
			{Name: "new", CreatedAt: now},
		}}
	root := doc(t, Sites(props))
	rows := byTestID(root, "site-row")
	want := []string{readmodel.SiteLocalPushText, "last push 2 hours ago", "last push 9 days ago: stale", "never pushed"}
	for i, r := range rows {
		if got := text(byTestID(r, "site-push")[0]); got != want[i] {
			t.Errorf("row %d push %q, want %q", i, got, want[i])
		}
		if acts := byTestID(r, "site-remove"); (i == 0) != (len(acts) == 0) {
			t.Errorf("row %d: %d remove links", i, len(acts))
		}
	}
	if len(rows) != 4 || len(byTestID(root, "site-token")) != 1 || !strings.Contains(text(byTestID(root, "site-token")[0]), "ups_secret") {
		t.Fatalf("%d rows, or the token is not shown", len(rows))
	}
	props.CanManage, props.CanAdd, props.NewToken = false, false, ""
	root = doc(t, Sites(props))
	if len(byTestID(root, "site-form")) != 0 || len(byTestID(root, "site-rotate")) != 0 || len(byTestID(root, "site-token")) != 0 {
		t.Error("a viewer sees the form, the actions or a token")
	}
}

// A user limited to other sites is shown no link to the local site's
// pages and none of its banners; the brand leads to the Sites section.
func TestLayoutWithoutTheLocalSite(t *testing.T) {
	t.Parallel()
	l := tokensLayout()
	l.User.NoLocalSite = true
	out := render(t, Sites(SitesProps{Layout: l}))
	for _, href := range []string{PathDashboard + `"`, PathCatalog, PathPackages, PathHistory, PathSources, PathTokens, PathAudit} {
		if strings.Contains(out, `href="`+href) {
			t.Errorf("a link to %s", href)
		}
	}
	if !strings.Contains(out, `href="`+PathAdminSites+`"`) {
		t.Error("no link to the Sites section")
	}
	// The Notifications section is every principal's: the channels of
	// its sites.
	if !strings.Contains(out, `href="`+PathNotifications+`"`) {
		t.Error("no link to the Notifications section")
	}
}
