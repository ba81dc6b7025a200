package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// Component is one installed component. SourceURL and PinnedKey are empty
// when not set.
type Component struct {
	// Site is the site that installs it (sites.id).
	Site             int64
	Code             string
	Name             string
	InstalledVersion string
	SourceURL        string
	PinnedKey        string
	// Package is the npm package the component is, for the feeds'
	// advisories (components.package); "" none.
	Package string
	// Policy is the component's policy as release.Policy.Text writes it
	// (components.policy); "" every release at once.
	Policy string
}

// Source is one update source as stored.
type Source struct {
	URL                 string
	Document            []byte // nil until a valid document was received
	DocumentHash        []byte // sha256 of Document, computed by the database
	Signature           string
	Sequence            *int64
	SequenceKey         string // the pinned key Document was accepted under
	ETag                string
	LastModified        string
	ExpiresAt           *time.Time
	FetchedAt           *time.Time
	LastSuccessAt       *time.Time
	LastAttemptAt       *time.Time
	LastError           string
	LastErrorAt         *time.Time
	ConsecutiveFailures int
	SignatureState      string
	Epoch               int64
	// Registry is an npm source's registry URL ("" for other kinds).
	Registry string
}

// SourceDocument is a newly received valid document and its validators.
type SourceDocument struct {
	URL            string
	Document       []byte
	Signature      string
	Sequence       int64
	SequenceKey    string
	ETag           string
	LastModified   string
	ExpiresAt      *time.Time
	SignatureState string
	Epoch          int64
	VerifiedBy     string // the short forms of the keys that verified it, space separated
	// Registry is an npm source's registry URL, never with credentials
	// ("" for other kinds).
	Registry string
}

// saveDocumentParams are the statement's parameters for d, for the
// transaction and the batch alike.
func saveDocumentParams(d SourceDocument) db.SourceSaveDocumentParams {
	return db.SourceSaveDocumentParams{
		Url: d.URL, Document: d.Document, Signature: ref(d.Signature), Sequence: &d.Sequence,
		SequenceKey: ref(d.SequenceKey), Etag: ref(d.ETag), LastModified: ref(d.LastModified),
		ExpiresAt: d.ExpiresAt, SignatureState: d.SignatureState, Epoch: d.Epoch, VerifiedBy: ref(d.VerifiedBy),
		Registry: ref(d.Registry),
	}
}

// Result is one component's evaluation, with the inputs it was evaluated
// from: a write lands only while they are the current ones (see
// queries/component_results.sql). Advisories and Evaluation are JSON.
type Result struct {
	// Site is the site whose component Code is (sites.id): one source's
	// document evaluates every site's components that use it.
	Site             int64
	Code             string
	SourceURL        string
	InstalledVersion string
	CoreVersion      string // the installed core evaluated against
	DocumentHash     []byte // the stored document evaluated
	VerifiedKey      string // the pinned key the document verified under; "" unsigned
	LatestVersion    string
	UpdateVersion    string
	SecurityVersion  string   // the newest security release, installable or not
	SecurityVersions []string // every security release newer than InstalledVersion (the exposure clock's)
	UpdateAvailable  bool
	Security         bool
	NeedsNewerCore   bool
	RequiredCore     string
	Advisories       []byte   // every advisory affecting InstalledVersion, JSON
	AdvisoryIDs      []string // their ids
	NoFixIDs         []string // the ids of those with no fixed version
	Evaluation       []byte
	ReleaseURL       string
	// EvalError says why the component could not be evaluated from the
	// document; the source itself may be fine.
	EvalError string
	Epoch     int64
	// npm sources: the deprecation message of the installed version, the
	// newest offered version that lost the installed one's provenance
	// ("" when none), and the registry's facts (readmodel.RegistryFacts,
	// JSON; nil for other kinds).
	Deprecated, ProvenanceLost string
	RegistryFacts              []byte
	// The feeds (docs/feeds.md): the version of their advisories evaluated
	// with (a write is refused when a later change affected the
	// component), and the ids of the advisories known exploited and of
	// those that say the package is malicious.
	IntelVersion               int64
	ExploitedIDs, MaliciousIDs []string
	// The policy (docs/policy.md): the policy and skip evaluated under
	// (inputs: a write is refused when they changed), then what the policy
	// held back, and when the offer changes with time (nil: never).
	Policy, SkippedVersion string
	// Approvals are the component's approvals it was evaluated under
	// (ComponentInput.Approvals), an input the guarded write compares.
	Approvals      string
	WaitingVersion string
	WaitingUntil   *time.Time
	HeldVersion    string
	HeldReason     json.RawMessage // release.Reason's JSON; nil with no HeldVersion
	NextChangeAt   *time.Time
	// npm: the offered version published by an account new to the
	// package, and that account ("" none).
	NewPublisherVersion, NewPublisher string
	// The advisories a release the hold allows clears (a security update
	// while one is open), and the oldest release the policy offers and
	// the installed core runs that clears all of them ("" none;
	// docs/policy.md).
	FixIDs     []string
	FixVersion string
}

