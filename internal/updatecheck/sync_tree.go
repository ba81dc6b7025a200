package updatecheck

import (
	"context"
	"fmt"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/tree"
)

// TreeReport says what a lockfile sync changed in the installed tree:
// how many packages it holds, and what the write changed.
type TreeReport struct {
	Packages int `json:"packages"`
	readmodel.TreeChange
}

// TreeRead is one read of a lockfile's installed tree, as the lockfile
// sync hands it to TreeSyncer.Sync: the tree of Site (sites.id;
// store.LocalSite for the lockfile of upcheck's own configuration).
type TreeRead struct {
	Site     int64
	Path     string
	FileHash [32]byte
	Tree     *tree.Tree // sorted
	// Components are the lockfile's components, as the manifest sync
	// wrote them: which of the site's direct dependencies each is.
	Components *manifest.Manifest
	// State is TreeSyncer.State as read before the file was.
	State store.TreeState
}

// TreeSyncer stores the installed tree a lockfile sync read, after the
// components were synced (Syncer): the lockfile sync of serve's watcher,
// of `upcheck components sync --lockfile` and of App.SyncLockfile.
type TreeSyncer struct {
	*writer
}

// NewTreeSyncer returns the tree's sync, writing as c does (its store and
// lease).
func NewTreeSyncer(c *Checker) *TreeSyncer { return &TreeSyncer{writer: c.writer} }

// State reads the state of site's stored tree (its Epoch 0: none stored).
// A sync reads it before it reads the file, and names it in its TreeRead:
// its write is refused if another sync wrote since.
func (s *TreeSyncer) State(ctx context.Context, site int64) (store.TreeState, error) {
	st, _, err := s.store.TreeState(ctx, site)
	return st, err
}

// Sync stores r's tree, whole, in one transaction that holds the lease's
// lock (store.Tx.TreeWrite): a check's fenced writes never see half of it,
// and a sync killed midway leaves the tree stored before. A changed tree's
// rows are encoded and hashed before the lock is taken. It fails with
// store.ErrTreeMoved, writing nothing, when another sync wrote the tree
// since r's State was read: the caller reads the state and the file again.
func (s *TreeSyncer) Sync(ctx context.Context, r TreeRead) (TreeReport, error) {
	// The summary reads the tree's state (its packages, when it was read):
	// this process's reads see the sync at once, whatever its outcome.
	defer s.reads.Changed()
	w := &store.TreeWrite{Site: r.Site, Path: r.Path, FileHash: r.FileHash, Tree: r.Tree, Components: headComponents(r.Tree, r.Components),
		Epoch: r.State.Epoch}
	// An unchanged tree costs one statement (and the tree's hash when the
	// file differs): its paths are not walked, its rows not encoded, and
	// the lease's lock is not taken, since no row but the state's moves.
	// A changed one is prepared here, outside the lock.
	if w.Unchanged(r.State) {
		if _, err := s.store.TreeTouch(ctx, r.Site, r.State.Epoch, r.Path, r.FileHash); err != nil {
			return TreeReport{}, fmt.Errorf("sync the installed tree: %w", err)
		}
		s.logger.InfoContext(ctx, "installed tree synced", "path", r.Path, "packages", len(r.Tree.Packages), "unchanged", true)
		return TreeReport{Packages: len(r.Tree.Packages), TreeChange: readmodel.TreeChange{Unchanged: true}}, nil
	}
	if err := w.Prepare(); err != nil {
		return TreeReport{}, err
	}
	var out store.TreeWritten
	err := s.lease.WithLock(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.TreeWrite(ctx, w)
		return err
	})
	if err != nil {
		return TreeReport{}, fmt.Errorf("sync the installed tree: %w", err)
	}
	rep := TreeReport{Packages: len(r.Tree.Packages), TreeChange: out.Change()}
	s.logger.InfoContext(ctx, "installed tree synced", "path", r.Path, "packages", rep.Packages, "unchanged", rep.Unchanged,
		"added", rep.Added, "changed", rep.Changed, "removed", rep.Removed, "installed", rep.Installed, "uninstalled", rep.Uninstalled)
	return rep, nil
}

// headComponents maps each direct dependency of the site (an edge from
// tree.Root, by its declared name) to the code of the component that is
// its package, if one is.
func headComponents(t *tree.Tree, m *manifest.Manifest) map[string]string {
	byPackage := map[string]string{}
	if m != nil {
		for _, c := range m.Components {
			if p := c.NpmPackage(); p != "" {
				byPackage[p] = c.Code
			}
		}
	}
	names := make(map[string]string, len(t.Packages)) // ID -> package name
	for _, p := range t.Packages {
		names[p.ID] = p.Name
	}
	out := map[string]string{}
	for _, e := range t.Edges {
		if e.From != tree.Root || e.To == "" {
			continue
		}
		if code, ok := byPackage[names[e.To]]; ok {
			out[e.Name] = code
		} else if code, ok := byPackage[e.Name]; ok {
			out[e.Name] = code
		}
	}
	return out
}
