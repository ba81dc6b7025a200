package store

// ErrTreeMoved means another sync wrote the tree since the caller read it:
// a sync whose read of the file may be the older one, or an evaluation of
// a tree that is no longer the stored one, writes nothing.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/tree"
)

var ErrTreeMoved = errors.New("the installed tree was written by another sync meanwhile")

// TreeState is the stored tree's state: what was read, when.
type TreeState struct {
	Path      string
	FileHash  []byte
	TreeHash  []byte
	HeadsHash []byte
	// Epoch moves by one with every write (unchanged re-syncs included);
	// a sync passes the one it read before reading the file to TreeWrite.
	Epoch     int64
	Packages  int
	SyncedAt  time.Time // last read, changed or not
	ChangedAt time.Time // last changed
}

// TreeState reads the state of site's tree; ok is false when no tree was
// ever written (a manifest site, or a lockfile not yet synced or pushed:
// the dependencies are not checked).
func (e *Executor) TreeState(ctx context.Context, site int64) (s TreeState, ok bool, err error) {
	r, err := e.q.TreeStateGet(ctx, e.dbtx, site)
	if err != nil {
		if err = mapError(err); errors.Is(err, ErrNotFound) {
			return TreeState{}, false, nil
		}
		return TreeState{}, false, fmt.Errorf("read tree state: %w", err)
	}
	return TreeState{Path: r.Path, FileHash: r.FileHash, TreeHash: r.TreeHash, HeadsHash: r.HeadsHash, Epoch: r.Epoch,
		Packages: int(r.Packages), SyncedAt: r.SyncedAt, ChangedAt: r.ChangedAt}, true, nil
}

// TreeWrite is one sync's read of a lockfile's tree, to be stored as the
// tree of Site (sites.id; LocalSite the site upcheck runs beside).
type TreeWrite struct {
	Site     int64
	Path     string
	FileHash [32]byte // sha256 of the file's bytes
	// Tree is the tree read, sorted (tree.Tree.Sort); Reach is its
	// Reach(), read by Prepare when nil.
	Tree  *tree.Tree
	Reach map[string]*tree.Reach
	// Components maps a direct dependency of the site (a tree.Via's
	// Head) to the code of the component it is; a head that is no
	// component is absent.
	Components map[string]string
	// Epoch is TreeState.Epoch as read before the file was (0: there was
	// no state): the write is refused with ErrTreeMoved when it moved.
	Epoch int64

	prepared   bool
	hashed     bool // headsHash is read
	treeHashed bool // treeHash is read
	treeHash   [32]byte
	headsHash  [32]byte
	packages   []treePackageRow
	edges      []treeEdgeRow
}

// Prepare encodes w's rows and hashes them (and reads w.Tree.Reach when
// w.Reach is nil): TreeWrite does it when the tree changed and w is not
// prepared yet, but a caller does it before taking the lease's lock, which
// TreeWrite then holds only for the database's part.
func (w *TreeWrite) Prepare() error {
	if w.prepared {
		return nil
	}
	if !w.hashed {
		w.headsHash, w.hashed = headsHash(w.Components), true
	}
	w.treeHashOf()
	if w.Reach == nil {
		w.Reach = w.Tree.Reach()
	}
	w.packages = make([]treePackageRow, len(w.Tree.Packages))
	for i, p := range w.Tree.Packages {
		row, err := packageRow(p, *w)
		if err != nil {
			return err
		}
		w.packages[i] = row
	}
	w.edges = make([]treeEdgeRow, len(w.Tree.Edges))
	for i, e := range w.Tree.Edges {
		row, err := edgeRow(e)
		if err != nil {
			return err
		}
		w.edges[i] = row
	}
	w.prepared = true
	return nil
}

// Unchanged says whether w is the tree st holds: the same components, and
// the same file or the same tree (the tree's hash is read only when the
// file differs). TreeWrite of such a w writes the state's row alone, so a
// caller need not Prepare it.
func (w *TreeWrite) Unchanged(st TreeState) bool {
	if !w.hashed {
		w.headsHash, w.hashed = headsHash(w.Components), true
	}
	if st.Epoch == 0 || !bytes.Equal(st.HeadsHash, w.headsHash[:]) {
		return false
	}
	if bytes.Equal(st.FileHash, w.FileHash[:]) {
		return true
	}
	h := w.treeHashOf()
	return bytes.Equal(st.TreeHash, h[:])
}

