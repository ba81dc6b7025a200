package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

// NpmDependency is what a check keeps of the package document of a
// dependency an offered npm update adds (table npm_dependencies): its
// first publish time, its latest version, each version's publish time,
// and the document's validators for the next conditional fetch.
type NpmDependency struct {
	Registry     string `json:"registry"` // the registry's URL, no credentials
	Name         string `json:"name"`
	ETag         string `json:"etag"`
	LastModified string `json:"last_modified"`
	// FirstPublished is the package's first publish time; nil: the
	// document gives none.
	FirstPublished *time.Time           `json:"first_published"`
	Latest         string               `json:"latest"`
	Published      map[string]time.Time `json:"published"`
}

// NpmDependencies returns what is stored of names' documents from
// registry, by name; a name never stored is absent.
func (e *Executor) NpmDependencies(ctx context.Context, registry string, names []string) (map[string]NpmDependency, error) {
	rows, err := e.q.NpmDependencyList(ctx, e.dbtx, db.NpmDependencyListParams{Registry: registry, Names: orNoStrings(names)})
	if err != nil {
		return nil, mapError(fmt.Errorf("list npm dependencies: %w", err))
	}
	out := make(map[string]NpmDependency, len(rows))
	for _, r := range rows {
		d := NpmDependency{Registry: registry, Name: r.Name, ETag: r.Etag, LastModified: r.LastModified,
			FirstPublished: r.FirstPublished, Latest: r.Latest}
		if err := json.Unmarshal([]byte(r.Published), &d.Published); err != nil {
			return nil, fmt.Errorf("npm dependency %q: published: %w", r.Name, err)
		}
		out[r.Name] = d
	}
	return out, nil
}

// NpmDependencySave stores deps, in a fenced write of the check of epoch.
func (t *Tx) NpmDependencySave(ctx context.Context, deps []NpmDependency, epoch int64) error {
	rows, err := json.Marshal(deps)
	if err != nil {
		return err
	}
	return mapError(t.q.NpmDependencySave(ctx, t.tx, db.NpmDependencySaveParams{Dependencies: rows, Epoch: epoch}))
}

// NpmDependencySave is Tx.NpmDependencySave in the batch.
func (b *Batch) NpmDependencySave(deps []NpmDependency, epoch int64) {
	rows, err := json.Marshal(deps)
	if err != nil {
		b.err = err
		return
	}
	b.add(recordOne(func(r *recorder) {
		_ = db.New().NpmDependencySave(context.Background(), r, db.NpmDependencySaveParams{Dependencies: rows, Epoch: epoch})
	}))
}
