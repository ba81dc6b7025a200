package web_test

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

const formType = "application/x-www-form-urlencoded"

// dismissPath is where gallery's advisory (ACME-2026-011, medium,
// <=3.1.0, no fix) is dismissed.
const dismissPath = "/admin/plugins/gallery/advisories/ACME-2026-011/dismiss"

func (c *client) postForm(path string, v url.Values) response {
	c.b.t.Helper()
	v.Set("csrf_token", c.csrf)
	return c.do("POST", path, v.Encode(), formType, nil)
}

// standing counts the standing dismissals.
func (b *bundle) standing() int {
	b.t.Helper()
	var n int
	b.db.QueryRow(b.t, "SELECT count(*) FROM advisory_dismissals WHERE ended_at IS NULL").Scan(&n)
	return n
}

// Advisory ids are the publisher's: one with a slash (GHSA/2026/1) or a
// percent sign is dismissed and restored under its own name, never under
// its escaped form.
func TestDismissAdvisoryIDsThatNeedEscaping(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	for _, id := range []string{"GHSA/2026/1", "ACME%2026", "plain-1"} {
		// The publisher's document names the advisory so: the result lists
		// it under that id.
		b.db.MustExec(t, `UPDATE component_results SET advisories = jsonb_set(advisories, '{0,id}', to_jsonb($1::text)),
			evaluation = jsonb_set(evaluation, '{advisories,0,id}', to_jsonb($1::text)) WHERE code = 'gallery'`, id)
		path := "/admin/plugins/gallery/advisories/" + url.PathEscape(id)
		wantStatus(t, "dismiss "+id, admin.postForm(path+"/dismiss", url.Values{"reason": {"accepted"}}), http.StatusSeeOther)
		var stored string
		b.db.QueryRow(t, "SELECT advisory_id FROM advisory_dismissals WHERE component_code = 'gallery' AND ended_at IS NULL").Scan(&stored)
		if stored != id {
			t.Fatalf("dismissed %q, stored %q", id, stored)
		}
		wantStatus(t, "undismiss "+id, admin.postForm(path+"/undismiss", url.Values{}), http.StatusSeeOther)
		if n := b.standing(); n != 0 {
			t.Fatalf("%d dismissals stand after restoring %q", n, id)
		}
	}
}

// A refused dismiss form comes back as the page (422) with the error in
// plain words beside the form, the form open and refilled, and nothing
// written; the browser's own checks are not relied on.
func TestDismissFormValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	for _, tc := range []struct {
		name    string
		form    url.Values
		error   string
		refills []string
	}{
		{"no reason", url.Values{"reason": {"  \r\n "}, "expires": {"2099-12-31"}}, "Give a reason", []string{`value="2099-12-31"`}},
		{"reason too long", url.Values{"reason": {strings.Repeat("x", 501)}}, "keep it to 500 characters", []string{strings.Repeat("x", 501)}},
		{"not a date", url.Values{"reason": {"a WAF rule blocks it"}, "expires": {"31/12/2099"}}, "is not a date",
			[]string{`value="31/12/2099"`, ">a WAF rule blocks it</textarea>"}},
		{"date passed", url.Values{"reason": {"a WAF rule blocks it"}, "expires": {yesterday}}, "The expiry date has passed", []string{`value="` + yesterday + `"`}},
		{"date too far", url.Values{"reason": {"a WAF rule blocks it"}, "expires": {"9999-12-31"}}, "The expiry date is too far off", []string{`value="9999-12-31"`}},
		{"NUL in the reason", url.Values{"reason": {"a WAF\x00 rule"}}, "control character", nil},
		{"escape in the reason", url.Values{"reason": {"a WAF \x1b[31mrule"}}, "control character", nil},
		{"not UTF-8", url.Values{"reason": {"a WAF \xff rule"}}, "control character", nil},
	} {
		r := admin.postForm(dismissPath, tc.form)
		wantStatus(t, tc.name, r, http.StatusUnprocessableEntity)
		errText := regexp.MustCompile(`data-testid="dismiss-error">([^<]*)<`).FindStringSubmatch(r.body)
		if errText == nil || !strings.Contains(errText[1], tc.error) {
			t.Errorf("%s: error beside the form = %v, want it to say %q", tc.name, errText, tc.error)
		}
		if !strings.Contains(r.body, `data-testid="advisory-dismiss" open`) {
			t.Errorf("%s: the refused form is not open", tc.name)
		}
		for _, want := range tc.refills {
			if !strings.Contains(r.body, want) {
				t.Errorf("%s: the form is not refilled with %q", tc.name, want)
			}
		}
		for _, raw := range []string{"constraint", "violates", "SQLSTATE", "parsing time"} {
			if strings.Contains(r.body, raw) {
				t.Errorf("%s: the page shows a raw error (%q)", tc.name, raw)
			}
		}
	}
	var audits int
	b.db.QueryRow(t, "SELECT count(*) FROM audit_log WHERE action LIKE 'advisory.%'").Scan(&audits)
	if n := b.standing(); n != 0 || audits != 0 {
		t.Fatalf("refused forms wrote %d dismissals and %d audit rows", n, audits)
	}
	// An advisory the component is not affected by: the page says so.
	r := admin.postForm("/admin/plugins/forms/advisories/ACME-2026-011/dismiss", url.Values{"reason": {"x"}})
	wantStatus(t, "advisory of another component", r, http.StatusUnprocessableEntity)
	if !strings.Contains(r.body, "no longer affects the installed version") {
		t.Error("dismissing an advisory that does not affect the component: the page does not say why nothing happened")
	}
	wantStatus(t, "unknown component", admin.postForm("/admin/plugins/nope/advisories/X/dismiss", url.Values{"reason": {"x"}}), 404)
}

