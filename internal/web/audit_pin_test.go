package web_test

import (
	"strings"
	"testing"
)

// A manifest sync that changes the keys pinned for a source (action
// source.pin) is in the audit log with the trust changes, in words: from
// which fingerprints to which, for which components, by the manifest sync.
func TestAuditLogListsPinChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	b.db.MustExec(t, `INSERT INTO audit_log (action, detail) VALUES ('source.pin', $1::jsonb), ('source.pin', $2::jsonb)`,
		`{"source": "https://acme.example/updates.json", "reason": "the manifest pins other keys, for blog, forms",
		  "components": ["blog", "forms"], "old_keys": ["ab12cd34…ef01"], "old_threshold": 1,
		  "new_keys": ["0a1b2c3d…4e5f", "99887766…5544"], "new_threshold": 2, "by": "manifest sync"}`,
		`{"source": "https://shop.example/updates.json", "reason": "the manifest pins keys where it pinned none, for shop",
		  "components": ["shop"], "old_keys": [], "old_threshold": 0,
		  "new_keys": ["ab12cd34…ef01"], "new_threshold": 1, "by": "manifest sync"}`)

	page := admin.do("GET", "/admin/audit?kind=trust", "", "", nil)
	wantStatus(t, "audit, trust", page, 200)
	if n := strings.Count(page.body, `data-kind="trust" data-action="source.pin"`); n != 2 {
		t.Fatalf("the trust filter lists %d pin changes:\n%s", n, page.body)
	}
	for _, want := range []string{
		"Pinned keys of an update source changed",
		"manifest sync",
		"https://acme.example/updates.json: key ab12cd34…ef01 → 2 of keys 0a1b2c3d…4e5f, 99887766…5544: the manifest pins other keys, for blog, forms",
		"https://shop.example/updates.json: no key → key ab12cd34…ef01: the manifest pins keys where it pinned none, for shop",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the audit log does not say %q", want)
		}
	}
	if strings.Contains(page.body, "statement 0") {
		t.Errorf("a pin change is worded as a key statement:\n%s", page.body)
	}
}
