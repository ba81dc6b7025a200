package release

import (
	"github.com/upcheck/upcheck/internal/npmver"

	"slices"
	"time"

	"github.com/Masterminds/semver/v3"
)

// CoreCode is the component code of the core. Its releases are evaluated
// without their requires_core: the core is what would be updated, so the
// installed core cannot be what blocks it.
const CoreCode = "core"

// Evaluation is what an update document says about one installed
// component. It is computed from the stored document alone, so it can be
// recomputed whenever an installed version changes.
//
// Pre-releases are left out of Latest, Update, Security and BlockedUpdate
// unless the installed version is itself a pre-release: a site on stable
// releases is not offered betas, a site testing a beta is offered the next
// beta. Advisories are matched against the installed version whatever it is.
type Evaluation struct {
	// Missing means the document has no package for the component: nothing
	// is known, which is not the same as "up to date".
	Missing bool `json:"missing"`
	// Latest is the newest release, whether or not it is installable.
	Latest *Release `json:"latest"`
	// UpdateAvailable is Update != nil, spelled out for templates and JSON.
	UpdateAvailable bool `json:"update_available"`
	// Update is the newest release greater than the installed version that
	// the installed core satisfies.
	Update *Release `json:"update"`
	// Security means some release greater than the installed version is a
	// security release, installable or not.
	Security bool `json:"security"`
	// SecurityRelease is the newest security release greater than the
	// installed version, installable or not (nil when Security is false).
	SecurityRelease *Release `json:"security_release"`
	// SecurityMarked: the publisher marks a release newer than the
	// installed version as a security release (one the policy does not
	// hold). A release that only clears an advisory makes Security true but
	// not this: the read model counts it while that advisory is open
	// (FixIDs), so that a dismissed advisory makes no security update.
	SecurityMarked bool `json:"security_marked,omitempty"`
	// FixIDs are the advisories (ids) that a release the policy offers
	// (a security release whatever the tier, the soak and a skip; none
	// outside the hold) clears, installable or not: while one of them is
	// open, the component has a security update.
	FixIDs []string `json:"fix_ids,omitempty"`
	// Fix is the oldest release the policy offers and the installed core
	// runs that clears every advisory such a release clears: the smallest
	// way out ("update to 14.1.1 — fixes GHSA-…"); nil when no release
	// clears one.
	Fix *Release `json:"fix,omitempty"`
	// SecurityNeedsNewerCore means the newest security release is newer than
	// Update (or there is no Update): installing what is installable does
	// not bring every security fix, a newer core is needed first.
	SecurityNeedsNewerCore bool `json:"security_needs_newer_core"`
	// NeedsNewerCore means a release newer than Update (or, without an
	// Update, newer than the installed version) requires a core the
	// installed one does not satisfy. A blocked release older than Update is
	// not counted: Update supersedes it.
	NeedsNewerCore bool `json:"needs_newer_core"`
	// BlockedUpdate is the newest such release; its RequiresCore says which
	// core it needs.
	BlockedUpdate *Release `json:"blocked_update"`
	// Advisories affect the installed version, in document order, whether
	// or not an admin dismissed them: dismissals are applied when results
	// are read, so that a dismissal shows at once and no evaluation can
	// undo it. Never nil.
	Advisories []AdvisoryMatch `json:"advisories"`
	// Withdrawn lists the withdrawn advisories whose range holds the
	// installed version, in document order: they do not count (not in
	// Advisories, so never vulnerable, open nor notified), but a page may
	// say that they were withdrawn. Nil when none.
	Withdrawn []AdvisoryMatch `json:"withdrawn,omitempty"`
	// Releases lists every release of the package, newest first, with
	// whether the installed core can run it and, for those newer than the
	// installed version, what the policy makes of it (Offer). Never nil.
	Releases []ReleaseStatus `json:"releases"`

	// What the component's policy holds back (Offer, docs/policy.md):
	// the newest release newer than Update that waits for its soak, the
	// newest one outside the policy, the skipped version when the skip
	// hid a release, and when a waiting release soaks next (the result is
	// evaluated again then; nil: no release waits with a date).
	Waiting    *Waiting   `json:"waiting,omitempty"`
	Held       *Held      `json:"held,omitempty"`
	Skipped    string     `json:"skipped,omitempty"`
	NextChange *time.Time `json:"next_change,omitempty"`

	// ProvenanceLost is the release the site would move to when it was
	// published without the provenance the installed version had: a trust
	// downgrade (Offer; "" when nothing is lost, or the source says
	// nothing of provenance). It is stored apart from the evaluation.
	ProvenanceLost string `json:"-"`

	// SecurityVersions are every release newer than the installed version
	// that its publisher marks a security release, weighed as Offer weighs
	// them (pre-releases only for an installed pre-release), oldest first;
	// nil when there is no SecurityRelease (Offer). The exposure clock
	// keeps one first-seen time per version, so a newer security release
	// does not restart the clock of a fix still not installed. It is
	// stored apart from the evaluation.
	SecurityVersions []string `json:"-"`

	// provenance is the package's (Package.Provenance), read by Offer.
	provenance map[string]bool
}

