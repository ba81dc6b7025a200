package web_test

import (
	"strings"
	"testing"
)

// A change of a source's trusted keys (written by the check, action
// source.trust) is in the audit log under its own kind, in words, with the
// old and new fingerprints and statement versions; the CSV carries its
// JSON.
func TestAuditLogListsTrustChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	b.db.MustExec(t, `INSERT INTO audit_log (action, detail) VALUES ('source.trust', $1::jsonb)`,
		`{"source": "https://acme.example/updates.json", "reason": "key statement 1 endorsed by the keys trusted before",
		  "old_keys": ["ab12cd34…ef01"], "old_threshold": 1, "old_version": 0,
		  "new_keys": ["0a1b2c3d…4e5f", "99887766…5544"], "new_threshold": 2, "new_version": 1}`)

	page := admin.do("GET", "/admin/audit?kind=trust", "", "", nil)
	wantStatus(t, "audit, trust", page, 200)
	if n := strings.Count(page.body, `data-testid="audit-row"`); n != 1 || !strings.Contains(page.body, `data-kind="trust" data-action="source.trust"`) {
		t.Fatalf("the trust filter lists %d rows:\n%s", n, page.body)
	}
	for _, want := range []string{
		"Trusted keys of an update source changed",
		"https://acme.example/updates.json: key ab12cd34…ef01 (statement 0) → 2 of keys 0a1b2c3d…4e5f, 99887766…5544 (statement 1): key statement 1 endorsed by the keys trusted before",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the audit log does not say %q", want)
		}
	}
	csv := admin.do("GET", "/admin/audit.csv?kind=trust", "", "", nil)
	if !strings.Contains(csv.body, "source.trust") || !strings.Contains(csv.body, `""old_keys"": [""ab12cd34…ef01""]`) {
		t.Errorf("CSV:\n%s", csv.body)
	}
}
