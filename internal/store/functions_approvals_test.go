package store_test

import (
	"strings"
	"testing"
)

// upcheck_approvals_of: one line "VERSION DIGEST" per approval of the
// site's component, in byte order whatever the order of insertion, ” for
// none, and another component's approvals never, nor another site's
// component of the same code.
func testApprovalsOf(t *testing.T, f *fdb) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	if got := f.text(t, `SELECT upcheck_approvals_of(1, 'blog')`); got != "" {
		t.Errorf("no approvals: %q, want ''", got)
	}
	for _, row := range [][2]string{{"1.10.0", a}, {"1.9.0", b}, {"1.9.0", a}} {
		f.exec(t, `INSERT INTO component_approvals (code, version, digest, reason, actor) VALUES ('blog', $1, $2, 'reviewed', 'ops')`, row[0], row[1])
	}
	f.exec(t, `INSERT INTO component_approvals (code, version, digest, reason, actor) VALUES ('forms', '1.0.0', $1, 'reviewed', 'ops')`, a)
	f.exec(t, `INSERT INTO sites (name, token_hash) VALUES ('other', sha256('t'))`)
	f.exec(t, `INSERT INTO component_approvals (site_id, code, version, digest, reason, actor)
		VALUES ((SELECT id FROM sites WHERE name = 'other'), 'blog', '2.0.0', $1, 'reviewed', 'ops')`, a)
	want := "1.10.0 " + a + "\n1.9.0 " + a + "\n1.9.0 " + b
	if got := f.text(t, `SELECT upcheck_approvals_of(1, 'blog')`); got != want {
		t.Errorf("approvals of blog:\n%s\nwant\n%s", got, want)
	}
	if got := f.text(t, `SELECT upcheck_approvals_of((SELECT id FROM sites WHERE name = 'other'), 'blog')`); got != "2.0.0 "+a {
		t.Errorf("approvals of the other site's blog: %q, want its own", got)
	}
}
