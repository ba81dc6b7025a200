// Skips on the detail page: the version a manager skipped (or the
// manifest), and the form that skips the offered plain update
// (docs/policy.md "Skips").

package views

import ()

// SkipProps is the detail page's skip section.
type SkipProps struct {
	// Site is the registered site whose component it is; "": the local
	// site.
	Site string
	Code string
	// CanManage shows the skip form and the unskip button.
	CanManage bool
	// Standing is the component's skip; nil: none.
	Standing *DetailSkip
	// Offer is the offered update the form presets ("" none: the form is
	// shown only to refill a refused one); OfferSecurity: it is a security
	// release for this site, which cannot be skipped.
	Offer         string
	OfferSecurity bool
	// Form refills the skip form the server refused, with why.
	Form SkipForm
	// Notice says what the last skip or unskip did (the flash).
	Notice string
}

// SkipForm refills a skip form the server refused.
type SkipForm struct {
	Version, Reason string
	// Error says what to correct, in plain words; "" none.
	Error string
}

// ComponentSkipPath is where a manager POSTs to skip a version of site's
// component code ("": the local site's).
func ComponentSkipPath(site, code string) string { return SiteComponentPath(site, code) + "/skip" }

// ComponentUnskipPath is where a manager POSTs to end the skip of site's
// component code.
func ComponentUnskipPath(site, code string) string {
	return SiteComponentPath(site, code) + "/unskip"
}

// skipFormShown: a manager may skip the offered plain update, or correct
// a refused form.
func skipFormShown(p SkipProps) bool {
	if !p.CanManage || p.Standing != nil && p.Standing.FromManifest {
		return false
	}
	return p.Form.Error != "" || p.Offer != "" && !p.OfferSecurity
}

// skipErrorSummary heads a refused skip: the error itself when the form
// that would say it is not shown, else a pointer to it, so that the page
// says it once.
func skipErrorSummary(p SkipProps) string {
	if skipFormShown(p) {
		return "The version was not skipped: see why below."
	}
	return "The version was not skipped. " + p.Form.Error
}

// standingSkipText words a standing skip: "2.4.0 is skipped: no release at
// or below it is offered, unless it is a security release."
func standingSkipText(s DetailSkip) string {
	return s.Version + " is skipped: no plain release at or below it is offered; a newer release is, and a security release is offered whatever the skip (the hold still applies)."
}

// skipByText is who skipped: the manifest, a user, the command line, or
// a script.
func skipByText(s DetailSkip) string { return byText(s.By) }
