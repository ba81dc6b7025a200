package store_test

import (
	"strings"
	"testing"
)

// upcheck_approvals_of: one line "VERSION DIGEST" per approval of the
// component, in byte order whatever the order of insertion, ” for none,
// and another component's approvals never.
func testApprovalsOf(t *testing.T, f *fdb) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	if got := f.text(t, `SELECT upcheck_approvals_of('blog')`); got != "" {
		t.Errorf("no approvals: %q, want ''", got)
	}
	for _, row := range [][2]string{{"1.10.0", a}, {"1.9.0", b}, {"1.9.0", a}} {
		f.exec(t, `INSERT INTO component_approvals (code, version, digest, reason, actor) VALUES ('blog', $1, $2, 'reviewed', 'ops')`, row[0], row[1])
	}
	f.exec(t, `INSERT INTO component_approvals (code, version, digest, reason, actor) VALUES ('forms', '1.0.0', $1, 'reviewed', 'ops')`, a)
	want := "1.10.0 " + a + "\n1.9.0 " + a + "\n1.9.0 " + b
	if got := f.text(t, `SELECT upcheck_approvals_of('blog')`); got != want {
		t.Errorf("approvals of blog:\n%s\nwant\n%s", got, want)
	}
}
