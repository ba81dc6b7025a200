package readmodel

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// SignalKind is one kind of what an offered npm update brings into the
// site that the installed version did not (docs/policy.md "What an update
// brings"): a signal, shown beside the update, never a block by itself.
// The kinds are the trust_signal event's "kind".
type SignalKind string

// The signals, most pressing first (SignalRank).
const (
	// SignalInstallScript: an install-time script (preinstall, install,
	// postinstall, prepare) added or changed, or hasInstallScript newly
	// set (Name "" then, no text).
	SignalInstallScript SignalKind = "install_script"
	// SignalExoticSource: a declared dependency taken from outside the
	// registry (git, a GitHub shorthand, a tarball URL, file:).
	SignalExoticSource SignalKind = "exotic_source"
	// SignalTrustLower: its trust rank (trusted publishing > provenance >
	// neither) is below the installed version's, or below the newest
	// earlier release of its major line.
	SignalTrustLower SignalKind = "trust_lower"
	// SignalProvenanceRepository: its provenance attestation names a
	// source repository other than the package's repository (ranked with
	// SignalTrustLower).
	SignalProvenanceRepository SignalKind = "provenance_repository"
	// SignalYoungDependency: a dependency it adds is a package first
	// published less than YoungDependency before it.
	SignalYoungDependency SignalKind = "young_dependency"
	// SignalBurst: more versions of the package than the burst allows
	// were published within an hour of it.
	SignalBurst SignalKind = "burst"
)

// SignalKinds are the signals, most pressing first.
func SignalKinds() []SignalKind {
	return []SignalKind{SignalInstallScript, SignalExoticSource, SignalTrustLower, SignalProvenanceRepository,
		SignalYoungDependency, SignalBurst}
}

// signalRanks are SignalRank's ranks: a provenance naming another
// repository is a lower trust.
var signalRanks = map[SignalKind]int{SignalInstallScript: 0, SignalExoticSource: 1, SignalTrustLower: 2,
	SignalProvenanceRepository: 2, SignalYoungDependency: 3, SignalBurst: 4}

// SignalRankUnknown is the rank of a kind SignalRank does not know: last.
const SignalRankUnknown = 5

// SignalRank orders signals: a new install script or an exotic source
// above a lower trust or a provenance naming another repository, above a
// younger dependency, above a burst. Lower is more pressing; an unknown
// kind ranks last (SignalRankUnknown).
func SignalRank(k SignalKind) int {
	if r, ok := signalRanks[k]; ok {
		return r
	}
	return SignalRankUnknown
}

// YoungDependency is the age under which a dependency an update adds is
// a signal: its package was first published less than this before the
// update was (plain-crypto-js: 41 minutes).
const YoungDependency = 30 * 24 * time.Hour

// Signal is one signal of an offered update, as stored (kind and
// arguments, in component_results.registry_facts' "brings") and worded by
// SignalText alone.
type Signal struct {
	Kind SignalKind `json:"kind"`
	Args SignalArgs `json:"args"`
}