// ReleaseStatus is one release of the package as it applies to the site.
type ReleaseStatus struct {
	Release
	// Installable: the installed core satisfies RequiresCore (always true
	// for the core's own releases).
	Installable bool `json:"installable"`
	// Offer is what the policy makes of a release newer than the installed
	// version ("" for the others), Until when a waiting one soaks, Reason
	// why one is not offered (nil for the offered, superseded and
	// needs_newer_core ones): a kind and its arguments, worded when read.
	Offer  ReleaseOffer `json:"offer,omitempty"`
	Until  *time.Time   `json:"until,omitempty"`
	Reason *Reason      `json:"reason,omitempty"`
	// UnknownCore: its RequiresCore is not a version range (an npm
	// package's peerDependencies may say "workspace:*" or "latest"), so no
	// installed core is known to run it: it is never offered
	// (ReleaseUnknownCore), and no newer core would change that.
	UnknownCore bool `json:"unknown_core,omitempty"`
	// SecurityFix: a security release for this site (Offer's
	// securityFixes): the publisher marks it, or it is the oldest release
	// that fixes an advisory affecting the installed version.
	SecurityFix bool `json:"security_fix,omitempty"`
	// SoakSkipped: the policy's soak would have kept this security fix
	// waiting (ReasonSoaking, ReasonNoReleaseDate, ReasonReleasedLate),
	// and it is offered all the same; SoakSkippedFor are the advisories of
	// the installed version it clears, which justify that (none when only
	// its publisher's mark does: Security).
	SoakSkipped    bool     `json:"soak_skipped,omitempty"`
	SoakSkippedFor []string `json:"soak_skipped_for,omitempty"`
	// AwaitsApproval: the policy's Approve holds what this release brings
	// until an admin approves it (OfferOptions.Unapproved). A plain
	// release is held for it (ReasonAwaitsApproval); a security fix is
	// offered all the same, the approval asked for beside it.
	AwaitsApproval bool `json:"awaits_approval,omitempty"`
}

// AdvisoryMatch is an advisory that affects the installed version.
type AdvisoryMatch struct {
	Advisory
	// NoFix means no release clears it yet: it names no fixed version, and
	// no release newer than the installed one falls outside its range.
	NoFix bool `json:"no_fix"`
	// ClearedBy is the oldest release newer than the installed version
	// (weighed as Offer weighs them) that it does not affect, by its own
	// rules (a range and its fixed version, an OSV record's versions list
	// and range events), "" when none does: the way out, whether or not the
	// policy offers it (Offer sets it).
	ClearedBy string `json:"cleared_by,omitempty"`
	// affects, when weighed, holds the releases it affects (Weigh); an
	// advisory not weighed is judged by FixedIn.
	affects map[string]bool
	weighed bool

	// What the advisory feeds add (docs/feeds.md); the check fills them
	// after Evaluate, which knows only the document.
	//
	// Origins says where the advisory comes from: "publisher" (the update
	// document), "osv" (a feed's OSV record), or both when they share an
	// id or an alias and are one advisory.
	Origins []string `json:"origins,omitempty"`
	// Malicious: an OSV record says the package is malicious (a MAL- id
	// or alias, GitHub's malware advisories).
	Malicious bool `json:"malicious,omitempty"`
	// KnownExploited: the KEV catalogue lists one of its CVE aliases; KEV
	// is that entry.
	KnownExploited bool      `json:"known_exploited,omitempty"`
	KEV            *KEVFacts `json:"kev,omitempty"`
	// EPSS is the probability of exploitation in the next 30 days and its
	// percentile among all scored CVEs (0 to 1), for its CVE alias with
	// the highest score; nil: not scored.
	EPSS *EPSSFacts `json:"epss,omitempty"`
}

