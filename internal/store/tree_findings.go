package store

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// The installed tree's findings (migrations/00013_tree_findings.sql): what
// the tree's evaluation writes, and what the pages read.

// TreeDue is the feeds' version now, beside what the fleet's findings
// were matched at.
type TreeDue struct {
	IntelVersion int64
	// Every: the feeds moved since the findings were matched (or they
	// never were): every version of every site is matched again.
	Every bool
	// Due: Every, or a site's tree moved since its versions were matched.
	Due bool
}

// TreeEvaluationDue says whether the fleet's findings must be evaluated
// again; ok is false when no site's tree was ever read (nothing to
// evaluate).
func (e *Executor) TreeEvaluationDue(ctx context.Context) (due TreeDue, ok bool, err error) {
	r, err := e.q.TreeEvaluationDue(ctx, e.dbtx)
	if errors.Is(err, pgx.ErrNoRows) {
		return TreeDue{}, false, nil
	}
	if err != nil {
		return TreeDue{}, false, mapError(fmt.Errorf("read the tree's evaluation: %w", err))
	}
	due = TreeDue{IntelVersion: r.IntelVersion, Every: r.EvaluatedIntelVersion == nil || *r.EvaluatedIntelVersion != r.IntelVersion}
	due.Due = due.Every || r.TreesMoved
	return due, true, nil
}

// NameVersion is one installed package version.
type NameVersion struct{ Name, Version string }

// TreeInstalledVersions lists every package version some site installs
// now, once however many sites do.
func (e *Executor) TreeInstalledVersions(ctx context.Context) ([]NameVersion, error) {
	rows, err := e.q.TreeInstalledVersions(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the trees' versions: %w", err))
	}
	out := make([]NameVersion, len(rows))
	for i, r := range rows {
		out[i] = NameVersion{Name: r.Name, Version: r.Version}
	}
	return out, nil
}

// TreeSiteRead is one site's tree as an evaluation read it.
type TreeSiteRead struct {
	Site     int64  `json:"site_id"`
	TreeHash string `json:"tree_hash"` // tree_state.tree_hash, in hex
}

// TreeToMatch is what one evaluation matches: the sites whose trees it
// read and the package versions to match, each once however many of
// those sites have it (installed now or once), read in one repeatable-read
// transaction. Every: every version of every site (the feeds moved);
// otherwise only the versions not matched at the feeds' version yet.
type TreeToMatch struct {
	Every    bool
	Sites    []TreeSiteRead
	Versions []NameVersion
}

// siteIDs is the ids of m's sites.
func (m TreeToMatch) siteIDs() []int64 {
	ids := make([]int64, len(m.Sites))
	for i, s := range m.Sites {
		ids[i] = s.Site
	}
	return ids
}

// TreeToMatch reads what an evaluation matches: with every, every site's
// versions; else the versions of the sites whose tree moved since their
// versions were matched that are not matched yet (tree_matched).
func (s *Store) TreeToMatch(ctx context.Context, every bool) (TreeToMatch, error) {
	out := TreeToMatch{Every: every, Sites: []TreeSiteRead{}, Versions: []NameVersion{}}
	err := s.ReadTx(ctx, func(tx *Tx) error {
		sites, err := tx.q.TreeSitesToEvaluate(ctx, tx.tx, every)
		if err != nil {
			return mapError(fmt.Errorf("list the sites to evaluate: %w", err))
		}
		ids := make([]int64, len(sites))
		for i, r := range sites {
			ids[i] = r.SiteID
			out.Sites = append(out.Sites, TreeSiteRead{Site: r.SiteID, TreeHash: hex.EncodeToString(r.TreeHash)})
		}
		rows, err := tx.q.TreeVersionsToMatch(ctx, tx.tx, db.TreeVersionsToMatchParams{Sites: ids, Every: every})
		if err != nil {
			return mapError(fmt.Errorf("list the versions to match: %w", err))
		}
		for _, r := range rows {
			out.Versions = append(out.Versions, NameVersion{Name: r.Name, Version: r.Version})
		}
		return nil
	})
	return out, err
}