// treeHashOf is w.Tree.Hash(), read once.
func (w *TreeWrite) treeHashOf() [32]byte {
	if !w.treeHashed {
		w.treeHash, w.treeHashed = w.Tree.Hash(), true
	}
	return w.treeHash
}

// TreeTouch records a sync that found the tree unchanged (TreeWrite's
// Unchanged) from the state it read at epoch: the state's synced_at moves
// to the database's now, and its epoch by one, in one statement that takes
// no lock beyond the row's, and only while the state is the one read
// (ErrTreeMoved otherwise). It returns the new synced_at.
func (e *Executor) TreeTouch(ctx context.Context, site, epoch int64, path string, fileHash [32]byte) (time.Time, error) {
	at, err := e.q.TreeStateTouchAt(ctx, e.dbtx, db.TreeStateTouchAtParams{Site: site, Path: path, FileHash: fileHash[:], Epoch: epoch})
	if err != nil {
		if err = mapError(err); errors.Is(err, ErrNotFound) {
			return time.Time{}, fmt.Errorf("touch tree: read at epoch %d: %w", epoch, ErrTreeMoved)
		}
		return time.Time{}, fmt.Errorf("touch tree: %w", err)
	}
	return at, nil
}

// TreeWritten says what a TreeWrite changed.
type TreeWritten struct {
	// Unchanged: the stored tree was this one (same file, or same tree
	// and components): only the state's synced_at and epoch moved.
	Unchanged bool
	// Packages and edges removed, changed and added.
	Removed, Changed, Added                int
	EdgesRemoved, EdgesChanged, EdgesAdded int
	// Intervals of tree_versions closed and opened.
	Closed, Opened int
	// At is the database's time the write stamped everything with.
	At time.Time
}

// Change is what the write changed, as a sync's report and a push's
// audit row say it.
func (w TreeWritten) Change() readmodel.TreeChange {
	return readmodel.TreeChange{Unchanged: w.Unchanged, Added: w.Added, Changed: w.Changed, Removed: w.Removed,
		Installed: w.Opened, Uninstalled: w.Closed}
}

// TreeWrite stores w in tx, which must hold the lease's lock (the lockfile
// sync's lease.Manager.WithLock), so that no other writer of the tree runs
// between its read of the state and its commit. An unchanged tree writes
// the state's row alone; a changed one reads the stored rows' hashes,
// deletes the package instances and edges that went, and sends only the
// rows that are new or whose hash differs, and moves the history: the (name, version) pairs no longer
// installed have their interval closed, the new ones an interval opened,
// all at one instant of the database's clock.
func (t *Tx) TreeWrite(ctx context.Context, w *TreeWrite) (TreeWritten, error) {
	st, err := t.q.TreeStateLock(ctx, t.tx, w.Site)
	if err != nil {
		return TreeWritten{}, fmt.Errorf("write tree: state: %w", mapError(err))
	}
	if st.Epoch != w.Epoch {
		return TreeWritten{}, fmt.Errorf("write tree: read at epoch %d, stored epoch %d: %w", w.Epoch, st.Epoch, ErrTreeMoved)
	}
	out := TreeWritten{At: st.Now}
	if w.Unchanged(TreeState{Epoch: st.Epoch, FileHash: st.FileHash, TreeHash: st.TreeHash, HeadsHash: st.HeadsHash}) {
		out.Unchanged = true
		err := t.q.TreeStateTouch(ctx, t.tx, db.TreeStateTouchParams{Site: w.Site, Path: w.Path, FileHash: w.FileHash[:], Now: st.Now})
		if err != nil {
			return TreeWritten{}, fmt.Errorf("write tree: state: %w", mapError(err))
		}
		return out, nil
	}
	if err := w.Prepare(); err != nil {
		return TreeWritten{}, err
	}
	if err := t.treePackagesWrite(ctx, w, &out); err != nil {
		return TreeWritten{}, err
	}
	if err := t.treeEdgesWrite(ctx, w, &out); err != nil {
		return TreeWritten{}, err
	}
	v, err := t.q.TreeVersionsWrite(ctx, t.tx, db.TreeVersionsWriteParams{Site: w.Site, Now: st.Now})
	if err != nil {
		return TreeWritten{}, fmt.Errorf("write tree: history: %w", mapError(err))
	}
	err = t.q.TreeStateWrite(ctx, t.tx, db.TreeStateWriteParams{Site: w.Site, Path: w.Path, FileHash: w.FileHash[:], TreeHash: w.treeHash[:],
		HeadsHash: w.headsHash[:], Packages: int32(len(w.Tree.Packages)), Now: st.Now})
	if err != nil {
		return TreeWritten{}, fmt.Errorf("write tree: state: %w", mapError(err))
	}
	out.Closed, out.Opened = int(v.Closed), int(v.Opened)
	return out, nil
}

