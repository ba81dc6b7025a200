package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/db"
)

// Component is one installed component. SourceURL and PinnedKey are empty
// when not set.
type Component struct {
	Code             string
	Name             string
	InstalledVersion string
	SourceURL        string
	PinnedKey        string
}

// Source is one update source as stored.
type Source struct {
	URL                 string
	Document            []byte // nil until a valid document was received
	Signature           string
	Sequence            *int64
	SequenceKey         string
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
}

// Result is one component's evaluation as written by a check. Advisories
// and Evaluation are JSON.
type Result struct {
	Code             string
	SourceURL        string
	InstalledVersion string
	LatestVersion    string
	UpdateVersion    string
	UpdateAvailable  bool
	Security         bool
	NeedsNewerCore   bool
	RequiredCore     string
	Vulnerable       bool
	Advisories       []byte
	Evaluation       []byte
	ReleaseURL       string
	Stale            bool
	// Succeeded stamps the result's last success (database clock); false
	// keeps the stored one (an evaluation error).
	Succeeded bool
	LastError string
	Epoch     int64
}

// RunCounts are a check's per-source tallies.
type RunCounts struct {
	Fetched, NotModified, Failed, Skipped int
}

// Components lists every installed component, ordered by code.
func (s *Store) Components(ctx context.Context) ([]Component, error) {
	rows, err := s.q.ComponentList(ctx, s.pool)
	if err != nil {
		return nil, mapError(fmt.Errorf("list components: %w", err))
	}
	out := make([]Component, len(rows))
	for i, r := range rows {
		out[i] = Component{Code: r.Code, Name: r.Name, InstalledVersion: r.InstalledVersion, SourceURL: deref(r.SourceUrl), PinnedKey: deref(r.PinnedKey)}
	}
	return out, nil
}

// Component reads one installed component; ErrNotFound when it is not
// installed.
func (s *Store) Component(ctx context.Context, code string) (Component, error) {
	r, err := s.q.ComponentGet(ctx, s.pool, code)
	if err != nil {
		return Component{}, mapError(err)
	}
	return Component{Code: r.Code, Name: r.Name, InstalledVersion: r.InstalledVersion, SourceURL: deref(r.SourceUrl), PinnedKey: deref(r.PinnedKey)}, nil
}

// Sources lists every stored source.
func (s *Store) Sources(ctx context.Context) ([]Source, error) {
	rows, err := s.q.SourceList(ctx, s.pool)
	if err != nil {
		return nil, mapError(fmt.Errorf("list sources: %w", err))
	}
	out := make([]Source, len(rows))
	for i, r := range rows {
		out[i] = sourceFromRow(db.Source(r))
	}
	return out, nil
}

// Source reads one stored source; ErrNotFound when it was never written.
func (t *Tx) Source(ctx context.Context, url string) (Source, error) {
	r, err := t.q.SourceGet(ctx, t.tx, url)
	if err != nil {
		return Source{}, mapError(err)
	}
	return sourceFromRow(db.Source(r)), nil
}

func sourceFromRow(r db.Source) Source {
	return Source{
		URL: r.Url, Document: r.Document, Signature: deref(r.Signature), Sequence: r.Sequence,
		SequenceKey: deref(r.SequenceKey), ETag: deref(r.Etag), LastModified: deref(r.LastModified),
		ExpiresAt: r.ExpiresAt, FetchedAt: r.FetchedAt, LastSuccessAt: r.LastSuccessAt,
		LastAttemptAt: r.LastAttemptAt, LastError: deref(r.LastError), LastErrorAt: r.LastErrorAt,
		ConsecutiveFailures: int(r.ConsecutiveFailures), SignatureState: r.SignatureState, Epoch: r.Epoch,
	}
}

// SourceSaveDocument stores a new valid document and clears the source's
// error state.
func (t *Tx) SourceSaveDocument(ctx context.Context, d SourceDocument) error {
	err := t.q.SourceSaveDocument(ctx, t.tx, db.SourceSaveDocumentParams{
		Url: d.URL, Document: d.Document, Signature: ref(d.Signature), Sequence: &d.Sequence,
		SequenceKey: ref(d.SequenceKey), Etag: ref(d.ETag), LastModified: ref(d.LastModified),
		ExpiresAt: d.ExpiresAt, SignatureState: d.SignatureState, Epoch: d.Epoch,
	})
	return mapError(err)
}

// SourceSaveUnchanged records a success that keeps the stored document.
func (t *Tx) SourceSaveUnchanged(ctx context.Context, url, etag, lastModified string, epoch int64) error {
	return mapError(t.q.SourceSaveUnchanged(ctx, t.tx, db.SourceSaveUnchangedParams{
		Url: url, Etag: ref(etag), LastModified: ref(lastModified), Epoch: epoch,
	}))
}

