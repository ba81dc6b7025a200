package readmodel

import "time"

// DetailRow is one installed component as its page and
// GET /api/admin/plugins/{code} show it, defined once: store fills its
// stored facts (the component, its source's fetch facts, the read model's
// flags), catalog the facts it reads from the stored evaluation (the
// update, the fix and their commands, the registry's facts), and views
// renders it as it is, as the catalog's rows (CatalogRow) and the audit
// log's (AuditRow) are.
type DetailRow struct {
	Code, Name, Installed string
	// SourceURL is its update source ("" none; "offline:NAME" for an
	// offline one, see Offline), PinnedKey the key pinned for it.
	SourceURL, PinnedKey string
	// Latest is the newest release known ("" none, or not evaluated).
	Latest string
	// Evaluated: a result from the current installed versions and the
	// stored document exists. Without one, nothing is known: the page says
	// so instead of "no advisory".
	Evaluated bool
	// Stale: 48 hours without a successful read of the source since the
	// component was installed or the source last succeeded, or its
	// document has expired (the read model decides, upcheck_stale).
	Stale bool
	// Failing and SourceFailing: the read model's (upcheck_failing) of the
	// component and of its source.
	Failing, SourceFailing bool
	// EvalError is why the stored document could not be evaluated for the
	// component ("" when it could).
	EvalError string
	// Dismissed are the advisories (ids) a dismissal in force covers.
	Dismissed []string
	// The source's fetch facts: its last success and attempt (nil: never)
	// and its document's own expiry.
	LastSuccessAt, LastAttemptAt, ExpiresAt *time.Time
	// LastError is the technical text of the source's last failure;
	// LastErrorKind (an ErrorKind) and LastErrorArgs word it
	// (ProblemSentence). ShownFailure is what the page shows.
	LastError     string
	LastErrorKind string
	LastErrorArgs FailureArgs
	// The read model's flags (component_state), meaningful only when
	// Evaluated.
	UpdateAvailable, Security, Vulnerable, VulnerableNoFix, NeedsNewerCore bool
	// SecuritySince is the exposure clock; nil: no open security problem.
	SecuritySince *time.Time
	// Deprecated is the publisher's deprecation message of the installed
	// version, ProvenanceLost the newer version published without the
	// provenance the installed one has ("" when not so).
	Deprecated, ProvenanceLost string
	// CoreVersion is the installed core's version; "" when no core is
	// installed.
	CoreVersion string
	// The feeds (docs/feeds.md): the component's npm package ("" none),
	// whether an open advisory is known exploited or says the package is
	// malicious, and when the feeds' OSV advisories of its package were
	// last read (nil: never, so no page may say it has none).
	Package                   string
	KnownExploited, Malicious bool
	OSVReadAt                 *time.Time
	// PolicyText is the component's policy as stored (release.Policy.Text;
	// "" for none).
	PolicyText string
	// Trust going down: the manifest sync that lowered the pin of the
	// component's source, while it shows ("" and nil: none), and the
	// offered npm version published by an account new to the package
	// ("" when not so).
	PinDowngrade                      string
	PinDowngradedAt                   *time.Time
	NewPublisherVersion, NewPublisher string

	// From the stored evaluation (catalog), meaningful only when
	// Evaluated: the installable update's version and how to install it
	// (UpdateCommand), whether the newest security release needs a newer
	// core than the installed one, and the registry's facts of an npm
	// package (nil: not an npm source, or not read yet).
	UpdateVersion, UpdateCommand string
	SecurityNeedsNewerCore       bool
	Registry                     *RegistryFacts
	// FixVersion is the smallest release that clears the advisories
	// (release.Evaluation.Fix; "" none), FixCommand how to install it,
	// FixIDs the open advisories it clears (none: no fix to lead with).
	FixVersion, FixCommand string
	FixIDs                 []string
	// Dependencies counts the package instances the component brings into
	// the installed tree, its own left out (catalog, with the row); nil:
	// no tree was read, so they are not checked
	// (DependenciesNotCheckedText).
	Dependencies *int
	// DependencyCounts counts what in those dependencies needs attention
	// (upcheck_component_tree_attention: the catalog row's TreeCounted and
	// TreeMalicious), DependencyFindings lists it, at most
	// DependencyFindingsLimit rows, each with its path and fix; both
	// empty while no tree was read.
	DependencyCounts   DependencyCounts
	DependencyFindings []DependencyFinding
}

// Offline reports whether the component's source is an offline one,
// never fetched: its documents are imported.
func (d DetailRow) Offline() bool { return SourceKindOf(d.SourceURL) == SourceOffline }

// ShownFailure is the failure the page shows for the component
// (ShownFailure): its source's last error, else why its document could
// not be evaluated.
func (d DetailRow) ShownFailure() (text string, kind ErrorKind) {
	return ShownFailure(d.LastError, d.LastErrorKind, d.EvalError)
}

// FixShown: a release clears open advisories (FixIDs), and the page leads
// with it.
func (d DetailRow) FixShown() bool { return d.FixVersion != "" && len(d.FixIDs) > 0 }

// PageCommand is the command the page gives first: the smallest way out
// (FixCommand) when a fix is shown and has one, else the update's.
func (d DetailRow) PageCommand() string {
	if d.FixShown() && d.FixCommand != "" {
		return d.FixCommand
	}
	return d.UpdateCommand
}