// KEVFacts is what the KEV catalogue says of an exploited CVE. Its dates
// are set for US federal agencies: a reference, not a deadline for every
// site.
type KEVFacts struct {
	CVE            string `json:"cve"`
	DateAdded      string `json:"date_added"`         // YYYY-MM-DD
	DueDate        string `json:"due_date,omitempty"` // YYYY-MM-DD
	RequiredAction string `json:"required_action"`
	// Ransomware is knownRansomwareCampaignUse: "Known" or "Unknown".
	Ransomware string `json:"ransomware"`
}

// EPSSFacts is one CVE's EPSS score.
type EPSSFacts struct {
	CVE        string  `json:"cve"`
	Score      float64 `json:"score"`
	Percentile float64 `json:"percentile"`
}

// Evaluate evaluates the component code, installed at version installed on
// a site whose core is at installedCore, against pkg, what a source says of
// it (nil: it says nothing).
//
// An installed or core version that does not parse is an error wrapping
// [ErrInvalid], to be recorded against the component; installedCore is not
// read when code is [CoreCode]. installedCore "" is a site with no core (a
// registered site's lockfile names none): no core holds back any of its
// releases. A package absent from the source (pkg nil) is not an error:
// the Evaluation says Missing.
func Evaluate(pkg *Package, code, installed, installedCore string) (Evaluation, error) {
	inst, err := npmver.Parse(installed)
	if err != nil {
		return Evaluation{}, invalidf(err, "installed version %q of %q is not a semantic version", installed, code)
	}
	isCore := code == CoreCode
	var core *semver.Version
	if !isCore && installedCore != "" {
		core, err = npmver.Parse(installedCore)
		if err != nil {
			return Evaluation{}, invalidf(err, "installed core version %q is not a semantic version (needed to evaluate %q)",
				installedCore, code)
		}
	}

	ev := Evaluation{Advisories: []AdvisoryMatch{}, Releases: []ReleaseStatus{}}
	if pkg == nil {
		ev.Missing = true
		return ev, nil
	}

	ev.provenance = pkg.Provenance
	includePre := inst.Prerelease() != ""
	var latest newest
	for i := range pkg.Releases {
		r := &pkg.Releases[i]
		v, err := r.parsedVersion()
		if err != nil {
			return Evaluation{}, invalidf(err, "releases[%d].version %q of package %q is not a semantic version", i, r.Version, code)
		}
		ok, unknownCore := isCore, false
		if !isCore {
			if ok, err = r.runsOn(core); err != nil {
				// A core range that is not a range (an npm package's
				// "workspace:*", "latest", "npm:@x/core@^2": its author
				// writes it) makes that release not installable, said so;
				// it never stops the evaluation of the others, nor of the
				// advisories.
				ok, unknownCore = false, true
			}
		}
		ev.Releases = append(ev.Releases, ReleaseStatus{Release: *r, Installable: ok, UnknownCore: unknownCore})
		if v.Prerelease() != "" && !includePre {
			continue
		}
		latest.offer(r, v)
	}
	ev.Latest = latest.release()

	for i := range pkg.Advisories {
		a := &pkg.Advisories[i]
		affected, err := a.parsedAffected()
		if err != nil {
			return Evaluation{}, invalidf(err, "advisories[%d].affected of package %q: %v", i, code, err)
		}
		if !affected.Contains(inst) {
			continue
		}
		m := AdvisoryMatch{Advisory: *a, NoFix: a.FixedIn == ""}
		m.Weigh(ev.Releases, func(r *ReleaseStatus) bool {
			v, err := r.parsedVersion()
			return err == nil && affected.Contains(v)
		})
		if !a.Withdrawn.IsZero() {
			ev.Withdrawn = append(ev.Withdrawn, m)
			continue
		}
		ev.Advisories = append(ev.Advisories, m)
	}
	sortNewestFirst(ev.Releases)
	if err := ev.Offer(installed, OfferOptions{}); err != nil {
		return Evaluation{}, err
	}
	return ev, nil
}