// PastVersion is an interval during which the tree had a version
// installed that it no longer has.
type PastVersion struct {
	IntervalID             int64
	Site                   int64
	Name, Version          string
	InstalledAt, RemovedAt time.Time
}

// TreePastVersions lists the versions the tree had installed and no
// longer has, one per interval (the look-back's).
func (e *Executor) TreePastVersions(ctx context.Context) ([]PastVersion, error) {
	rows, err := e.q.TreePastVersions(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the tree's past versions: %w", err))
	}
	out := make([]PastVersion, len(rows))
	for i, r := range rows {
		out[i] = PastVersion{IntervalID: r.ID, Site: r.SiteID, Name: r.Name, Version: r.Version, InstalledAt: r.InstalledAt, RemovedAt: r.RemovedAt}
	}
	return out, nil
}

// TreeFinding is one advisory of one installed package version, as the
// evaluation writes it.
type TreeFinding struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AdvisoryID string `json:"advisory_id"`
	// Advisory is the merged advisory as a component's result lists one
	// (release.AdvisoryMatch's JSON).
	Advisory       json.RawMessage `json:"advisory"`
	Keys           []string        `json:"advisory_keys"`
	Malicious      bool            `json:"malicious"`
	KnownExploited bool            `json:"known_exploited"`
	// EPSS nil: not scored.
	EPSS     *float64 `json:"epss"`
	Severity string   `json:"severity"`
	// FixedIn nil: no fixed version.
	FixedIn   *string `json:"fixed_in"`
	Withdrawn bool    `json:"withdrawn"`
}

// TreeFindingOf is a, an advisory of name@version, as the tree's findings
// store it: the advisory as a component's result lists one (its JSON),
// keyed by keys (its id and aliases, osv.AdvisoryKeys), and the facts the
// pages filter and count by; withdrawn: a withdrawn advisory, kept apart.
func TreeFindingOf(name, version string, a release.AdvisoryMatch, keys []string, withdrawn bool) (TreeFinding, error) {
	body, err := json.Marshal(a)
	if err != nil {
		return TreeFinding{}, fmt.Errorf("the advisory %s of %s@%s: %w", a.ID, name, version, err)
	}
	f := TreeFinding{Name: name, Version: version, AdvisoryID: a.ID, Advisory: body, Keys: keys, Malicious: a.Malicious,
		KnownExploited: a.KnownExploited, Severity: a.Severity, Withdrawn: withdrawn}
	if a.EPSS != nil {
		score := a.EPSS.Score
		f.EPSS = &score
	}
	if a.FixedIn != "" {
		fixed := a.FixedIn
		f.FixedIn = &fixed
	}
	return f, nil
}

