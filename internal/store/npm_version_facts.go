package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/upcheck/upcheck/internal/db"
)

// NpmProvenance is what a check read of one npm version's attestation
// bundle (table npm_provenance): the source repository its provenance
// names, normalized; "" when it names none upcheck reads.
type NpmProvenance struct {
	Registry   string `json:"registry"` // the registry's URL, no credentials
	Name       string `json:"name"`
	Version    string `json:"version"`
	Repository string `json:"repository"`
}

// NpmProvenanceOf returns the repositories stored of the versions of the
// package name from registry, by version; a version whose bundle was
// never read is absent.
func (e *Executor) NpmProvenanceOf(ctx context.Context, registry, name string, versions []string) (map[string]string, error) {
	rows, err := e.q.NpmProvenanceList(ctx, e.dbtx, db.NpmProvenanceListParams{Registry: registry, Name: name, Versions: orNoStrings(versions)})
	if err != nil {
		return nil, mapError(fmt.Errorf("list npm provenance: %w", err))
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Version] = r.Repository
	}
	return out, nil
}

// NpmProvenanceSave stores rows, in a fenced write of the check of epoch;
// a version stored already keeps its row.
func (t *Tx) NpmProvenanceSave(ctx context.Context, rows []NpmProvenance, epoch int64) error {
	raw, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	return mapError(t.q.NpmProvenanceSave(ctx, t.tx, db.NpmProvenanceSaveParams{Provenance: raw, Epoch: epoch}))
}

// NpmProvenanceSave is Tx.NpmProvenanceSave in the batch.
func (b *Batch) NpmProvenanceSave(rows []NpmProvenance, epoch int64) {
	raw, err := json.Marshal(rows)
	if err != nil {
		b.err = err
		return
	}
	b.add(recordOne(func(r *recorder) {
		_ = db.New().NpmProvenanceSave(context.Background(), r, db.NpmProvenanceSaveParams{Provenance: raw, Epoch: epoch})
	}))
}

// NpmScopeBurst is a burst a check saw across a scope (table
// npm_scope_bursts): Count versions of the scope's packages it read
// published within one npm.BurstWindow holding Version's publish time.
type NpmScopeBurst struct {
	Registry string `json:"registry"` // the registry's URL, no credentials
	Name     string `json:"name"`
	Version  string `json:"version"`
	Scope    string `json:"scope"`
	Count    int    `json:"count"`
}

// NpmScopeBursts returns every burst across a scope stored, by registry,
// then package name, then version (few: only versions that were in one).
func (e *Executor) NpmScopeBursts(ctx context.Context) (map[string]map[string]map[string]NpmScopeBurst, error) {
	rows, err := e.q.NpmScopeBurstList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list npm scope bursts: %w", err))
	}
	out := map[string]map[string]map[string]NpmScopeBurst{}
	for _, r := range rows {
		if out[r.Registry] == nil {
			out[r.Registry] = map[string]map[string]NpmScopeBurst{}
		}
		if out[r.Registry][r.Name] == nil {
			out[r.Registry][r.Name] = map[string]NpmScopeBurst{}
		}
		out[r.Registry][r.Name][r.Version] = NpmScopeBurst{Registry: r.Registry, Name: r.Name, Version: r.Version, Scope: r.Scope,
			Count: int(r.Count)}
	}
	return out, nil
}

// NpmScopeBurstSave stores bursts, in a fenced write of the check of
// epoch; a version keeps the most any check saw.
func (t *Tx) NpmScopeBurstSave(ctx context.Context, bursts []NpmScopeBurst, epoch int64) error {
	raw, err := json.Marshal(bursts)
	if err != nil {
		return err
	}
	return mapError(t.q.NpmScopeBurstSave(ctx, t.tx, db.NpmScopeBurstSaveParams{Bursts: raw, Epoch: epoch}))
}