// Weigh records which of releases a affects (affects says, for each),
// so that Offer finds the release that clears it (ClearedBy) and the one
// that clears every advisory (Evaluation.Fix) by the advisory's own rules.
func (a *AdvisoryMatch) Weigh(releases []ReleaseStatus, affects func(r *ReleaseStatus) bool) {
	a.weighed, a.affects = true, map[string]bool{}
	for i := range releases {
		if affects(&releases[i]) {
			a.affects[releases[i].Version] = true
		}
	}
}

// AffectAlso makes a affect every release b affects: one advisory of
// two origins (a publisher's and an OSV record's) clears at the release
// both say is clear, the more cautious reading.
func (a *AdvisoryMatch) AffectAlso(b *AdvisoryMatch) {
	if !b.weighed {
		return
	}
	if !a.weighed {
		a.weighed, a.affects = true, map[string]bool{}
	}
	for v := range b.affects {
		a.affects[v] = true
	}
}

// affectsRelease reports whether a affects the release at v. An
// advisory not weighed (read back from a stored evaluation) affects what
// comes before its fixed version, or else before the release that cleared
// it when it was weighed.
func (a *AdvisoryMatch) affectsRelease(r *ReleaseStatus, v *semver.Version) bool {
	if a.weighed {
		return a.affects[r.Version]
	}
	fixed, err := npmver.Parse(a.FixedIn)
	if err != nil {
		if fixed, err = npmver.Parse(a.ClearedBy); err != nil {
			return true
		}
	}
	return v.LessThan(fixed)
}

// newest keeps the greatest release offered to it.
type newest struct {
	r *Release
	v *semver.Version
}

func (n *newest) offer(r *Release, v *semver.Version) {
	if n.v == nil || v.GreaterThan(n.v) {
		n.r, n.v = r, v
	}
}

// release returns a copy, so that an Evaluation never aliases the document.
func (n *newest) release() *Release {
	if n.r == nil {
		return nil
	}
	c := *n.r
	return &c
}

// parsedVersion returns the version parsed by Parse, or parses it for a
// Release built by hand.
func (r *Release) parsedVersion() (*semver.Version, error) {
	if r.version != nil {
		return r.version, nil
	}
	return npmver.Parse(r.Version)
}

// runsOn reports whether the release's requires_core admits core.
func (r *Release) runsOn(core *semver.Version) (bool, error) {
	if core == nil {
		return true, nil // no core
	}
	if r.requiresCore != nil {
		return r.requiresCore.Contains(core), nil
	}
	if r.RequiresCore == "" {
		return true, nil
	}
	rng, err := ParseRange(r.RequiresCore)
	if err != nil {
		return false, err
	}
	return rng.Contains(core), nil
}

// parsedAffected returns the range parsed by Parse, or parses it for an
// Advisory built by hand.
func (a *Advisory) parsedAffected() (Range, error) {
	if a.affected != nil {
		return *a.affected, nil
	}
	return ParseRange(a.Affected)
}

// sortNewestFirst orders releases by version, newest first; versions were
// checked by the loop that built them.
func sortNewestFirst(rs []ReleaseStatus) {
	slices.SortStableFunc(rs, func(a, b ReleaseStatus) int {
		va, _ := a.parsedVersion()
		vb, _ := b.parsedVersion()
		return vb.Compare(va)
	})
}
