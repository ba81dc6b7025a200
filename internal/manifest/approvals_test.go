package manifest

import (
	"strings"
	"testing"
)

// The manifest's approvals name a component of it, a version, the digest
// the page gives and a reason; each problem is said once, by its entry.
func TestApprovalProblems(t *testing.T) {
	t.Parallel()
	m := &Manifest{Components: []Component{{Code: "core", Name: "Core", Version: "1.0.0", Source: "npm:core"}},
		Approvals: []Approval{
			{Component: "core", Version: "1.0.1", Digest: strings.Repeat("a", 64), Reason: "reviewed"},
			{Component: "blog", Version: "x", Digest: "ABC", Reason: " "},
			{Component: "core", Version: "1.0.1", Digest: strings.Repeat("a", 64), Reason: "again"},
		}}
	got := strings.Join(m.approvalProblems(), "\n")
	for _, want := range []string{`approvals[1]: component "blog" is not a component of the manifest`,
		`approvals[1]: version "x" is not a semantic version`, `approvals[1]: digest "ABC" is not a SHA-256`,
		`approvals[1]: reason`, `approvals[2]: the same approval as approvals[0]`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "approvals[0]:") {
		t.Errorf("a valid approval has problems:\n%s", got)
	}
}
