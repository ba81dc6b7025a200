package views

import "net/url"

// A registered site's own update policy on its overview (docs/design.md
// "Many sites", docs/policy.md): said in words to every viewer, set by an
// admin's form.

// SitePolicyPath is where the policy form of a registered site posts.
func SitePolicyPath(name string) string {
	return PathAdminSites + "/" + url.PathEscape(name) + "/policy"
}

// SitePolicyProps is the policy section of a registered site's overview.
type SitePolicyProps struct {
	// Text is the policy in words (PolicyText).
	Text string
	// Form is the policy's members for an admin's form (nil: no form, a
	// viewer's page).
	Form *SitePolicyForm
	// Notice is the form's answer; Error its refusal, in the manifest
	// parser's words (the form refilled with what was sent).
	Notice, Error string
}

// SitePolicyForm is a policy as the form holds it: the tier (all, minor,
// patch, security), the soak and the hold as typed, and whether install
// scripts and outside sources await approval.
type SitePolicyForm struct {
	Offer, Soak, Hold string
	Approve           bool
}

// sitePolicyTiers are the form's tiers, in the order the select lists
// them.
var sitePolicyTiers = []string{"all", "minor", "patch", "security"}
