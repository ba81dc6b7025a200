package store

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

// TreeFixDocument is what the fixes of the tree's findings read of one
// package's registry document (remedy.Document as JSON), kept between
// checks with the validators of its last fetch.
type TreeFixDocument struct {
	Name string
	// Floor is the lowest release kept.
	Floor              string
	ETag, LastModified string
	// Document is the JSON kept; nil in a save when the registry answered
	// 304 (the stored one stays, with its floor).
	Document []byte
	// FetchedAt is when the registry last answered for it (a read's; a
	// save's is the database clock at the write).
	FetchedAt time.Time
}

// TreeFixDocuments returns the stored documents of the packages named, by
// name.
func (e *Executor) TreeFixDocuments(ctx context.Context, names []string) (map[string]TreeFixDocument, error) {
	rows, err := e.q.TreeFixDocumentList(ctx, e.dbtx, orNoStrings(names))
	if err != nil {
		return nil, mapError(fmt.Errorf("list tree fix documents: %w", err))
	}
	out := make(map[string]TreeFixDocument, len(rows))
	for _, r := range rows {
		out[r.Name] = TreeFixDocument{Name: r.Name, Floor: r.Floor, ETag: r.Etag, LastModified: r.LastModified, Document: r.Document,
			FetchedAt: r.FetchedAt}
	}
	return out, nil
}

// TreeFix is the fix decided for one finding on the tree: remedy.Fix as
// JSON (readmodel.TreeFix reads it).
type TreeFix struct {
	PackageID, AdvisoryID string
	Fix                   []byte
	// Direct: the finding is on a direct dependency of the site, not in a
	// component's dependencies.
	Direct    bool
	DecidedAt time.Time
}

// TreeFixes returns every finding's fix, by package instance and advisory.
func (e *Executor) TreeFixes(ctx context.Context, site int64) ([]TreeFix, error) {
	rows, err := e.q.TreeFixList(ctx, e.dbtx, site)
	if err != nil {
		return nil, mapError(fmt.Errorf("list tree fixes: %w", err))
	}
	out := make([]TreeFix, len(rows))
	for i, r := range rows {
		out[i] = TreeFix{PackageID: r.PackageID, AdvisoryID: r.AdvisoryID, Fix: r.Fix, Direct: r.Direct, DecidedAt: r.DecidedAt}
	}
	return out, nil
}

// TreeFixDocumentsSave writes the documents a check's fix step fetched
// for the whole fleet, in its fenced transaction: the documents fetched
// (or their validators, after a 304), and the documents of no other
// package than those named by keep.
func (t *Tx) TreeFixDocumentsSave(ctx context.Context, docs []TreeFixDocument, keep []string, epoch int64) error {
	for _, d := range docs {
		err := t.q.TreeFixDocumentSave(ctx, t.tx, db.TreeFixDocumentSaveParams{Name: d.Name, Floor: d.Floor, Etag: d.ETag,
			LastModified: d.LastModified, Document: d.Document, Epoch: epoch})
		if err != nil {
			return mapError(fmt.Errorf("save the tree fix document of %s: %w", d.Name, err))
		}
	}
	if err := t.q.TreeFixDocumentKeep(ctx, t.tx, orNoStrings(keep)); err != nil {
		return mapError(fmt.Errorf("drop tree fix documents: %w", err))
	}
	return nil
}

// TreeFixesSave writes the fixes a check decided on site's tree, in its
// fenced transaction: they replace every earlier one of the site, and a
// fix of a package instance no longer in the tree is passed over. With a
// treeHash (TreeFixInput's), nothing is written, and false returned, when
// the site's tree moved since it was read: fixes decided on one tree are
// never written beside another's.
func (t *Tx) TreeFixesSave(ctx context.Context, site int64, treeHash []byte, fixes []TreeFix, epoch int64) (bool, error) {
	if treeHash != nil {
		same, err := t.q.TreeFixSiteIs(ctx, t.tx, db.TreeFixSiteIsParams{Site: site, TreeHash: treeHash})
		if err != nil || !same {
			return false, mapError(err)
		}
	}
	if err := t.q.TreeFixClear(ctx, t.tx, site); err != nil {
		return false, mapError(fmt.Errorf("clear tree fixes: %w", err))
	}
	p := db.TreeFixSaveParams{Site: site, Epoch: epoch, PackageIds: make([]string, len(fixes)), AdvisoryIds: make([]string, len(fixes)),
		Fixes: make([][]byte, len(fixes)), Directs: make([]bool, len(fixes))}
	for i, f := range fixes {
		p.PackageIds[i], p.AdvisoryIds[i], p.Fixes[i], p.Directs[i] = f.PackageID, f.AdvisoryID, f.Fix, f.Direct
	}
	if err := t.q.TreeFixSave(ctx, t.tx, p); err != nil {
		return false, mapError(fmt.Errorf("save tree fixes: %w", err))
	}
	return true, nil
}
