package store

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

// ComponentKey names one site's component: its site (sites.id) and code.
type ComponentKey struct {
	Site int64
	Code string
}

// ResultWrite writes evaluations in one statement and returns the
// components written, in the order given. A result evaluated from inputs
// that are no longer current is not written (see
// queries/component_results.sql).
func (t *Tx) ResultWrite(ctx context.Context, results []Result) ([]ComponentKey, error) {
	if len(results) == 0 {
		return nil, nil
	}
	rows, err := resultRows(results)
	if err != nil {
		return nil, err
	}
	keys, err := t.q.ResultWrite(ctx, t.tx, rows)
	if err != nil {
		return nil, mapError(err)
	}
	return WrittenOf(results, writtenKeys(keys)), nil
}

// resultRow is one result as queries/component_results.sql's ResultWrite
// reads it from its JSON array (jsonb_populate_recordset over the table's
// row type): a key per column, absent for NULL.
type resultRow struct {
	SiteID              int64           `json:"site_id"`
	Code                string          `json:"code"`
	SourceURL           string          `json:"source_url"`
	InstalledVersion    string          `json:"installed_version"`
	CoreVersion         string          `json:"core_version"`
	DocumentHash        string          `json:"document_hash"` // bytea's hex form
	VerifiedKey         string          `json:"verified_key,omitempty"`
	LatestVersion       string          `json:"latest_version,omitempty"`
	UpdateVersion       string          `json:"update_version,omitempty"`
	SecurityVersion     string          `json:"security_version,omitempty"`
	SecurityVersions    []string        `json:"security_versions"`
	UpdateAvailable     bool            `json:"update_available"`
	Security            bool            `json:"security"`
	NeedsNewerCore      bool            `json:"needs_newer_core"`
	RequiredCore        string          `json:"required_core,omitempty"`
	Advisories          json.RawMessage `json:"advisories"`
	AdvisoryIDs         []string        `json:"advisory_ids"`
	NoFixIDs            []string        `json:"no_fix_ids"`
	Evaluation          json.RawMessage `json:"evaluation,omitempty"`
	ReleaseURL          string          `json:"release_url,omitempty"`
	EvalError           string          `json:"eval_error,omitempty"`
	Epoch               int64           `json:"epoch"`
	Deprecated          string          `json:"deprecated,omitempty"`
	ProvenanceLost      string          `json:"provenance_lost,omitempty"`
	RegistryFacts       json.RawMessage `json:"registry_facts,omitempty"`
	IntelVersion        int64           `json:"intel_version"`
	ExploitedIDs        []string        `json:"exploited_ids"`
	MaliciousIDs        []string        `json:"malicious_ids"`
	Policy              string          `json:"policy,omitempty"`
	SkippedVersion      string          `json:"skipped_version,omitempty"`
	Approvals           string          `json:"approvals"`
	WaitingVersion      string          `json:"waiting_version,omitempty"`
	WaitingUntil        *time.Time      `json:"waiting_until,omitempty"`
	HeldVersion         string          `json:"held_version,omitempty"`
	HeldReason          json.RawMessage `json:"held_reason,omitempty"`
	NextChangeAt        *time.Time      `json:"next_change_at,omitempty"`
	NewPublisherVersion string          `json:"new_publisher_version,omitempty"`
	NewPublisher        string          `json:"new_publisher,omitempty"`
	FixIDs              []string        `json:"fix_ids"`
	FixVersion          string          `json:"fix_version,omitempty"`
}

// resultRows encodes results for ResultWrite. A site's code given twice
// is an error of the caller: one statement cannot write a row twice.
func resultRows(results []Result) ([]byte, error) {
	rows := make([]resultRow, len(results))
	seen := make(map[ComponentKey]bool, len(results))
	for i, r := range results {
		k := r.Key()
		if seen[k] {
			return nil, fmt.Errorf("store: result of %q (site %d) given twice in one write", r.Code, r.Site)
		}
		seen[k] = true
		rows[i] = resultRow{
			SiteID: r.Site, Code: r.Code, SourceURL: r.SourceURL, InstalledVersion: r.InstalledVersion, CoreVersion: r.CoreVersion,
			DocumentHash: `\x` + hex.EncodeToString(r.DocumentHash), VerifiedKey: r.VerifiedKey,
			LatestVersion: r.LatestVersion, UpdateVersion: r.UpdateVersion, SecurityVersion: r.SecurityVersion,
			SecurityVersions: orNoStrings(r.SecurityVersions), UpdateAvailable: r.UpdateAvailable, Security: r.Security,
			NeedsNewerCore: r.NeedsNewerCore, RequiredCore: r.RequiredCore, Advisories: orEmptyArray(r.Advisories), Evaluation: r.Evaluation,
			AdvisoryIDs: orNoStrings(r.AdvisoryIDs), NoFixIDs: orNoStrings(r.NoFixIDs),
			ReleaseURL: r.ReleaseURL, EvalError: r.EvalError, Epoch: r.Epoch,
			Deprecated: r.Deprecated, ProvenanceLost: r.ProvenanceLost, RegistryFacts: r.RegistryFacts,
			IntelVersion: r.IntelVersion, ExploitedIDs: orNoStrings(r.ExploitedIDs), MaliciousIDs: orNoStrings(r.MaliciousIDs),
			Policy: r.Policy, SkippedVersion: r.SkippedVersion, Approvals: r.Approvals, WaitingVersion: r.WaitingVersion,
			WaitingUntil: r.WaitingUntil, HeldVersion: r.HeldVersion, HeldReason: r.HeldReason,
			NextChangeAt: r.NextChangeAt, NewPublisherVersion: r.NewPublisherVersion, NewPublisher: r.NewPublisher,
			FixIDs: orNoStrings(r.FixIDs), FixVersion: r.FixVersion,
		}
	}
	return json.Marshal(rows)
}

// Key names the result's component.
func (r Result) Key() ComponentKey { return ComponentKey{Site: r.Site, Code: r.Code} }

// WrittenOf returns the components of written that are results', in the
// order the results were given (a statement's RETURNING has no order):
// what one caller's share of a shared write wrote.
func WrittenOf(results []Result, written []ComponentKey) []ComponentKey {
	if len(written) == 0 {
		return nil
	}
	in := make(map[ComponentKey]bool, len(written))
	for _, k := range written {
		in[k] = true
	}
	out := make([]ComponentKey, 0, len(written))
	for _, r := range results {
		if in[r.Key()] {
			out = append(out, r.Key())
		}
	}
	return out
}

// CodesOf are the codes of keys that are site's, in their order.
func CodesOf(keys []ComponentKey, site int64) []string {
	var out []string
	for _, k := range keys {
		if k.Site == site {
			out = append(out, k.Code)
		}
	}
	return out
}

func writtenKeys(rows []db.ResultWriteRow) []ComponentKey {
	out := make([]ComponentKey, len(rows))
	for i, r := range rows {
		out[i] = ComponentKey{Site: r.SiteID, Code: r.Code}
	}
	return out
}
