package manifest

import (
	"fmt"
	"regexp"

	"github.com/upcheck/upcheck/internal/npmver"
)

// Approval approves, as code, what one version of a component brings for
// a policy whose approve holds it (docs/policy.md "Approvals"): Digest is
// the SHA-256 of its install scripts and outside sources as the
// component's page gives it, so a release that brings anything else is
// held again.
type Approval struct {
	// Component is the code of a component of the manifest.
	Component string `json:"component" yaml:"component"`
	// Version is the release approved.
	Version string `json:"version" yaml:"version"`
	// Digest is what it brings, as the page and the API name it.
	Digest string `json:"digest" yaml:"digest"`
	// Reason is why.
	Reason string `json:"reason" yaml:"reason"`
}

// digestForm is a SHA-256 in lower-case hexadecimal.
var digestForm = regexp.MustCompile(`^[0-9a-f]{64}$`)

// approvalProblems words what is wrong with m's approvals, as
// skipProblems.
func (m *Manifest) approvalProblems() []string {
	var problems []string
	add := func(i int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("approvals[%d]: ", i)+fmt.Sprintf(format, args...))
	}
	seen := map[[3]string]int{}
	for i, a := range m.Approvals {
		problems = append(problems, m.componentProblem("approvals", i, a.Component)...)
		if _, err := npmver.Parse(a.Version); err != nil {
			add(i, "version %q is not a semantic version", a.Version)
		}
		if !digestForm.MatchString(a.Digest) {
			add(i, "digest %q is not a SHA-256 in lower-case hexadecimal (the component's page gives it)", a.Digest)
		}
		key := [3]string{a.Component, a.Version, a.Digest}
		if j, dup := seen[key]; dup {
			add(i, "the same approval as approvals[%d]", j)
		} else {
			seen[key] = i
		}
		if p := reasonProblem(a.Reason); p != "" {
			add(i, "%s", p)
		}
	}
	return problems
}