// RunCounts are a check's per-source tallies. Skipped counts the sources
// whose outcome was not written because the check stopped first; Unwritten
// is how many of them had been fetched (the others were never started).
type RunCounts struct {
	Fetched, NotModified, Failed, Skipped, Unwritten int
}

// Key names the component.
func (c Component) Key() ComponentKey { return ComponentKey{Site: c.Site, Code: c.Code} }

// Components lists every installed component of site, ordered by code.
func (e *Executor) Components(ctx context.Context, site int64) ([]Component, error) {
	rows, err := e.q.ComponentList(ctx, e.dbtx, site)
	if err != nil {
		return nil, mapError(fmt.Errorf("list components: %w", err))
	}
	out := make([]Component, len(rows))
	for i, r := range rows {
		out[i] = Component{Site: site, Code: r.Code, Name: r.Name, InstalledVersion: r.InstalledVersion, SourceURL: deref(r.SourceUrl), PinnedKey: deref(r.PinnedKey), Package: deref(r.Package),
			Policy: deref(r.Policy)}
	}
	return out, nil
}

// FleetComponents lists every site's installed components, ordered by
// site and code: what a check fetches for.
func (e *Executor) FleetComponents(ctx context.Context) ([]Component, error) {
	rows, err := e.q.ComponentListFleet(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the fleet's components: %w", err))
	}
	out := make([]Component, len(rows))
	for i, r := range rows {
		out[i] = Component{Site: r.SiteID, Code: r.Code, Name: r.Name, InstalledVersion: r.InstalledVersion, SourceURL: deref(r.SourceUrl),
			PinnedKey: deref(r.PinnedKey), Package: deref(r.Package), Policy: deref(r.Policy)}
	}
	return out, nil
}

// Component reads one installed component of site; ErrNotFound when it
// is not installed.
func (e *Executor) Component(ctx context.Context, site int64, code string) (Component, error) {
	r, err := e.q.ComponentGet(ctx, e.dbtx, db.ComponentGetParams{Site: site, Code: code})
	if err != nil {
		return Component{}, mapError(err)
	}
	return Component{Site: site, Code: r.Code, Name: r.Name, InstalledVersion: r.InstalledVersion, SourceURL: deref(r.SourceUrl), PinnedKey: deref(r.PinnedKey), Package: deref(r.Package),
		Policy: deref(r.Policy)}, nil
}

// Sources lists every stored source.
func (e *Executor) Sources(ctx context.Context) ([]Source, error) {
	rows, err := e.q.SourceList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list sources: %w", err))
	}
	out := make([]Source, len(rows))
	for i, r := range rows {
		out[i] = sourceFromRow(db.SourceGetRow(r))
	}
	return out, nil
}

// Source reads one stored source; ErrNotFound when it was never written.
func (e *Executor) Source(ctx context.Context, url string) (Source, error) {
	r, err := e.q.SourceGet(ctx, e.dbtx, url)
	if err != nil {
		return Source{}, mapError(err)
	}
	return sourceFromRow(r), nil
}

func sourceFromRow(r db.SourceGetRow) Source {
	return Source{
		URL: r.Url, Document: r.Document, DocumentHash: r.DocumentHash, Signature: deref(r.Signature), Sequence: r.Sequence,
		SequenceKey: deref(r.SequenceKey), ETag: deref(r.Etag), LastModified: deref(r.LastModified),
		ExpiresAt: r.ExpiresAt, FetchedAt: r.FetchedAt, LastSuccessAt: r.LastSuccessAt,
		LastAttemptAt: r.LastAttemptAt, LastError: deref(r.LastError), LastErrorAt: r.LastErrorAt,
		ConsecutiveFailures: int(r.ConsecutiveFailures), SignatureState: r.SignatureState, Epoch: r.Epoch,
		Registry: deref(r.Registry),
	}
}

