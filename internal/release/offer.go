package release

import (
	"slices"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/npmver"
)

// ReleaseOffer is what the site's policy makes of one release newer than
// the installed version (docs/policy.md). Every such release has one, so
// that a page can say of each why it is, or is not, offered.
type ReleaseOffer string

const (
	// ReleaseOffered is the offered update: the newest release that the
	// policy allows, that has soaked and that the installed core runs.
	ReleaseOffered ReleaseOffer = "offered"
	// ReleaseSuperseded is allowed too, but the offered update is newer.
	ReleaseSuperseded ReleaseOffer = "superseded"
	// ReleaseNeedsNewerCore is allowed, but the installed core cannot run it.
	ReleaseNeedsNewerCore ReleaseOffer = "needs_newer_core"
	// ReleaseUnknownCore requires a core its range does not name (not a
	// version range: "workspace:*"): no core is known to run it.
	ReleaseUnknownCore ReleaseOffer = "unknown_core"
	// ReleaseWaiting has not soaked yet (Until), or has no release date to
	// soak from (Until nil).
	ReleaseWaiting ReleaseOffer = "waiting"
	// ReleaseHeld is outside the policy's hold range, or awaits an
	// admin's approval of what it brings (ReasonAwaitsApproval).
	ReleaseHeld ReleaseOffer = "held"
	// ReleaseNotOffered is outside the policy's tier.
	ReleaseNotOffered ReleaseOffer = "not_offered"
	// ReleaseSkipped is a plain release at or below the skipped version.
	ReleaseSkipped ReleaseOffer = "skipped"
)

// OfferOptions are a component's inputs to the offer besides the
// document: its policy, its skipped version ("" none; a plain release at
// or below it is not offered) and the time the soak is judged at (the
// database's clock when the check evaluates).
type OfferOptions struct {
	Policy  Policy
	Skipped string
	Now     time.Time
	// Unapproved, when set, says whether the release version would bring
	// what the policy's Approve holds (an install script, a source
	// outside the registry) without an admin's approval of it: the
	// adapter that reads the package's manifests decides. It is asked of
	// the release that would be offered, and of none when Policy.Approve
	// is unset.
	Unapproved func(version string) bool
}

// Waiting is the newest release newer than the offered update that has
// not soaked yet: offered from Until (nil: it has no release date, and
// waits until its publisher gives one).
type Waiting struct {
	Version string     `json:"version"`
	Until   *time.Time `json:"until"`
}

// Held is the newest release newer than the offered update that the
// policy does not offer, with why (ReasonHeld, ReasonNotOffered or
// ReasonUnknownCore; worded by readmodel.OfferReasonText: "held by the
// policy <3.0.0", "not offered: this site takes security updates only").
type Held struct {
	Version string `json:"version"`
	Reason  Reason `json:"reason"`
}

// securityFixes are the releases newer than inst that fix a security
// problem of it: those the publisher marks security releases, and for each
// advisory affecting inst, the release that clears it (ClearedBy: the
// oldest release weighed that it does not affect; a later feature release
// clears it too, but is not a security release for that). Security
// releases skip the soak and the tier, and cannot be skipped. It sets each
// advisory's ClearedBy and NoFix.
func (ev *Evaluation) securityFixes(inst *semver.Version, includePre bool) map[string]bool {
	fixes := map[string]bool{}
	weighed := func(v *semver.Version) bool {
		return v.GreaterThan(inst) && (v.Prerelease() == "" || includePre)
	}
	for _, r := range ev.Releases {
		if v, err := r.parsedVersion(); err == nil && r.Security && weighed(v) {
			fixes[r.Version] = true
		}
	}
	for i := range ev.Advisories {
		a := &ev.Advisories[i]
		cleared := "" // a.ClearedBy is read by affectsRelease until then
		var firstV *semver.Version
		for j := range ev.Releases {
			r := &ev.Releases[j]
			v, err := r.parsedVersion()
			if err != nil || !weighed(v) || a.affectsRelease(r, v) {
				continue
			}
			if firstV == nil || v.LessThan(firstV) {
				cleared, firstV = r.Version, v
			}
		}
		a.ClearedBy = cleared
		a.NoFix = a.FixedIn == "" && a.ClearedBy == ""
		if a.ClearedBy != "" {
			fixes[a.ClearedBy] = true
		}
	}
	return fixes
}