// An accepted dismissal shows who, when, why and until when; when it
// expires, or the advisory changes, the advisory counts again and the page
// says why.
func TestDismissalShownAndReopened(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	r := admin.postForm(dismissPath, url.Values{"reason": {"Metadata is stripped by the CDN"}, "expires": {"2099-12-31"}})
	wantStatus(t, "dismiss", r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/admin/plugins/gallery#advisories" {
		t.Fatalf("redirect to %q", loc)
	}
	page := admin.do("GET", "/admin/plugins/gallery", "", "", nil).body
	for _, want := range []string{`data-testid="dismissal-by">admin@example.test<`, `data-testid="dismissal-reason">Metadata is stripped by the CDN<`,
		`data-testid="dismissal-until">the end of 31 Dec 2099 (UTC)<`, ">Dismissed<", `data-testid="advisory-undismiss"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the detail page lacks %s", want)
		}
	}

	// The publisher raised the severity and published a fix.
	b.db.MustExec(t, `UPDATE component_results
		SET advisories = jsonb_set(jsonb_set(advisories, '{0,severity}', '"high"'), '{0,fixed_in}', '"3.1.1"'),
		    evaluation = jsonb_set(jsonb_set(evaluation, '{advisories,0,severity}', '"high"'), '{advisories,0,fixed_in}', '"3.1.1"')
		WHERE code = 'gallery'`)
	page = admin.do("GET", "/admin/plugins/gallery", "", "", nil).body
	reopened := regexp.MustCompile(`data-testid="dismissal-reopened">([^<]*)<`).FindStringSubmatch(page)
	if reopened == nil || !strings.Contains(reopened[1], "severity raised from medium to high") || !strings.Contains(reopened[1], "a fix was published: 3.1.1") {
		t.Fatalf("re-opened advisory: %v, want it to say the severity was raised and a fix published", reopened)
	}
	if !strings.Contains(page, "Dismiss again") {
		t.Error("a re-opened advisory offers no way to dismiss it again")
	}

	// Back as it was, then the expiry passes.
	b.db.MustExec(t, `UPDATE component_results
		SET advisories = advisories #- '{0,fixed_in}' || '[]', evaluation = evaluation #- '{advisories,0,fixed_in}' WHERE code = 'gallery'`)
	b.db.MustExec(t, `UPDATE component_results
		SET advisories = jsonb_set(advisories, '{0,severity}', '"medium"'), evaluation = jsonb_set(evaluation, '{advisories,0,severity}', '"medium"')
		WHERE code = 'gallery'`)
	b.db.MustExec(t, `UPDATE advisory_dismissals SET dismissed_at = '2026-01-02T10:00:00Z', expires_at = '2026-01-10T00:00:00Z'`)
	page = admin.do("GET", "/admin/plugins/gallery", "", "", nil).body
	reopened = regexp.MustCompile(`data-testid="dismissal-reopened">([^<]*)<`).FindStringSubmatch(page)
	if reopened == nil || !strings.Contains(reopened[1], "expired on the end of 9 Jan 2026 (UTC)") {
		t.Fatalf("expired dismissal: %v", reopened)
	}
}

// Viewers can neither dismiss nor read the audit log, which is not in
// their navigation; a dismissal without the CSRF token is refused.
func TestDismissAndAuditPermissions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	viewer, admin := b.login("viewer@example.test"), b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	wantStatus(t, "viewer dismiss", viewer.postForm(dismissPath, url.Values{"reason": {"x"}}), 403)
	wantStatus(t, "admin dismiss without CSRF", admin.do("POST", dismissPath, "reason=x", formType, nil), 403)
	wantStatus(t, "admin dismiss with a wrong CSRF token", admin.do("POST", dismissPath, "reason=x&csrf_token=forged", formType, nil), 403)
	if n := b.standing(); n != 0 {
		t.Fatalf("%d dismissals written by refused requests", n)
	}
	for _, p := range []string{"/admin/audit", "/admin/audit.csv", "/admin/audit?kind=check"} {
		wantStatus(t, "viewer GET "+p, viewer.do("GET", p, "", "", nil), 403)
		wantStatus(t, "admin GET "+p, admin.do("GET", p, "", "", nil), 200)
	}
	if strings.Contains(viewer.do("GET", "/admin", "", "", nil).body, `href="/admin/audit"`) {
		t.Error("the viewer's navigation links to the audit log")
	}
	if !strings.Contains(admin.do("GET", "/admin", "", "", nil).body, `href="/admin/audit"`) {
		t.Error("the admin's navigation does not link to the audit log")
	}
	if strings.Contains(viewer.do("GET", "/admin/plugins/gallery", "", "", nil).body, `data-testid="dismiss-form"`) {
		t.Error("a viewer is offered the dismiss form")
	}
	wantStatus(t, "unknown kind", admin.do("GET", "/admin/audit?kind=bogus", "", "", nil), 400)
}