// SourceSequences returns the rollback state: source URL -> pinned key
// ("" for unsigned) -> the highest sequence accepted under that key.
func (e *Executor) SourceSequences(ctx context.Context) (map[string]map[string]int64, error) {
	rows, err := e.q.SourceSequenceList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list source sequences: %w", err))
	}
	out := make(map[string]map[string]int64)
	for _, r := range rows {
		if out[r.Url] == nil {
			out[r.Url] = make(map[string]int64)
		}
		out[r.Url][r.Key] = r.Sequence
	}
	return out, nil
}

// ComponentsUnevaluated lists the components of site that need an
// evaluation from their source's stored document, ordered by source.
func (e *Executor) ComponentsUnevaluated(ctx context.Context, site int64) ([]Unevaluated, error) {
	rows, err := e.q.ComponentListUnevaluated(ctx, e.dbtx, site)
	if err != nil {
		return nil, mapError(fmt.Errorf("list unevaluated components: %w", err))
	}
	out := make([]Unevaluated, len(rows))
	for i, r := range rows {
		out[i] = Unevaluated{Site: r.SiteID, Code: r.Code, InstalledVersion: r.InstalledVersion, SourceURL: r.SourceUrl, PinnedKey: deref(r.PinnedKey),
			Package: r.Package, Policy: r.Policy, Skipped: r.SkippedVersion, Approvals: r.Approvals}
	}
	return out, nil
}

// SourceSaveDocument stores a new valid document, clears the source's error
// state and raises its rollback state. It returns how many components use
// the source now.
func (t *Tx) SourceSaveDocument(ctx context.Context, d SourceDocument) (int, error) {
	n, err := t.q.SourceSaveDocument(ctx, t.tx, saveDocumentParams(d))
	if err != nil {
		return 0, mapError(err)
	}
	err = t.q.SourceSequenceRecord(ctx, t.tx, db.SourceSequenceRecordParams{Url: d.URL, Key: d.SequenceKey, Sequence: d.Sequence, Epoch: d.Epoch})
	return int(n), mapError(err)
}

// Unchanged is a success that keeps a source's stored document: its
// validators and, for an npm source, its trust as judged now
// (SignatureState "" keeps the stored one and VerifiedBy with it).
type Unchanged struct {
	URL, ETag, LastModified    string
	Epoch                      int64
	SignatureState, VerifiedBy string
}

func (u Unchanged) params() db.SourceSaveUnchangedParams {
	p := db.SourceSaveUnchangedParams{Url: u.URL, Etag: ref(u.ETag), LastModified: ref(u.LastModified), Epoch: u.Epoch}
	if u.SignatureState != "" {
		p.SignatureState, p.VerifiedBy = &u.SignatureState, ref(u.VerifiedBy)
	}
	return p
}

// SourceSaveUnchanged records a success that keeps the stored document and
// returns how many components use the source now.
func (t *Tx) SourceSaveUnchanged(ctx context.Context, u Unchanged) (int, error) {
	n, err := t.q.SourceSaveUnchanged(ctx, t.tx, u.params())
	return int(n), mapError(err)
}

// SourceFailure is why a fetch gave no usable document: the kind the
// pages word (readmodel.ErrorKind), the arguments its sentence needs, and
// the technical text.
type SourceFailure struct {
	Kind, Detail string
	Args         readmodel.FailureArgs
}

// SourceSaveFailure records a failed fetch or a refused document (the
// stored document stays) and returns how many components use the source.
func (t *Tx) SourceSaveFailure(ctx context.Context, url string, f SourceFailure, epoch int64) (int, error) {
	args, err := failureArgsJSON(f.Args)
	if err != nil {
		return 0, err
	}
	n, err := t.q.SourceSaveFailure(ctx, t.tx, db.SourceSaveFailureParams{
		Url: url, Error: &f.Detail, Kind: &f.Kind, Args: args, Epoch: epoch,
	})
	return int(n), mapError(err)
}