// SourceSaveFailure records a failed fetch or a refused document; the stored
// document stays.
func (t *Tx) SourceSaveFailure(ctx context.Context, url, message string, epoch int64) error {
	return mapError(t.q.SourceSaveFailure(ctx, t.tx, db.SourceSaveFailureParams{Url: url, Error: &message, Epoch: epoch}))
}

// ResultUpsert writes one evaluation. It reports false when the component is
// no longer installed at that version and source (nothing written).
func (t *Tx) ResultUpsert(ctx context.Context, r Result) (bool, error) {
	n, err := t.q.ResultUpsert(ctx, t.tx, db.ResultUpsertParams{
		Code: r.Code, SourceUrl: ref(r.SourceURL), InstalledVersion: r.InstalledVersion,
		LatestVersion: ref(r.LatestVersion), UpdateVersion: ref(r.UpdateVersion),
		UpdateAvailable: r.UpdateAvailable, Security: r.Security, NeedsNewerCore: r.NeedsNewerCore,
		RequiredCore: ref(r.RequiredCore), Vulnerable: r.Vulnerable, Advisories: orEmptyArray(r.Advisories),
		Evaluation: r.Evaluation, ReleaseUrl: ref(r.ReleaseURL), Stale: r.Stale,
		Succeeded: r.Succeeded, LastError: ref(r.LastError), Epoch: r.Epoch,
	})
	return n == 1, mapError(err)
}

// ResultRecordFailure marks every component of a failing source with the
// error; their last evaluation and last success stay.
func (t *Tx) ResultRecordFailure(ctx context.Context, sourceURL, message string, epoch int64) error {
	_, err := t.q.ResultRecordFailure(ctx, t.tx, db.ResultRecordFailureParams{SourceUrl: sourceURL, Error: message, Epoch: epoch})
	return mapError(err)
}

// CleanUp deletes results and sources of components no longer installed.
func (t *Tx) CleanUp(ctx context.Context) (results, sources int64, err error) {
	if results, err = t.q.ResultDeleteOrphans(ctx, t.tx); err != nil {
		return 0, 0, mapError(err)
	}
	sources, err = t.q.SourceDeleteOrphans(ctx, t.tx)
	return results, sources, mapError(err)
}

// ComponentUpsert inserts or updates a component from the manifest.
func (t *Tx) ComponentUpsert(ctx context.Context, c Component) error {
	return mapError(t.q.ComponentUpsert(ctx, t.tx, db.ComponentUpsertParams{
		Code: c.Code, Name: c.Name, InstalledVersion: c.InstalledVersion, SourceUrl: ref(c.SourceURL), PinnedKey: ref(c.PinnedKey),
	}))
}

// ComponentDeleteMissing deletes the components whose code is not in codes.
func (t *Tx) ComponentDeleteMissing(ctx context.Context, codes []string) (int64, error) {
	n, err := t.q.ComponentDeleteMissing(ctx, t.tx, codes)
	return n, mapError(err)
}

// CheckRunStart records a check that acquired the lease, as running.
func (s *Store) CheckRunStart(ctx context.Context, trigger, actor string, owner uuid.UUID, epoch int64) (int64, error) {
	id, err := s.q.CheckRunStart(ctx, s.pool, db.CheckRunStartParams{
		Trigger: trigger, Actor: ref(actor), Owner: uuid.NullUUID{UUID: owner, Valid: true}, Epoch: &epoch,
	})
	return id, mapError(err)
}

// CheckRunRecordRefused records a check that did not get the lease.
func (s *Store) CheckRunRecordRefused(ctx context.Context, trigger, actor, status string) error {
	_, err := s.q.CheckRunRecordRefused(ctx, s.pool, db.CheckRunRecordRefusedParams{Trigger: trigger, Actor: ref(actor), Status: status})
	return mapError(err)
}

// CheckRunFinish records how a running check ended.
func (s *Store) CheckRunFinish(ctx context.Context, id int64, status string, c RunCounts, message string) error {
	return mapError(s.q.CheckRunFinish(ctx, s.pool, db.CheckRunFinishParams{
		ID: id, Status: status, SourcesFetched: int32(c.Fetched), SourcesNotModified: int32(c.NotModified),
		SourcesFailed: int32(c.Failed), SourcesSkipped: int32(c.Skipped), Error: ref(message),
	}))
}

// SettingEnsure stores value for key unless one is stored, and returns the
// stored value.
func (s *Store) SettingEnsure(ctx context.Context, key, value string) (string, error) {
	v, err := s.q.SettingEnsure(ctx, s.pool, db.SettingEnsureParams{Key: key, Value: value})
	if errors.Is(err, pgx.ErrNoRows) {
		// Another instance inserted it after this statement's snapshot was
		// taken; it has committed now (ON CONFLICT waited for it).
		v, err = s.q.SettingGet(ctx, s.pool, key)
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
