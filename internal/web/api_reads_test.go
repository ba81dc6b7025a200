package web_test

import (
	"strings"
	"testing"
)

// The check history as JSON: newest first, paged, refusals included; 400
// in words for a page that is not one.
func TestAPIHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	wantStatus(t, "check in the cooldown", admin.postCheck(true), 429)

	wantError(t, "anonymous", b.anonymous().do("GET", "/api/admin/history", "", "", nil), 401, "authentication required")
	type page struct {
		Runs []struct {
			ID      int64   `json:"id"`
			Status  string  `json:"status"`
			Trigger string  `json:"trigger"`
			Actor   *string `json:"actor"`
			Fetched int     `json:"fetched"`
			Failed  int     `json:"failed"`
			Repeats int     `json:"repeats"`
		} `json:"runs"`
		Page     int  `json:"page"`
		PerPage  int  `json:"per_page"`
		NextPage *int `json:"next_page"`
	}
	all := decodeJSON[page](t, viewer.do("GET", "/api/admin/history", "", "", nil))
	if len(all.Runs) != 2 || all.PerPage != 50 || all.NextPage != nil ||
		all.Runs[0].Status != "cooldown" || all.Runs[1].Status != "completed_with_failures" ||
		all.Runs[1].Fetched != 3 || all.Runs[1].Failed != 1 || all.Runs[1].Trigger != "manual" ||
		all.Runs[1].Actor == nil || *all.Runs[1].Actor != "admin@example.test" || all.Runs[1].Repeats != 1 {
		t.Fatalf("history = %+v", all)
	}
	first := decodeJSON[page](t, viewer.do("GET", "/api/admin/history?per_page=1", "", "", nil))
	if len(first.Runs) != 1 || first.Runs[0].ID != all.Runs[0].ID || first.NextPage == nil || *first.NextPage != 2 {
		t.Errorf("page 1 of 1 row = %+v", first)
	}
	second := decodeJSON[page](t, b.anonymous().do("GET", "/api/admin/history?per_page=1&page=2", "", "", b.bearer("viewer@example.test")))
	if len(second.Runs) != 1 || second.Runs[0].ID != all.Runs[1].ID || second.NextPage != nil || second.Page != 2 {
		t.Errorf("page 2 of 1 row = %+v", second)
	}
	if past := decodeJSON[page](t, viewer.do("GET", "/api/admin/history?per_page=1&page=3", "", "", nil)); len(past.Runs) != 0 || past.NextPage != nil {
		t.Errorf("past the last page = %+v", past)
	}
	wantError(t, "per_page 0", viewer.do("GET", "/api/admin/history?per_page=0", "", "", nil), 400, "per_page must be a number from 1 to 200")
	wantError(t, "page x", viewer.do("GET", "/api/admin/history?page=x", "", "", nil), 400, "page must be a number from 1")
	wantError(t, "past what the history keeps", viewer.do("GET", "/api/admin/history?per_page=200&page=11", "", "", nil), 400, "newest 2000 rows")
}

// Sources with their health and trust, failing ones first, as Source
// health shows them.
func TestAPISources(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)

	wantError(t, "anonymous", b.anonymous().do("GET", "/api/admin/sources", "", "", nil), 401, "authentication required")
	type source struct {
		URL            string  `json:"url"`
		Components     int     `json:"components"`
		Failing        bool    `json:"failing"`
		LastErrorKind  *string `json:"last_error_kind"`
		Problem        *string `json:"problem"`
		SignatureState string  `json:"signature_state"`
		Trust          struct {
			Pin         *string  `json:"pin"`
			TrustedKeys int      `json:"trusted_keys"`
			Sequence    *int64   `json:"sequence"`
			VerifiedBy  []string `json:"verified_by"`
		} `json:"trust"`
	}
	r := viewer.do("GET", "/api/admin/sources", "", "", nil)
	wantStatus(t, "viewer", r, 200)
	list := decodeJSON[struct{ Sources []source }](t, r).Sources
	if len(list) != 4 {
		t.Fatalf("%d sources, want the demo's 4: %s", len(list), r.body)
	}
	if s := list[0]; !strings.HasSuffix(s.URL, "/broken.json") || !s.Failing || s.LastErrorKind == nil || *s.LastErrorKind != "http_status" ||
		s.Problem == nil || *s.Problem == "" {
		t.Errorf("first source = %+v; want the failing one, its kind and its words", s)
	}
	for _, s := range list {
		switch {
		case strings.HasSuffix(s.URL, "/signed.json"):
			if s.SignatureState != "verified" || s.Trust.Pin == nil || s.Trust.TrustedKeys != 1 || len(s.Trust.VerifiedBy) != 1 || s.Trust.Sequence == nil {
				t.Errorf("signed source = %+v; want verified under its pin", s)
			}
		case strings.HasSuffix(s.URL, "/acme.json"):
			if s.Components != 3 || s.Failing || s.Trust.Pin != nil || s.SignatureState != "unsigned" || s.Problem != nil {
				t.Errorf("acme source = %+v; want 3 components, unsigned, healthy", s)
			}
		}
	}
}

