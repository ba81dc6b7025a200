package views

import (
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// ApprovalProps is the detail page's approval section (docs/policy.md
// "Approvals"): what awaits an admin's approval, the form that approves
// it, and the approvals standing.
type ApprovalProps struct {
	// Site is the registered site whose component it is; "": the local
	// site.
	Site string
	Code string
	// CanManage shows the form.
	CanManage bool
	// Ask is what awaits an approval; nil: nothing does.
	Ask *readmodel.ApprovalAsk
	// Standing are the component's approvals, newest first.
	Standing []ApprovalRow
	// Form refills the form the server refused, with why.
	Form ApproveForm
	// Notice says what the last approval did (the flash).
	Notice string
}

// Shown reports whether the section has anything to say.
func (p ApprovalProps) Shown() bool {
	return p.Ask != nil || len(p.Standing) > 0 || p.Notice != "" || p.Form.Error != ""
}

// ApprovalRow is one standing approval.
type ApprovalRow struct {
	Version, Digest, Reason, By string
	FromManifest                bool
	At                          time.Time
}

// ApproveForm refills an approval form the server refused.
type ApproveForm struct {
	Version, Reason string
	// Error says what to correct, in plain words; "" none.
	Error string
}

// ComponentApprovePath is where an admin POSTs to approve what a version
// of site's component code brings ("": the local site's).
func ComponentApprovePath(site, code string) string {
	return SiteComponentPath(site, code) + "/approve"
}