// Offer decides, from ev's releases and advisories, what is offered under
// opts: Update, Security, BlockedUpdate and the flags that go with them,
// Waiting, Held, Skipped and NextChange, and the Offer of every release
// newer than installed. Evaluate calls it with the zero options (every
// release, at once); the check calls it again with the component's own
// once the feeds' advisories are merged, since a release that fixes one
// of them is a security release. Pre-releases are weighed as Evaluate
// says.
func (ev *Evaluation) Offer(installed string, opts OfferOptions) error {
	in, err := readOfferInputs(installed, opts)
	if err != nil {
		return err
	}
	includePre := in.inst.Prerelease() != ""
	fixes := ev.securityFixes(in.inst, includePre)
	ev.resetOffer()
	var o offering
	// reachable: the releases the policy lets the site move to (a
	// security release passes the tier, the soak and a skip; none passes
	// the hold), with whether the installed core runs each.
	reachable := map[string]bool{}
	// Releases are newest first (Evaluate sorts them): the first allowed
	// installable one is the update, and what is not offered is reported
	// only when newer than it.
	for i := range ev.Releases {
		rs := &ev.Releases[i]
		rs.Offer, rs.Until, rs.Reason, rs.SecurityFix = "", nil, nil, false
		rs.SoakSkipped, rs.SoakSkippedFor, rs.AwaitsApproval = false, nil, false
		v, err := rs.parsedVersion()
		if err != nil {
			return invalidf(err, "release %q is not a semantic version", rs.Version)
		}
		if !v.GreaterThan(in.inst) || v.Prerelease() != "" && !includePre {
			continue
		}
		fix := fixes[rs.Version]
		rs.SecurityFix = fix
		ev.judgeByPolicy(rs, v, fix, in, o.update.v == nil)
		if rs.Offer == "" && o.update.v == nil && rs.Installable && in.unapproved != nil && in.unapproved(rs.Version) {
			// A security fix is never held for want of an approval: it is
			// offered, and the approval asked for beside it.
			rs.AwaitsApproval = true
			if !fix {
				rs.Offer, rs.Reason = ReleaseHeld, &Reason{Kind: ReasonAwaitsApproval}
			}
		}
		if rs.Offer != "" {
			if o.update.v == nil {
				ev.noteUnoffered(rs)
			}
			continue
		}
		reachable[rs.Version] = rs.Installable
		ev.SecurityMarked = ev.SecurityMarked || rs.Security
		o.take(rs, v, fix)
	}
	ev.settleOffer(&o, reachable)
	ev.ProvenanceLost = ev.provenanceLost(installed, in.inst, in.skipped)
	ev.SecurityVersions = ev.securityVersions(in.inst, includePre)
	return nil
}

// offerInputs are Offer's options read: the installed version, the
// policy's soak, hold range (nil: none) and tier, and the skipped version
// (nil: none).
type offerInputs struct {
	inst, skipped *semver.Version
	soak          time.Duration
	hold          *Range
	holdText      string
	tier          Tier
	skippedText   string
	now           time.Time
	unapproved    func(string) bool
}

// readOfferInputs parses what Offer is given; an input it cannot read is
// an invalid evaluation.
func readOfferInputs(installed string, opts OfferOptions) (offerInputs, error) {
	in := offerInputs{holdText: opts.Policy.Hold, tier: opts.Policy.Offer, skippedText: opts.Skipped, now: opts.Now}
	var err error
	if in.inst, err = npmver.Parse(installed); err != nil {
		return in, invalidf(err, "installed version %q is not a semantic version", installed)
	}
	if opts.Policy.Approve == ApproveScripts {
		in.unapproved = opts.Unapproved
	}
	if in.soak, err = opts.Policy.SoakDuration(); err != nil {
		return in, invalidf(err, "policy: %v", err)
	}
	if opts.Policy.Hold != "" && opts.Policy.Hold != None {
		r, err := ParseRange(opts.Policy.Hold)
		if err != nil {
			return in, invalidf(err, "policy: hold: %v", err)
		}
		in.hold = &r
	}
	if opts.Skipped != "" {
		if in.skipped, err = npmver.Parse(opts.Skipped); err != nil {
			return in, invalidf(err, "skipped version %q is not a semantic version", opts.Skipped)
		}
	}
	if in.tier != "" && !in.tier.Valid() {
		return in, invalidf(nil, "policy: offer %q is not one of all, minor, patch, security", in.tier)
	}
	return in, nil
}