// TreeFindingsWrite writes one evaluation of m in tx (the caller's fenced
// transaction): the findings of m's versions (those of the versions
// matched that the set no longer has are deleted; with m.Every, every
// other finding), m's versions as matched at intelVersion, m's sites as
// evaluated at the trees read (a site whose tree moved meanwhile stays
// due), the look-back's exposures of m's sites (TreeExposuresFind: every
// site's when m.Every; those new are returned, for their audit rows and
// events in the same transaction), and what the fleet was evaluated at.
func (t *Tx) TreeFindingsWrite(ctx context.Context, m TreeToMatch, findings []TreeFinding, intelVersion, epoch int64) ([]TreeExposure, error) {
	if findings == nil {
		findings = []TreeFinding{}
	}
	fs, err := json.Marshal(findings)
	if err != nil {
		return nil, fmt.Errorf("write the tree's findings: %w", err)
	}
	versions := make([]map[string]string, len(m.Versions))
	for i, v := range m.Versions {
		versions[i] = map[string]string{"name": v.Name, "version": v.Version}
	}
	vs, err := json.Marshal(versions)
	if err != nil {
		return nil, fmt.Errorf("write the tree's findings: %w", err)
	}
	sites := m.Sites
	if sites == nil {
		sites = []TreeSiteRead{}
	}
	ss, err := json.Marshal(sites)
	if err != nil {
		return nil, fmt.Errorf("write the tree's findings: %w", err)
	}
	if _, err := t.q.TreeEvaluationSet(ctx, t.tx, db.TreeEvaluationSetParams{IntelVersion: intelVersion, Epoch: epoch}); err != nil {
		return nil, mapError(fmt.Errorf("record the tree's evaluation: %w", err))
	}
	if err := t.q.TreeFindingsDeleteGone(ctx, t.tx, db.TreeFindingsDeleteGoneParams{Every: m.Every, Versions: vs, Findings: fs}); err != nil {
		return nil, mapError(fmt.Errorf("write the tree's findings: %w", err))
	}
	if err := t.q.TreeFindingsPut(ctx, t.tx, db.TreeFindingsPutParams{Epoch: epoch, Findings: fs}); err != nil {
		return nil, mapError(fmt.Errorf("write the tree's findings: %w", err))
	}
	if m.Every {
		if err := t.q.TreeMatchedForgetAll(ctx, t.tx); err != nil {
			return nil, mapError(fmt.Errorf("write the versions matched: %w", err))
		}
	}
	if err := t.q.TreeMatchedAdd(ctx, t.tx, vs); err != nil {
		return nil, mapError(fmt.Errorf("write the versions matched: %w", err))
	}
	if err := t.q.TreeSitesEvaluated(ctx, t.tx, ss); err != nil {
		return nil, mapError(fmt.Errorf("write the sites evaluated: %w", err))
	}
	rows, err := t.q.TreeExposuresFind(ctx, t.tx, db.TreeExposuresFindParams{Epoch: epoch, Every: m.Every, Sites: m.siteIDs()})
	if err != nil {
		return nil, mapError(fmt.Errorf("write the tree's exposures: %w", err))
	}
	out := make([]TreeExposure, len(rows))
	for i, r := range rows {
		out[i] = TreeExposure{ID: r.ID, Site: r.SiteID, Name: r.Name, Version: r.Version, AdvisoryID: r.AdvisoryID, Malicious: r.Malicious,
			KnownExploited: r.KnownExploited, InstalledAt: r.InstalledAt, RemovedAt: r.RemovedAt}
	}
	return out, nil
}

// TreeFindingRow is a tree finding as the pages read it: the finding,
// whether every instance of it is installed only for development, how
// many instances and which components bring it in, whether a dismissal
// covers it, and whether it counts (upcheck_tree_counted).
type TreeFindingRow struct {
	TreeFinding
	FoundAt    time.Time
	Dev        bool
	Instances  int
	Components []string
	Dismissed  bool
	Counted    bool
}

// TreeFindings lists the tree's findings shown under mode.
func (e *Executor) TreeFindings(ctx context.Context, site int64, mode readmodel.DevMode) ([]TreeFindingRow, error) {
	rows, err := e.q.TreeFindingList(ctx, e.dbtx, db.TreeFindingListParams{Site: site, DevMode: string(mode)})
	if err != nil {
		return nil, mapError(fmt.Errorf("list the tree's findings: %w", err))
	}
	out := make([]TreeFindingRow, len(rows))
	for i, r := range rows {
		f := TreeFinding{Name: r.Name, Version: r.Version, AdvisoryID: r.AdvisoryID, Advisory: r.Advisory, Malicious: r.Malicious,
			KnownExploited: r.KnownExploited, Severity: r.Severity, FixedIn: r.FixedIn, Withdrawn: r.Withdrawn}
		if r.Epss.Valid {
			v := float64(r.Epss.Float32)
			f.EPSS = &v
		}
		out[i] = TreeFindingRow{TreeFinding: f, FoundAt: r.FoundAt, Dev: r.Dev, Instances: int(r.Instances),
			Components: r.Components, Dismissed: r.Dismissed, Counted: r.Counted}
	}
	return out, nil
}

// TreeCounts is what the tree's findings count for under a mode.
type TreeCounts struct {
	// Counted: findings that count (upcheck_tree_counted); Packages: the
	// package versions they are on.
	Counted, Packages int
	// DevApart: findings shown apart as development ones (mode separate).
	DevApart int
}

