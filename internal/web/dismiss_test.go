package web_test

import (
	"net/http"
	"net/url"
	"testing"
)

// Advisory ids are the publisher's: one with a slash (GHSA/2026/1) or a
// percent sign is dismissed and restored under its own name, never under
// its escaped form.
func TestDismissAdvisoryIDsThatNeedEscaping(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	form := "csrf_token=" + url.QueryEscape(admin.csrf)
	for _, id := range []string{"GHSA/2026/1", "ACME%2026", "plain-1"} {
		path := "/admin/plugins/gallery/advisories/" + url.PathEscape(id)
		wantStatus(t, "dismiss "+id, admin.do("POST", path+"/dismiss", form, "application/x-www-form-urlencoded", nil), http.StatusSeeOther)
		var stored string
		b.db.QueryRow(t, "SELECT advisory_id FROM advisory_dismissals WHERE component_code = 'gallery' AND advisory_id = $1", id).Scan(&stored)
		wantStatus(t, "undismiss "+id, admin.do("POST", path+"/undismiss", form, "application/x-www-form-urlencoded", nil), http.StatusSeeOther)
		var left int
		b.db.QueryRow(t, "SELECT count(*) FROM advisory_dismissals WHERE component_code = 'gallery'").Scan(&left)
		if left != 0 {
			t.Fatalf("%d dismissals left after restoring %q", left, id)
		}
	}
}