// SignalArgs are a signal's facts; each kind sets those it names.
type SignalArgs struct {
	// Version is the offered version the signal is about.
	Version string `json:"version"`
	// Name is the script's name (install_script; "" for the flag alone)
	// or the dependency's (exotic_source, young_dependency).
	Name string `json:"name,omitempty"`
	// Section is the dependency's (dependencies, optionalDependencies,
	// peerDependencies); Spec its declared range or address; Source where
	// an exotic one comes from (git, github, tarball, file).
	Section string `json:"section,omitempty"`
	Spec    string `json:"spec,omitempty"`
	Source  string `json:"source,omitempty"`
	// Text is the script's text cut to npm.MaxScript bytes (Cut says
	// so), SHA256 the hash of its whole text (what an approval names);
	// Added: no such script before (else changed).
	Text   string `json:"text,omitempty"`
	Cut    bool   `json:"cut,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Added  bool   `json:"added,omitempty"`
	// DependencyVersion is the version of the young dependency the
	// update's range takes (the newest it allows), FirstPublished its
	// package's first publish time, Published that version's, Released
	// the update's own.
	DependencyVersion string     `json:"dependency_version,omitempty"`
	FirstPublished    *time.Time `json:"first_published,omitempty"`
	Published         *time.Time `json:"published,omitempty"`
	Released          *time.Time `json:"released,omitempty"`
	// Trust is the update's rank, Was the rank of Compared (the installed
	// version, or the newest earlier release of its major line) that it
	// is below: trusted_publishing, provenance, none.
	Trust    string `json:"trust,omitempty"`
	Was      string `json:"was,omitempty"`
	Compared string `json:"compared,omitempty"`
	// Count is the versions published within Window minutes (burst);
	// Scope, when set, says they are the versions of every package of
	// that scope the check read, not of the package alone.
	Count  int    `json:"count,omitempty"`
	Window int    `json:"window_minutes,omitempty"`
	Scope  string `json:"scope,omitempty"`
	// Repository is the source repository the version's provenance
	// names, PackageRepository the package's own (provenance_repository).
	Repository        string `json:"repository,omitempty"`
	PackageRepository string `json:"package_repository,omitempty"`
}

// TrustRankText words a trust rank.
func TrustRankText(rank string) string {
	switch rank {
	case "trusted_publishing":
		return "trusted publishing"
	case "provenance":
		return "provenance"
	}
	return "neither trusted publishing nor provenance"
}

// SignalText says a signal as every page, the API's readers and the
// messages say it: "adds plain-crypto-js 4.2.1, a package first published
// 41 minutes before this release"; "adds a postinstall script: "node
// setup.js"". "" for a kind it does not know.
func SignalText(s Signal) string {
	a := s.Args
	switch s.Kind {
	case SignalInstallScript:
		if a.Name == "" {
			return a.Version + " runs an install script (the registry's hasInstallScript), which the installed version did not"
		}
		verb := "changes its " + a.Name + " script to"
		if a.Added {
			verb = "adds a " + a.Name + " script:"
		}
		text := strconv.Quote(a.Text)
		if a.Cut {
			text += " (cut)"
		}
		return a.Version + " " + verb + " " + text
	case SignalExoticSource:
		return fmt.Sprintf("%s takes %s from %s (%s %s: %s), not from the registry", a.Version, a.Name,
			sourceText(a.Source), a.Section, a.Name, strconv.Quote(a.Spec))
	case SignalTrustLower:
		return fmt.Sprintf("%s was published with %s; %s had %s", a.Version, TrustRankText(a.Trust), a.Compared, TrustRankText(a.Was))
	case SignalYoungDependency:
		dep := a.Name
		if a.DependencyVersion != "" {
			dep += " " + a.DependencyVersion
		}
		if a.FirstPublished == nil || a.Released == nil {
			return a.Version + " adds " + dep
		}
		age := a.Released.Sub(*a.FirstPublished)
		if age < 0 {
			return a.Version + " adds " + dep + ", a package first published after this release"
		}
		return a.Version + " adds " + dep + ", a package first published " + DurationText(age.Truncate(time.Minute)) + " before this release"
	case SignalProvenanceRepository:
		return fmt.Sprintf("%s's provenance says it was built from %s, not from the package's repository %s", a.Version,
			a.Repository, a.PackageRepository)
	case SignalBurst:
		of := "the package"
		if a.Scope != "" {
			of = "the packages of " + a.Scope + " read by the check"
		}
		return fmt.Sprintf("%s is one of %d versions of %s published within %s", a.Version, a.Count, of,
			DurationText(time.Duration(a.Window)*time.Minute))
	}
	return ""
}

// sourceText words where an exotic dependency comes from.
func sourceText(source string) string {
	switch source {
	case "git":
		return "a git repository"
	case "github":
		return "a GitHub repository"
	case "tarball":
		return "a tarball URL"
	case "file":
		return "a local path"
	}
	return "outside the registry"
}

// SortSignals orders signals most pressing first, then by name.
func SortSignals(s []Signal) {
	slices.SortStableFunc(s, func(a, b Signal) int {
		if d := SignalRank(a.Kind) - SignalRank(b.Kind); d != 0 {
			return d
		}
		if a.Args.Name < b.Args.Name {
			return -1
		}
		if a.Args.Name > b.Args.Name {
			return 1
		}
		return 0
	})
}

// UnreadReason is why the age of a dependency an offered update adds is
// not known (UnreadDependency).
type UnreadReason string

// The reasons, each worded by UnreadText.
const (
	// UnreadPastBound: the check had fetched as many dependencies'
	// documents as it may (UPCHECK_NPM_DEPENDENCY_DOCUMENTS) and none of
	// this one's facts were stored; a later check reads it.
	UnreadPastBound UnreadReason = "past_bound"
	// UnreadFailed: its document could not be fetched or read, and none
	// of its facts were stored.
	UnreadFailed UnreadReason = "failed"
	// UnreadNoTime: its document gives no publish time.
	UnreadNoTime UnreadReason = "no_time"
	// UnreadNotChecked: the result was evaluated without a check (a
	// manifest sync, a feed) and none of its facts were stored; the next
	// check reads it.
	UnreadNotChecked UnreadReason = "not_checked"
)

// UnreadReasons are the reasons, in the order of their constants.
func UnreadReasons() []UnreadReason {
	return []UnreadReason{UnreadPastBound, UnreadFailed, UnreadNoTime, UnreadNotChecked}
}

// UnreadDependency is a registry dependency an offered update adds whose
// package's age is not known, and why: no young_dependency signal is
// said of it either way.
type UnreadDependency struct {
	Version string       `json:"version"`
	Name    string       `json:"name"`
	Section string       `json:"section"`
	Spec    string       `json:"spec"`
	Reason  UnreadReason `json:"reason"`
}

// UnreadText says an unread dependency: "1.1.0 adds plain-crypto
// (^4.2.0), a package whose age is not known: this check had read as many
// dependencies' documents as it may".
func UnreadText(u UnreadDependency) string {
	why := "its package document could not be read"
	switch u.Reason {
	case UnreadPastBound:
		why = "the check had read as many dependencies' documents as it may; a later check reads it"
	case UnreadNoTime:
		why = "its package document gives no publish time"
	case UnreadNotChecked:
		why = "it was not read yet; the next check reads it"
	}
	return fmt.Sprintf("%s adds %s (%s), a package whose age is not known: %s", u.Version, u.Name, strconv.Quote(u.Spec), why)
}

// ProvenanceUnreadReason is why the repository an offered version's
// provenance names was not compared with the package's repository
// (ProvenanceUnread): never said as the same.
type ProvenanceUnreadReason string

// The reasons, each worded by ProvenanceUnreadText.
const (
	// ProvenancePastBound: the check had fetched as many attestation
	// bundles as it may (updatecheck.MaxProvenanceBundles); a later check
	// reads it.
	ProvenancePastBound ProvenanceUnreadReason = "past_bound"
	// ProvenanceFailed: its attestation bundle could not be fetched or
	// read.
	ProvenanceFailed ProvenanceUnreadReason = "failed"
	// ProvenanceNoRepository: its bundle holds no SLSA provenance
	// statement naming a repository upcheck reads.
	ProvenanceNoRepository ProvenanceUnreadReason = "no_repository"
	// ProvenanceNoPackageRepository: the package's document names no
	// repository (or none that is an https address once normalized) to
	// compare it with.
	ProvenanceNoPackageRepository ProvenanceUnreadReason = "no_package_repository"
	// ProvenanceNotChecked: the result was evaluated without a check (a
	// manifest sync, a feed) before any check read its bundle.
	ProvenanceNotChecked ProvenanceUnreadReason = "not_checked"
)

// ProvenanceUnreadReasons are the reasons, in the order of their
// constants.
func ProvenanceUnreadReasons() []ProvenanceUnreadReason {
	return []ProvenanceUnreadReason{ProvenancePastBound, ProvenanceFailed, ProvenanceNoRepository,
		ProvenanceNoPackageRepository, ProvenanceNotChecked}
}

// ProvenanceUnread is an offered version published with provenance whose
// provenance's repository was not compared with the package's, and why:
// no provenance_repository signal is said of it either way.
type ProvenanceUnread struct {
	Version string                 `json:"version"`
	Reason  ProvenanceUnreadReason `json:"reason"`
}

// ProvenanceUnreadText says it: "2.4.1 was published with provenance;
// the repository it names was not compared with the package's: its
// attestation bundle could not be read".
func ProvenanceUnreadText(u ProvenanceUnread) string {
	why := "its attestation bundle could not be read"
	switch u.Reason {
	case ProvenancePastBound:
		why = "the check had read as many attestation bundles as it may; a later check reads it"
	case ProvenanceNoRepository:
		why = "its attestation bundle names no source repository upcheck reads"
	case ProvenanceNoPackageRepository:
		why = "the package names no repository to compare it with"
	case ProvenanceNotChecked:
		why = "its attestation bundle was not read yet; the next check reads it"
	}
	return u.Version + " was published with provenance; the repository it names was not compared with the package's: " + why
}