// TreeFindingCounts counts the tree's findings under mode.
func (e *Executor) TreeFindingCounts(ctx context.Context, site int64, mode readmodel.DevMode) (TreeCounts, error) {
	r, err := e.q.TreeFindingCounts(ctx, e.dbtx, db.TreeFindingCountsParams{Site: site, DevMode: string(mode)})
	if err != nil {
		return TreeCounts{}, mapError(fmt.Errorf("count the tree's findings: %w", err))
	}
	return TreeCounts{Counted: int(r.Counted), Packages: int(r.Packages), DevApart: int(r.DevApart)}, nil
}

// TreeInstanceFinding is one installed instance of a package with one of
// its findings.
type TreeInstanceFinding struct {
	InstanceID, Name, Version string
	Dev, DevOnly              bool
	Via                       json.RawMessage
	Components                []string
	AdvisoryID                string
	Advisory                  json.RawMessage
	Malicious, KnownExploited bool
	Withdrawn, Dismissed      bool
	Severity                  string
	// EPSS nil: not scored; FixedIn nil: no fixed version.
	EPSS    *float64
	FixedIn *string
	// FindingDev: every instance of the version is installed only for
	// development (tree_finding_state's dev); Counted and Shown are
	// upcheck_tree_counted and upcheck_tree_shown under the mode read.
	FindingDev, Counted, Shown bool
}

// TreeFindingsOfPackage lists every installed instance of the package
// name with its findings (joined on name and version), each with what it
// counts for under mode.
func (e *Executor) TreeFindingsOfPackage(ctx context.Context, site int64, name string, mode readmodel.DevMode) ([]TreeInstanceFinding, error) {
	rows, err := e.q.TreeFindingsOfInstances(ctx, e.dbtx, db.TreeFindingsOfInstancesParams{Site: site, DevMode: string(mode), Name: name})
	if err != nil {
		return nil, mapError(fmt.Errorf("list the findings of %q: %w", name, err))
	}
	out := make([]TreeInstanceFinding, len(rows))
	for i, r := range rows {
		out[i] = TreeInstanceFinding{InstanceID: r.InstanceID, Name: r.Name, Version: r.Version, Dev: r.Dev, DevOnly: r.DevOnly,
			Via: r.Via, Components: r.Components, AdvisoryID: r.AdvisoryID, Advisory: r.Advisory, Malicious: r.Malicious,
			KnownExploited: r.KnownExploited, Withdrawn: r.Withdrawn, Dismissed: r.Dismissed, Severity: r.Severity, FixedIn: r.FixedIn,
			FindingDev: r.FindingDev, Counted: r.Counted, Shown: r.Shown}
		if r.Epss.Valid {
			v := float64(r.Epss.Float32)
			out[i].EPSS = &v
		}
	}
	return out, nil
}

// NewTreeDismissal is an admin's acceptance of an advisory's risk in a
// site's installed tree: wherever it is in that tree (Package ""), or on
// one package. Its Reason and ExpiresAt are checked as NewDismissal's.
type NewTreeDismissal struct {
	// Site is whose tree it covers (0: LocalSite); another site's tree
	// is not covered.
	Site                int64
	Package, AdvisoryID string
	UserID              int64
	Reason              string
	ExpiresAt           *time.Time
}