// The audit log lists dismissals (made, undone) and checks in one list,
// newest first, filtered by kind; the CSV has the same entries, quoted as
// RFC 4180 wants, with formulas defused.
func TestAuditLogAndCSV(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	// Each dismissal replaces the one before; the audit log keeps them all.
	formulas := []string{"+1+2", "-1+2", "@SUM(A1)", "=1+2"}
	for _, f := range formulas {
		wantStatus(t, "dismiss "+f, admin.postForm(dismissPath, url.Values{"reason": {f}}), http.StatusSeeOther)
	}
	reason := "=HYPERLINK(\"http://evil.example\"), \"quoted\"\nsecond line"
	wantStatus(t, "dismiss", admin.postForm(dismissPath, url.Values{"reason": {reason}, "expires": {"2099-12-31"}}), http.StatusSeeOther)
	wantStatus(t, "undismiss", admin.postForm(strings.Replace(dismissPath, "/dismiss", "/undismiss", 1), url.Values{}), http.StatusSeeOther)

	page := admin.do("GET", "/admin/audit", "", "", nil).body
	actions := regexp.MustCompile(`data-testid="audit-row" data-kind="([a-z]+)" data-action="([a-z.]+)"`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, a := range actions {
		got = append(got, a[1]+":"+a[2])
	}
	// user.create rows come from setup's accounts (command line).
	want := "dismissal:advisory.undismiss" + strings.Repeat(" dismissal:advisory.dismiss", 5) + " check:check account:user.create account:user.create"
	if strings.Join(got, " ") != want {
		t.Fatalf("audit rows\n got %v\nwant %s", got, want)
	}
	if !strings.Contains(page, "Dismissed ACME-2026-011 for gallery") || !strings.Contains(page, "Until: the end of 31 Dec 2099 (UTC).") {
		t.Error("the audit log does not word the dismissal with its expiry")
	}
	checks := admin.do("GET", "/admin/audit?kind=check", "", "", nil).body
	if n := strings.Count(checks, `data-testid="audit-row"`); n != 1 || !strings.Contains(checks, `data-kind="check"`) {
		t.Errorf("the check filter lists %d rows", n)
	}

	r := admin.do("GET", "/admin/audit.csv?kind=dismissal", "", "", nil)
	wantStatus(t, "CSV", r, 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("content type %q", ct)
	}
	if cd := r.header.Get("Content-Disposition"); !regexp.MustCompile(`^attachment; filename="upcheck-audit-dismissal-\d{8}T\d{6}Z\.csv"$`).MatchString(cd) {
		t.Errorf("content disposition %q", cd)
	}
	records, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, r.body)
	}
	if len(records) != 7 || strings.Join(records[0], ",") != "time_utc,kind,action,actor,component,advisory,reason,expires_at_utc,trigger,status,detail" {
		t.Fatalf("CSV records %q", records)
	}
	dismissed := records[2]
	if dismissed[2] != "advisory.dismiss" || dismissed[3] != "admin@example.test" || dismissed[4] != "gallery" ||
		dismissed[6] != "'"+reason || dismissed[7] != "2100-01-01T00:00:00Z" {
		t.Fatalf("dismissal record %q; want the reason kept whole, with an apostrophe before its '='", dismissed)
	}
	for i, f := range formulas { // oldest last
		if got := records[6-i][6]; got != "'"+f {
			t.Errorf("reason %q exported as %q, want an apostrophe before it", f, got)
		}
	}
	if undone := records[1]; undone[2] != "advisory.undismiss" || undone[6] != "'"+reason {
		t.Errorf("undismiss record %q", undone)
	}
	if !strings.Contains(r.body, `"'=HYPERLINK(""http://evil.example""), ""quoted""`+"\r\nsecond line\"") {
		t.Errorf("the reason is not quoted as RFC 4180 wants:\n%s", r.body)
	}
	if !strings.HasSuffix(r.body, "\r\n") {
		t.Error("records do not end in CRLF")
	}
	all := admin.do("GET", "/admin/audit.csv", "", "", nil)
	if n := strings.Count(all.body, "\r\n"); n < 12 {
		t.Errorf("the unfiltered CSV has %d lines, want every entry and the header", n)
	}
}

// The catalog page and API show a dismissal at once, in the same second
// as the page read before it (their rendered parts belong to a snapshot,
// and the dismissal makes a new one).
func TestCatalogShowsADismissalAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	galleryVulnerable := func() (page, api bool) {
		t.Helper()
		p := admin.do("GET", "/admin/plugins?q=gallery", "", "", nil)
		a := admin.do("GET", "/api/admin/plugins/updates?q=gallery", "", "", nil)
		if p.status != 200 || a.status != 200 {
			t.Fatalf("catalog: page %d, api %d %s", p.status, a.status, a.body)
		}
		return strings.Contains(p.body, `<span class="badge badge-danger">Vulnerable`), strings.Contains(a.body, `"vulnerable":true`)
	}
	if page, api := galleryVulnerable(); !page || !api {
		t.Fatalf("before the dismissal: vulnerable on the page %v, in the API %v; want both", page, api)
	}
	wantStatus(t, "dismiss", admin.postForm(dismissPath, url.Values{"reason": {"accepted"}}), http.StatusSeeOther)
	if page, api := galleryVulnerable(); page || api {
		t.Fatalf("right after the dismissal: vulnerable on the page %v, in the API %v; want neither", page, api)
	}
}
