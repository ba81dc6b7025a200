package readmodel

import "strconv"

// ApprovalRefusal is why an approval of what an update brings is refused
// (updatecheck.ApprovalRefusalOf), worded by ApprovalRefusalText for the
// page, the API and the command line alike.
type ApprovalRefusal string

// The refusals.
const (
	ApprovalReasonRequired ApprovalRefusal = "reason_required"
	ApprovalReasonTooLong  ApprovalRefusal = "reason_too_long"
	// ApprovalNothing: the version brings no install script and no source
	// outside the registry over the installed one (or its manifests are
	// not known).
	ApprovalNothing ApprovalRefusal = "nothing"
	// ApprovalNotNpm: the component's source is not an npm package.
	ApprovalNotNpm ApprovalRefusal = "not_npm"
)

// ApprovalRefusalText words r for version ("" for a refusal it does not
// know).
func ApprovalRefusalText(r ApprovalRefusal, version string, maxReason int) string {
	v := "“" + version + "”"
	switch r {
	case ApprovalReasonRequired:
		return "Give a reason for approving what this version brings: it is shown with the approval and kept in the audit log."
	case ApprovalReasonTooLong:
		return "The reason is too long: keep it to " + strconv.Itoa(maxReason) + " characters."
	case ApprovalNothing:
		return v + " brings no install script and no source outside the registry over the installed version, as its package document says now: there is nothing to approve."
	case ApprovalNotNpm:
		return "Only an npm package's updates await an approval of what they bring."
	}
	return ""
}

// ApprovalAskText says what awaits an admin's approval, as the detail
// page and the API say it: "1.0.2 is held until an admin approves what it
// brings", or, for a security fix, "1.0.2 is a security release: it is
// offered all the same, and awaits an admin's approval of what it brings".
func ApprovalAskText(a ApprovalAsk) string {
	if a.Offered {
		return a.Version + " is a security release: it is offered all the same, and awaits an admin's approval of what it brings"
	}
	return a.Version + " is held until an admin approves what it brings"
}
