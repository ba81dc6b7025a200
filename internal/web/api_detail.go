package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// detailJSON is GET /api/admin/plugins/{code}: the component as its page
// shows it, read from the same catalog.Detail.
type detailJSON struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	Installed string `json:"installed"`
	// Evaluated: the facts below come from a result for the installed
	// versions; false: nothing is known yet.
	Evaluated       bool    `json:"evaluated"`
	Latest          *string `json:"latest"`
	UpdateVersion   *string `json:"update_version"`
	UpdateAvailable bool    `json:"update_available"`
	Security        bool    `json:"security"`
	Vulnerable      bool    `json:"vulnerable"`
	VulnerableNoFix bool    `json:"vulnerable_no_fix"`
	NeedsNewerCore  bool    `json:"needs_newer_core"`
	// SecurityRelease is the newest security release (installable: the
	// installed core runs it), BlockedUpdate the newest release the
	// installed core cannot run; null: none.
	SecurityRelease *releaseJSON `json:"security_release"`
	BlockedUpdate   *releaseJSON `json:"blocked_update"`
	CoreInstalled   *string      `json:"core_installed"`
	Stale           bool         `json:"stale"`
	SecuritySince   *time.Time   `json:"security_since"`
	EvalError       *string      `json:"eval_error"`
	// SourceKind and Package are as in the catalog's items: the source's
	// kind and the npm package; null: no source, or not npm.
	SourceKind *string `json:"source_kind"`
	Package    *string `json:"package"`
	// Deprecated, ProvenanceLost (the read model's, as the catalog's
	// items have them) and UpdateCommand; null: none.
	Deprecated     *string `json:"deprecated"`
	ProvenanceLost *string `json:"provenance_lost"`
	UpdateCommand  *string `json:"update_command"`
	// FixVersion, FixCommand: as the catalog's items; FixAdvisories the
	// open advisories it clears (empty: none).
	FixVersion    *string  `json:"fix_version"`
	FixCommand    *string  `json:"fix_command"`
	FixAdvisories []string `json:"fix_advisories"`
	// Registry is what the npm registry said of the package; null: not an
	// npm source, or not read yet.
	Registry *readmodel.RegistryFacts `json:"registry"`
	// Source is the update source's facts; null: the component has none.
	Source     *sourceFactsJSON `json:"source"`
	Releases   []releaseJSON    `json:"releases"`
	Advisories []advisoryJSON   `json:"advisories"`
	// Withdrawn advisories whose range holds the installed version: they
	// do not count.
	Withdrawn []apiAdvisory `json:"withdrawn"`
	// Dependencies counts the package instances the component brings into
	// the installed tree; nil while no tree was read (not checked).
	Dependencies *int `json:"dependencies"`
	// DependencyCounts counts what in them needs attention, and
	// DependencyFindings lists it, each with its path and fix; null and
	// empty while no tree was read.
	DependencyCounts   *readmodel.DependencyCounts   `json:"dependency_counts"`
	DependencyFindings []readmodel.DependencyFinding `json:"dependency_findings"`
	// The policy and what it makes of the releases (api_detail_policy.go).
	detailPolicyJSON
}

// releaseJSON is one release of the stored evaluation.
type releaseJSON struct {
	Version      string     `json:"version"`
	Released     *time.Time `json:"released"`
	RequiresCore *string    `json:"requires_core"`
	Security     bool       `json:"security"`
	Severity     *string    `json:"severity"`
	Summary      *string    `json:"summary"`
	URL          *string    `json:"url"`
	Installable  bool       `json:"installable"`
}

// sourceFactsJSON is what the detail page says of the component's source.
type sourceFactsJSON struct {
	URL     string `json:"url"`
	Offline bool   `json:"offline"`
	// PinnedKey is the pin's canonical text (section 1 of design.md);
	// null: the source is not pinned.
	PinnedKey         *string    `json:"pinned_key"`
	LastSuccessAt     *time.Time `json:"last_success_at"`
	LastAttemptAt     *time.Time `json:"last_attempt_at"`
	DocumentExpiresAt *time.Time `json:"document_expires_at"`
	Failing           bool       `json:"failing"`
	LastError         *string    `json:"last_error"`
	LastErrorKind     *string    `json:"last_error_kind"`
	// Problem words the failure as the pages do; null: no failure.
	Problem *string `json:"problem"`
}

// advisoryJSON is an advisory affecting the installed version (the
// catalog's members) and where its dismissal stands.
type advisoryJSON struct {
	apiAdvisory
	// Dismissed: a dismissal is in force; the advisory does not count.
	Dismissed bool           `json:"dismissed"`
	Dismissal *dismissalJSON `json:"dismissal"`
}

// dismissalJSON is a standing dismissal, in force or not.
type dismissalJSON struct {
	By        *string    `json:"by"`
	At        time.Time  `json:"at"`
	Reason    string     `json:"reason"`
	ExpiresAt *time.Time `json:"expires_at"`
	InForce   bool       `json:"in_force"`
	Expired   bool       `json:"expired"`
	// FromManifest: the manifest declares it; the AdminCP may neither end
	// nor replace it.
	FromManifest bool `json:"from_manifest"`
	// Changes: how the advisory differs from what was dismissed (the
	// reason a dismissal that has not expired is not in force).
	Changes []changeJSON `json:"changes"`
}