// The audit log as JSON: admins only (audit.can_view), the page's kind
// filter and paging.
func TestAPIAudit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	wantStatus(t, "dismiss", admin.sendJSON("POST", galleryDismissal, map[string]string{"reason": "audited", "expires": "2099-01-31"}, true, nil), 201)

	wantError(t, "anonymous", b.anonymous().do("GET", "/api/admin/audit", "", "", nil), 401, "authentication required")
	// Tokens first: creating one is audited too.
	viewerToken, adminToken := b.bearer("viewer@example.test"), b.bearer("admin@example.test")
	wantError(t, "viewer", viewer.do("GET", "/api/admin/audit", "", "", nil), 403, "forbidden")
	wantStatus(t, "viewer token", b.anonymous().do("GET", "/api/admin/audit", "", "", viewerToken), 403)

	type entry struct {
		Kind      string         `json:"kind"`
		Action    string         `json:"action"`
		Actor     *string        `json:"actor"`
		Component *string        `json:"component"`
		Reason    *string        `json:"reason"`
		ExpiresAt *string        `json:"expires_at"`
		Status    *string        `json:"status"`
		Detail    map[string]any `json:"detail"`
	}
	type log struct {
		Entries []entry `json:"entries"`
		Total   int     `json:"total"`
		Kind    *string `json:"kind"`
		PerPage int     `json:"per_page"`
	}
	all := decodeJSON[log](t, admin.do("GET", "/api/admin/audit", "", "", nil))
	if all.Total < 2 || len(all.Entries) != all.Total || all.Kind != nil || all.PerPage != 50 {
		t.Fatalf("audit log = %+v", all)
	}
	d := decodeJSON[log](t, admin.do("GET", "/api/admin/audit?kind=dismissal", "", "", nil))
	if d.Total != 1 || len(d.Entries) != 1 || d.Kind == nil || *d.Kind != "dismissal" {
		t.Fatalf("dismissals = %+v", d)
	}
	if e := d.Entries[0]; e.Action != "advisory.dismiss" || e.Actor == nil || *e.Actor != "admin@example.test" ||
		e.Component == nil || *e.Component != "gallery" || e.Reason == nil || *e.Reason != "audited" ||
		e.ExpiresAt == nil || *e.ExpiresAt != "2099-02-01T00:00:00Z" {
		t.Errorf("dismissal entry = %+v", e)
	}
	c := decodeJSON[log](t, b.anonymous().do("GET", "/api/admin/audit?kind=check&per_page=1", "", "", adminToken))
	if c.Total != 1 || len(c.Entries) != 1 || c.Entries[0].Kind != "check" || c.Entries[0].Status == nil ||
		*c.Entries[0].Status != "completed_with_failures" || c.Entries[0].Detail["fetched"] != float64(3) {
		t.Errorf("checks = %+v", c)
	}
	if p := decodeJSON[log](t, admin.do("GET", "/api/admin/audit?per_page=1&page=2", "", "", nil)); len(p.Entries) != 1 || p.Total != all.Total {
		t.Errorf("page 2 of 1 entry = %+v", p)
	}
	wantError(t, "unknown kind", admin.do("GET", "/api/admin/audit?kind=bogus", "", "", nil), 400, "Unknown kind")
	wantError(t, "per_page too large", admin.do("GET", "/api/admin/audit?per_page=501", "", "", nil), 400, "per_page must be a number from 1 to 500")
}