// CleanUp deletes the results of components no longer installed, starts or
// stops the 30-day retention of sources no component uses, and deletes the
// sources whose retention ran out.
func (t *Tx) CleanUp(ctx context.Context, epoch int64) (results, sources int64, err error) {
	if results, err = t.q.ResultDeleteOrphans(ctx, t.tx); err != nil {
		return 0, 0, mapError(err)
	}
	if _, err = t.q.SourceMarkUse(ctx, t.tx, epoch); err != nil {
		return 0, 0, mapError(err)
	}
	sources, err = t.q.SourceDeleteUnused(ctx, t.tx)
	return results, sources, mapError(err)
}

// ComponentUpsertMany inserts or updates components of site from its
// manifest or lockfile in one statement and reports how many rows changed.
func (t *Tx) ComponentUpsertMany(ctx context.Context, site int64, cs []Component) (int64, error) {
	p := db.ComponentUpsertManyParams{
		Site:  site,
		Codes: make([]string, len(cs)), Names: make([]string, len(cs)), InstalledVersions: make([]string, len(cs)),
		SourceUrls: make([]string, len(cs)), PinnedKeys: make([]string, len(cs)), Packages: make([]string, len(cs)),
		Policies: make([]string, len(cs)),
	}
	for i, c := range cs {
		p.Codes[i], p.Names[i], p.InstalledVersions[i], p.SourceUrls[i], p.PinnedKeys[i] = c.Code, c.Name, c.InstalledVersion, c.SourceURL, c.PinnedKey
		p.Packages[i], p.Policies[i] = c.Package, c.Policy
	}
	n, err := t.q.ComponentUpsertMany(ctx, t.tx, p)
	return n, mapError(err)
}

// ComponentDelete deletes the components of site with the given codes.
func (t *Tx) ComponentDelete(ctx context.Context, site int64, codes []string) (int64, error) {
	n, err := t.q.ComponentDelete(ctx, t.tx, db.ComponentDeleteParams{Site: site, Codes: codes})
	return n, mapError(err)
}

// CheckRunStart records a check that acquired the lease, as running.
func (e *Executor) CheckRunStart(ctx context.Context, trigger, actor string, owner uuid.UUID, epoch int64) (int64, error) {
	id, err := e.q.CheckRunStart(ctx, e.dbtx, db.CheckRunStartParams{
		Trigger: trigger, Actor: ref(actor), Owner: uuid.NullUUID{UUID: owner, Valid: true}, Epoch: &epoch,
	})
	return id, mapError(err)
}

// CheckRunRecordRefused records a check that did not get the lease.
func (e *Executor) CheckRunRecordRefused(ctx context.Context, trigger, actor, status string) error {
	_, err := e.q.CheckRunRecordRefused(ctx, e.dbtx, db.CheckRunRecordRefusedParams{Trigger: trigger, Actor: ref(actor), Status: status})
	return mapError(err)
}

// CheckRunFinish records how a running check ended. A check records it in
// its last transaction, the one that also gives its lease back
// (lease.Manager.Settle), so that the run never reads as abandoned between
// the two.
func (e *Executor) CheckRunFinish(ctx context.Context, id int64, status string, c RunCounts, message string) error {
	return mapError(e.q.CheckRunFinish(ctx, e.dbtx, db.CheckRunFinishParams{
		ID: id, Status: status, SourcesFetched: int32(c.Fetched), SourcesNotModified: int32(c.NotModified),
		SourcesFailed: int32(c.Failed), SourcesSkipped: int32(c.Skipped), SourcesUnwritten: int32(c.Unwritten), Error: ref(message),
	}))
}

// SettingEnsure stores value for key unless one is stored, and returns the
// stored value.
func (e *Executor) SettingEnsure(ctx context.Context, key, value string) (string, error) {
	v, err := e.q.SettingEnsure(ctx, e.dbtx, db.SettingEnsureParams{Key: key, Value: value})
	if errors.Is(err, pgx.ErrNoRows) {
		// Another instance inserted it after this statement's snapshot was
		// taken; it has committed now (ON CONFLICT waited for it).
		v, err = e.q.SettingGet(ctx, e.dbtx, key)
	}
	return v, mapError(err)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ref maps "" to NULL.
func ref(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func orEmptyArray(b []byte) []byte {
	if len(b) == 0 {
		return []byte("[]")
	}
	return b
}

// orNoStrings sends an empty array, never NULL, for a nil slice.
func orNoStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