type changeJSON struct {
	Member string  `json:"member"`
	From   *string `json:"from"`
	To     *string `json:"to"`
}

func (s *Server) apiDetail(c echo.Context) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	d, err := s.reads.SiteDetail(c.Request().Context(), siteOf(c).ID, code)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, views.UnknownComponentText(code)).WithInternal(err)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, detailBody(d))
}

func detailBody(d catalog.Detail) detailJSON {
	out := detailJSON{
		Code: d.Code, Name: d.Name, Installed: d.Installed, Evaluated: d.Evaluated, Latest: opt(d.Latest),
		UpdateAvailable: d.UpdateAvailable, Security: d.Security, Vulnerable: d.Vulnerable, VulnerableNoFix: d.VulnerableNoFix,
		NeedsNewerCore: d.NeedsNewerCore, CoreInstalled: opt(d.CoreVersion), Stale: d.Stale, SecuritySince: d.SecuritySince,
		EvalError: opt(d.EvalError), Releases: []releaseJSON{}, Advisories: []advisoryJSON{}, Withdrawn: []apiAdvisory{},
		Package: opt(readmodel.PackageOf(d.SourceURL)), UpdateCommand: opt(d.UpdateCommand),
		Deprecated: opt(d.Deprecated), ProvenanceLost: opt(d.ProvenanceLost),
		FixCommand: opt(d.FixCommand), FixAdvisories: append([]string{}, d.FixIDs...),
	}
	out.FixVersion = opt(d.FixVersion)
	out.Dependencies, out.DependencyFindings = d.Dependencies, append([]readmodel.DependencyFinding{}, d.DependencyFindings...)
	if d.Dependencies != nil {
		c := d.DependencyCounts
		out.DependencyCounts = &c
	}
	if d.SourceURL != "" {
		out.SourceKind = opt(string(readmodel.SourceKindOf(d.SourceURL)))
	}
	if d.Registry != nil {
		r := *d.Registry
		if r.Versions == nil {
			r.Versions = []readmodel.RegistryVersion{}
		}
		out.Registry = &r
	}
	for _, w := range d.Withdrawn {
		out.Withdrawn = append(out.Withdrawn, advisoryFacts(w))
	}
	if d.Update != nil {
		out.UpdateVersion = &d.Update.Version
	}
	if r := d.SecurityRelease; r != nil {
		v := releaseBody(*r, !d.SecurityNeedsNewerCore)
		out.SecurityRelease = &v
	}
	if r := d.BlockedUpdate; r != nil {
		v := releaseBody(*r, false)
		out.BlockedUpdate = &v
	}
	if d.SourceURL != "" {
		src := &sourceFactsJSON{URL: d.SourceURL, Offline: readmodel.SourceKindOf(d.SourceURL) == readmodel.SourceOffline, PinnedKey: opt(d.PinnedKey),
			LastSuccessAt: d.LastSuccessAt, LastAttemptAt: d.LastAttemptAt, DocumentExpiresAt: d.ExpiresAt,
			Failing: d.SourceFailing, LastError: opt(d.LastError), LastErrorKind: opt(d.LastErrorKind)}
		if d.LastError != "" {
			p := readmodel.ProblemSentence(d.LastErrorKind, d.LastErrorArgs)
			src.Problem = &p
		}
		out.Source = src
	}
	for _, r := range d.Releases {
		out.Releases = append(out.Releases, releaseBody(r.Release, r.Installable))
	}
	for _, a := range d.Advisories {
		out.Advisories = append(out.Advisories, advisoryBody(a))
	}
	out.detailPolicyJSON = detailPolicyBody(d)
	return out
}

func releaseBody(r release.Release, installable bool) releaseJSON {
	out := releaseJSON{Version: r.Version, RequiresCore: opt(r.RequiresCore), Security: r.Security, Severity: opt(r.Severity),
		Summary: opt(r.Summary), URL: opt(r.URL), Installable: installable}
	if !r.Released.IsZero() {
		out.Released = &r.Released
	}
	return out
}

func advisoryBody(a catalog.AdvisoryState) advisoryJSON {
	out := advisoryJSON{apiAdvisory: advisoryFacts(a.AdvisoryMatch), Dismissed: a.Dismissed}
	if d := a.Dismissal; d != nil {
		out.Dismissal = dismissalBody(*d)
		for _, ch := range a.Changes {
			out.Dismissal.Changes = append(out.Dismissal.Changes, changeJSON{Member: ch.Member, From: opt(ch.From), To: opt(ch.To)})
		}
	}
	return out
}

func dismissalBody(d store.Dismissal) *dismissalJSON {
	return &dismissalJSON{By: opt(d.By), At: d.At, Reason: d.Reason, ExpiresAt: d.ExpiresAt, InForce: d.InForce,
		Expired: d.Expired, FromManifest: d.FromManifest, Changes: []changeJSON{}}
}