// resetOffer clears what an earlier Offer decided.
func (ev *Evaluation) resetOffer() {
	ev.Update, ev.UpdateAvailable, ev.Security, ev.SecurityRelease = nil, false, false, nil
	ev.SecurityMarked, ev.FixIDs, ev.Fix = false, nil, nil
	ev.SecurityNeedsNewerCore, ev.NeedsNewerCore, ev.BlockedUpdate = false, false, nil
	ev.Waiting, ev.Held, ev.Skipped, ev.NextChange, ev.ProvenanceLost = nil, nil, "", nil, ""
}

// judgeByPolicy sets rs's Offer and Reason when the policy keeps rs from
// being offered (unknown core, held, outside the tier, skipped, waiting
// for its soak); a security fix passes all but the core and the hold. It
// leaves Offer empty for a release the site may move to. noUpdateYet: no
// newer release is the update, so a skipped one hides what would be
// offered (Evaluation.Skipped).
func (ev *Evaluation) judgeByPolicy(rs *ReleaseStatus, v *semver.Version, fix bool, in offerInputs, noUpdateYet bool) {
	switch {
	case rs.UnknownCore:
		rs.Offer, rs.Reason = ReleaseUnknownCore, &Reason{Kind: ReasonUnknownCore, RequiresCore: rs.RequiresCore}
	case in.hold != nil && !in.hold.Contains(v):
		rs.Offer, rs.Reason = ReleaseHeld, &Reason{Kind: ReasonHeld, Hold: in.holdText}
	case fix:
		// Offered whatever the tier, the soak and the skip; a soak it
		// skips is said, with the advisories that justify it.
		if in.soak > 0 && (rs.Released.IsZero() || rs.ReleasedLate || in.now.Before(rs.Released.Add(in.soak))) {
			rs.SoakSkipped, rs.SoakSkippedFor = true, ev.clearedBy(rs.Version)
		}
	case !inTier(in.tier, in.inst, v):
		rs.Offer, rs.Reason = ReleaseNotOffered, &Reason{Kind: ReasonNotOffered, Tier: in.tier}
	case in.skipped != nil && !v.GreaterThan(in.skipped):
		rs.Offer, rs.Reason = ReleaseSkipped, &Reason{Kind: ReasonSkipped}
		if ev.Skipped == "" && noUpdateYet {
			ev.Skipped = in.skippedText
		}
	case in.soak > 0 && rs.Released.IsZero():
		rs.Offer, rs.Reason = ReleaseWaiting, &Reason{Kind: ReasonNoReleaseDate, Soak: in.soak}
	case in.soak > 0 && rs.ReleasedLate:
		rs.Offer, rs.Reason = ReleaseWaiting, &Reason{Kind: ReasonReleasedLate, Soak: in.soak}
	case in.soak > 0 && in.now.Before(rs.Released.Add(in.soak)):
		until := rs.Released.Add(in.soak).UTC()
		rs.Offer, rs.Until, rs.Reason = ReleaseWaiting, &until, &Reason{Kind: ReasonSoaking, Soak: in.soak, Until: &until}
	}
}