// headsHash is the content of a TreeWrite's Components, whatever the
// map's order.
func headsHash(m map[string]string) [32]byte {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(m[k]), m[k])
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// treePackagesWrite makes tree_packages w's: it reads the stored rows'
// hashes, copies the new rows in (COPY), sends those whose hash differs
// and deletes those w no longer has.
func (t *Tx) treePackagesWrite(ctx context.Context, w *TreeWrite, out *TreeWritten) error {
	stored, err := t.q.TreePackageHashes(ctx, t.tx, w.Site)
	if err != nil {
		return fmt.Errorf("write tree: packages: %w", mapError(err))
	}
	have := make(map[string][]byte, len(stored))
	for _, r := range stored {
		have[r.ID] = r.RowHash
	}
	var put []treePackageRow
	var add []db.TreePackagesAddParams
	for _, row := range w.packages {
		old, existed := have[row.ID]
		delete(have, row.ID)
		switch {
		case !existed:
			via, err := json.Marshal(row.Via)
			if err != nil {
				return fmt.Errorf("write tree: %w", err)
			}
			add = append(add, db.TreePackagesAddParams{SiteID: w.Site, ID: row.ID, Name: row.Name, Alias: row.Alias, Version: row.Version,
				Dev: row.Dev, Optional: row.Optional, Peer: row.Peer, Source: string(row.Source), Resolved: row.Resolved,
				Integrity: row.Integrity, InstallScript: row.InstallScript, DevOnly: row.DevOnly, Via: via,
				Components: row.Components, RowHash: row.hash})
		case string(old) != string(row.hash):
			put = append(put, row)
		}
	}
	out.Added, out.Changed = len(add), len(put)
	if len(add) > 0 {
		if _, err := t.q.TreePackagesAdd(ctx, t.tx, add); err != nil {
			return fmt.Errorf("write tree: packages: %w", mapError(err))
		}
	}
	if len(put) > 0 {
		b, err := json.Marshal(put)
		if err != nil {
			return fmt.Errorf("write tree: %w", err)
		}
		if err := t.q.TreePackagesPut(ctx, t.tx, db.TreePackagesPutParams{Site: w.Site, Packages: b}); err != nil {
			return fmt.Errorf("write tree: packages: %w", mapError(err))
		}
	}
	if len(have) > 0 {
		n, err := t.q.TreePackagesDelete(ctx, t.tx, db.TreePackagesDeleteParams{Site: w.Site, Ids: slices.Collect(maps.Keys(have))})
		if err != nil {
			return fmt.Errorf("write tree: packages: %w", mapError(err))
		}
		out.Removed = int(n)
	}
	return nil
}

// treeEdgesWrite makes tree_edges w's, as treePackagesWrite the packages.
func (t *Tx) treeEdgesWrite(ctx context.Context, w *TreeWrite, out *TreeWritten) error {
	stored, err := t.q.TreeEdgeHashes(ctx, t.tx, w.Site)
	if err != nil {
		return fmt.Errorf("write tree: edges: %w", mapError(err))
	}
	have := make(map[treeEdgeKey][]byte, len(stored))
	for _, r := range stored {
		have[treeEdgeKey{r.FromID, r.Name, tree.Kind(r.Kind)}] = r.RowHash
	}
	var put []treeEdgeRow
	var add []db.TreeEdgesAddParams
	for _, row := range w.edges {
		key := row.treeEdgeKey
		old, existed := have[key]
		delete(have, key)
		switch {
		case !existed:
			var to *string
			if row.To != "" {
				to = &row.To
			}
			add = append(add, db.TreeEdgesAddParams{SiteID: w.Site, FromID: row.From, Name: row.Name, Kind: string(row.Kind), Range: row.Range,
				ToID: to, RowHash: row.hash})
		case string(old) != string(row.hash):
			put = append(put, row)
		}
	}
	out.EdgesAdded, out.EdgesChanged = len(add), len(put)
	if len(add) > 0 {
		if _, err := t.q.TreeEdgesAdd(ctx, t.tx, add); err != nil {
			return fmt.Errorf("write tree: edges: %w", mapError(err))
		}
	}
	if len(put) > 0 {
		b, err := json.Marshal(put)
		if err != nil {
			return fmt.Errorf("write tree: %w", err)
		}
		if err := t.q.TreeEdgesPut(ctx, t.tx, db.TreeEdgesPutParams{Site: w.Site, Edges: b}); err != nil {
			return fmt.Errorf("write tree: edges: %w", mapError(err))
		}
	}
	if len(have) > 0 {
		b, err := json.Marshal(slices.Collect(maps.Keys(have)))
		if err != nil {
			return fmt.Errorf("write tree: %w", err)
		}
		n, err := t.q.TreeEdgesDelete(ctx, t.tx, db.TreeEdgesDeleteParams{Site: w.Site, Keys: b})
		if err != nil {
			return fmt.Errorf("write tree: edges: %w", mapError(err))
		}
		out.EdgesRemoved = int(n)
	}
	return nil
}

