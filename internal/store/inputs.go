package store

import "context"

// What evaluation reads of the components, besides the documents.

// ComponentInput is what evaluating one component needs besides the
// document.
type ComponentInput struct {
	// Site is the site whose component it is (sites.id).
	Site             int64
	Code             string
	InstalledVersion string
	CoreVersion      string
	// Package is the npm package the feeds' advisories are matched by; ""
	// none.
	Package string
	// Policy (components.policy) and Skipped (component_skips.version):
	// the offer's inputs; "" none.
	Policy, Skipped string
	// Approvals are the component's approvals (upcheck_approvals_of: a
	// line "VERSION DIGEST" each, "" none), an input of the offer too.
	Approvals string
}

// Key names the input's component.
func (in ComponentInput) Key() ComponentKey { return ComponentKey{Site: in.Site, Code: in.Code} }

// Unevaluated is a component whose source has a stored document but which
// has no result evaluated from the current inputs.
type Unevaluated struct {
	Site             int64
	Code             string
	InstalledVersion string
	SourceURL        string
	PinnedKey        string
	Package          string
	Policy, Skipped  string
	Approvals        string
}

// ComponentInputsForSource reads the components that use url now, every
// site's, each with its site's installed core, in one statement.
func (e *Executor) ComponentInputsForSource(ctx context.Context, url string) ([]ComponentInput, error) {
	rows, err := e.q.ComponentInputsForSource(ctx, e.dbtx, url)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ComponentInput, len(rows))
	for i, r := range rows {
		out[i] = ComponentInput{Site: r.SiteID, Code: r.Code, InstalledVersion: r.InstalledVersion, CoreVersion: r.CoreVersion, Package: r.Package,
			Policy: r.Policy, Skipped: r.SkippedVersion, Approvals: r.Approvals}
	}
	return out, nil
}