// clearedBy are the advisories of the installed version that version
// clears (their ClearedBy), by id.
func (ev *Evaluation) clearedBy(version string) []string {
	var ids []string
	for _, a := range ev.Advisories {
		if a.ClearedBy == version {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// offering is the newest update, blocked update (the installed core cannot
// run it) and security update among the releases the policy allows.
type offering struct {
	update, blocked, security newest
}

// take places a release the policy allows: offered (the newest the
// installed core runs), superseded, or needing a newer core. The
// component's security update (Security, SecurityRelease) is a release
// its publisher marks or one that clears an advisory of the installed
// version (fix), whatever the source's kind; the read model counts the
// latter only while one of the advisories it clears is open (FixIDs: a
// dismissed advisory makes none).
func (o *offering) take(rs *ReleaseStatus, v *semver.Version, fix bool) {
	if rs.Security || fix {
		o.security.offer(&rs.Release, v)
	}
	switch {
	case !rs.Installable:
		rs.Offer = ReleaseNeedsNewerCore
		o.blocked.offer(&rs.Release, v)
	case o.update.v == nil:
		rs.Offer = ReleaseOffered
		o.update.offer(&rs.Release, v)
	default:
		rs.Offer = ReleaseSuperseded
	}
}

// settleOffer sets the Evaluation's update, security update and blocked
// update from what the releases made of o, and what clears each advisory.
func (ev *Evaluation) settleOffer(o *offering, reachable map[string]bool) {
	ev.Update = o.update.release()
	ev.UpdateAvailable = ev.Update != nil
	ev.Security = o.security.v != nil
	ev.SecurityRelease = o.security.release()
	if ev.SecurityRelease != nil {
		ev.SecurityRelease.Security = true
	}
	ev.SecurityNeedsNewerCore = o.security.v != nil && (o.update.v == nil || o.security.v.GreaterThan(o.update.v))
	ev.clearing(reachable)
	if o.blocked.v != nil && (o.update.v == nil || o.blocked.v.GreaterThan(o.update.v)) {
		ev.NeedsNewerCore = true
		ev.BlockedUpdate = o.blocked.release()
	}
}

// provenanceLost judges a loss of provenance on what the site would
// install: the offered update, or with none the newest release newer than
// the installed version, unless the policy holds that one back (it waits,
// is held or not offered, or is skipped): a release never offered raises
// no alarm. Nothing is lost when the installed version had no provenance.
func (ev *Evaluation) provenanceLost(installed string, inst, skipped *semver.Version) string {
	if !ev.provenance[installed] {
		return ""
	}
	if ev.Update != nil {
		if ev.provenance[ev.Update.Version] {
			return ""
		}
		return ev.Update.Version
	}
	if len(ev.Releases) == 0 {
		return ""
	}
	newest := &ev.Releases[0] // newest first (Evaluate sorts them)
	v, err := newest.parsedVersion()
	switch {
	case err != nil, !v.GreaterThan(inst), ev.provenance[newest.Version],
		ev.Waiting != nil && ev.Waiting.Version == newest.Version,
		ev.Held != nil && ev.Held.Version == newest.Version,
		skipped != nil && !v.GreaterThan(skipped):
		return ""
	}
	return newest.Version
}

// clearing sets FixIDs, the advisories a reachable release clears, and
// Fix, the oldest reachable release the installed core runs that clears
// every advisory one of them clears (nil when none does).
func (ev *Evaluation) clearing(reachable map[string]bool) {
	var clearable []*AdvisoryMatch
	for i := range ev.Advisories {
		a := &ev.Advisories[i]
		for j := range ev.Releases {
			r := &ev.Releases[j]
			if _, ok := reachable[r.Version]; !ok {
				continue
			}
			if v, err := r.parsedVersion(); err == nil && !a.affectsRelease(r, v) {
				clearable = append(clearable, a)
				break
			}
		}
	}
	for _, a := range clearable {
		ev.FixIDs = append(ev.FixIDs, a.ID)
	}
	if len(clearable) == 0 {
		return
	}
	var fix *Release
	var fixV *semver.Version
	for j := range ev.Releases {
		r := &ev.Releases[j]
		if !reachable[r.Version] {
			continue
		}
		v, err := r.parsedVersion()
		if err != nil || fixV != nil && !v.LessThan(fixV) {
			continue
		}
		if !slices.ContainsFunc(clearable, func(a *AdvisoryMatch) bool { return a.affectsRelease(r, v) }) {
			fix, fixV = &r.Release, v
		}
	}
	if fix != nil {
		c := *fix
		ev.Fix = &c
	}
}

// noteUnoffered records rs, a release newer than any offered one that the
// policy does not offer: the newest waiting and the newest held (or not
// offered) are kept, and the earliest time a waiting release soaks is
// when the offer changes next.
func (ev *Evaluation) noteUnoffered(rs *ReleaseStatus) {
	switch rs.Offer {
	case ReleaseWaiting:
		if ev.Waiting == nil {
			ev.Waiting = &Waiting{Version: rs.Version, Until: rs.Until}
		}
		if rs.Until != nil && (ev.NextChange == nil || rs.Until.Before(*ev.NextChange)) {
			at := *rs.Until
			ev.NextChange = &at
		}
	case ReleaseHeld, ReleaseNotOffered, ReleaseUnknownCore:
		if ev.Held == nil {
			ev.Held = &Held{Version: rs.Version, Reason: *rs.Reason}
		}
	}
}

// inTier reports whether v is a release the tier offers a site at inst.
func inTier(t Tier, inst, v *semver.Version) bool {
	switch t {
	case OfferMinor:
		return v.Major() == inst.Major()
	case OfferPatch:
		return v.Major() == inst.Major() && v.Minor() == inst.Minor()
	case OfferSecurity:
		return false
	}
	return true
}

// Between lists every release newer than the installed version that the
// site weighs (pre-releases only for an installed pre-release), newest
// first, each with its Offer: the releases an operator reads before
// updating.
func (ev *Evaluation) Between() []ReleaseStatus {
	var out []ReleaseStatus
	for _, r := range ev.Releases {
		if r.Offer != "" {
			out = append(out, r)
		}
	}
	return out
}