// DismissTreeAdvisory records a dismissal of the advisory as a tree
// finding lists it, for the package or wherever it is, replacing the one
// standing before it; audited (advisory.dismiss, with the package) in the
// same transaction. ErrNotFound when no tree finding lists such an
// advisory (on that package) on the site. A dismissal naming no package
// covers the site's tree's findings of the advisory; a component's
// dismissal of it on that site does too.
func (s *Store) DismissTreeAdvisory(ctx context.Context, d NewTreeDismissal) (Dismissal, error) {
	if d.Site == 0 {
		d.Site = LocalSite
	}
	switch {
	case strings.TrimSpace(d.Reason) == "":
		return Dismissal{}, ErrReasonRequired
	case utf8.RuneCountInString(d.Reason) > MaxReasonLength:
		return Dismissal{}, ErrReasonTooLong
	case !ReasonValid(d.Reason):
		return Dismissal{}, ErrReasonControl
	case d.ExpiresAt != nil && d.ExpiresAt.After(MaxExpiry):
		return Dismissal{}, ErrExpiryTooFar
	}
	var out Dismissal
	err := s.WithTx(ctx, func(tx *Tx) error {
		ended, err := tx.q.TreeDismissalEnd(ctx, tx.tx, db.TreeDismissalEndParams{Site: d.Site, How: "replaced", Package: d.Package, AdvisoryID: d.AdvisoryID})
		if err != nil {
			return fmt.Errorf("dismiss advisory: end the standing one: %w", err)
		}
		r, err := tx.q.TreeDismissalCreate(ctx, tx.tx, db.TreeDismissalCreateParams{Site: d.Site, Package: d.Package, UserID: optionalID(d.UserID),
			Reason: d.Reason, ExpiresAt: d.ExpiresAt, AdvisoryID: d.AdvisoryID})
		if err != nil {
			return fmt.Errorf("dismiss advisory %q in the tree: %w", d.AdvisoryID, dismissalConstraint(err))
		}
		out = Dismissal{ID: r.ID, AdvisoryID: r.AdvisoryID, By: deref(r.UserEmail), At: r.DismissedAt, Reason: d.Reason,
			ExpiresAt: d.ExpiresAt, Dismissed: Fingerprint{Severity: r.Severity, Affected: r.Affected, FixedIn: r.FixedIn}, InForce: true}
		detail := map[string]any{"package": d.Package, "advisory": r.AdvisoryID, "dismissal": r.ID, "reason": d.Reason,
			"expires_at": d.ExpiresAt, "severity": r.Severity, "affected": r.Affected, "fixed_in": r.FixedIn, "by": deref(r.UserEmail)}
		if len(ended) > 0 {
			detail["replaced"] = ended[0].ID
		}
		return tx.auditSiteAppend(ctx, d.UserID, AuditAdvisoryDismiss, d.Site, detail)
	})
	return out, err
}

// UndismissTreeAdvisory ends site's standing tree dismissal of the
// advisory for the package ("": wherever it is in its tree), audited in
// the same transaction; ErrNotFound, unaudited, when none stands.
func (s *Store) UndismissTreeAdvisory(ctx context.Context, site int64, pkg, advisoryID string, userID int64) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		ended, err := tx.q.TreeDismissalEnd(ctx, tx.tx, db.TreeDismissalEndParams{Site: site, How: "undone", Package: pkg, AdvisoryID: advisoryID})
		if err != nil {
			return mapError(err)
		}
		if len(ended) == 0 {
			return ErrNotFound
		}
		return tx.auditSiteAppend(ctx, userID, AuditAdvisoryUndismiss, site,
			map[string]any{"package": pkg, "advisory": advisoryID, "dismissal": ended[0].ID, "reason": ended[0].Reason})
	})
}

// TreeAttentionItem is one thing in the tree that needs attention
// (upcheck_tree_attention): a counted finding by its kind, or a
// look-back finding (readmodel.KindExposed).
type TreeAttentionItem struct {
	Kind                      readmodel.AttentionKind
	Name, Version, AdvisoryID string
	Malicious, Dev            bool
}

// TreeAttention lists what in the tree needs attention under mode, most
// urgent first.
func (e *Executor) TreeAttention(ctx context.Context, site int64, mode readmodel.DevMode) ([]TreeAttentionItem, error) {
	rows, err := e.q.TreeAttention(ctx, e.dbtx, db.TreeAttentionParams{Site: site, DevMode: string(mode)})
	if err != nil {
		return nil, mapError(fmt.Errorf("list what in the tree needs attention: %w", err))
	}
	out := make([]TreeAttentionItem, len(rows))
	for i, r := range rows {
		out[i] = TreeAttentionItem{Kind: readmodel.AttentionKind(r.Kind), Name: r.Name, Version: r.Version,
			AdvisoryID: r.AdvisoryID, Malicious: r.Malicious, Dev: r.Dev}
	}
	return out, nil
}