// treePackageRow is a tree_packages row as queries/tree.sql reads it from
// JSON (jsonb_populate_recordset over the table's row type): every column
// present, since an absent key is NULL there, not the column's default.
type treePackageRow struct {
	ID            string      `json:"id"`
	Name          string      `json:"name"`
	Alias         string      `json:"alias"`
	Version       string      `json:"version"`
	Dev           bool        `json:"dev"`
	Optional      bool        `json:"optional"`
	Peer          bool        `json:"peer"`
	Source        tree.Source `json:"source"`
	Resolved      string      `json:"resolved"`
	Integrity     string      `json:"integrity"`
	InstallScript bool        `json:"install_script"`
	DevOnly       bool        `json:"dev_only"`
	Via           []treeVia   `json:"via"`
	Components    []string    `json:"components"`
	// RowHash is hash's bytea text form; hash is a sha256 of the other
	// fields' JSON, cut to 16 bytes.
	RowHash string `json:"row_hash"`
	hash    []byte
}

// treeVia is one tree.Via as tree_packages.via holds it.
type treeVia struct {
	Head string   `json:"head"`
	Path []string `json:"path"`
}

// treeEdgeKey is a tree_edges row's key, as TreeEdgesDelete reads it.
type treeEdgeKey struct {
	From string    `json:"from_id"`
	Name string    `json:"name"`
	Kind tree.Kind `json:"kind"`
}

// treeEdgeRow is a tree_edges row; an empty To is NULL (nothing
// installed).
type treeEdgeRow struct {
	treeEdgeKey
	Range   string `json:"range"`
	To      string `json:"to_id,omitempty"`
	RowHash string `json:"row_hash"`
	hash    []byte
}

// packageRow is p's row in w. A package nothing reaches (an entry no
// dependency leads to) has no way in, and counts as dev-only when the
// lockfile flags it dev.
func packageRow(p tree.Package, w TreeWrite) (treePackageRow, error) {
	row := treePackageRow{ID: p.ID, Name: p.Name, Alias: p.Alias, Version: p.Version, Dev: p.Dev, Optional: p.Optional,
		Peer: p.Peer, Source: p.Source, Resolved: p.Resolved, Integrity: p.Integrity, InstallScript: p.InstallScript,
		DevOnly: p.Dev, Via: []treeVia{}, Components: []string{}}
	if r := w.Reach[p.ID]; r != nil {
		row.DevOnly = r.DevOnly
		for _, v := range r.Via {
			row.Via = append(row.Via, treeVia{Head: v.Head, Path: v.Path})
			if code, ok := w.Components[v.Head]; ok && !slices.Contains(row.Components, code) {
				row.Components = append(row.Components, code)
			}
		}
		slices.Sort(row.Components)
	}
	var err error
	row.hash, row.RowHash, err = rowHash(row)
	return row, err
}

// edgeRow is e's row.
func edgeRow(e tree.Edge) (treeEdgeRow, error) {
	row := treeEdgeRow{treeEdgeKey: treeEdgeKey{From: e.From, Name: e.Name, Kind: e.Kind}, Range: e.Range, To: e.To}
	var err error
	row.hash, row.RowHash, err = rowHash(row)
	return row, err
}

// rowHash is the hash of a row (its JSON, RowHash still empty), and its
// bytea text form.
func rowHash(row any) ([]byte, string, error) {
	b, err := json.Marshal(row)
	if err != nil {
		return nil, "", fmt.Errorf("write tree: %w", err)
	}
	sum := sha256.Sum256(b)
	return sum[:16], `\x` + hex.EncodeToString(sum[:16]), nil
}
