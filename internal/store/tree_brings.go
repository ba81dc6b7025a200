package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// TreeChange is one version a lockfile sync installed whose next check
// reads what it brought (table tree_brings): keyed by its interval of
// the history (tree_versions.id), with the versions of its package the
// same sync removed.
type TreeChange struct {
	IntervalID  int64
	Name        string
	Version     string
	Previous    []string
	InstalledAt time.Time
}

// TreeBrings is what a check read of one lockfile change.
type TreeBrings struct {
	IntervalID         int64                        `json:"interval_id"`
	State              readmodel.ChangeState        `json:"state"`
	Unread             readmodel.UnreadReason       `json:"unread"`
	Compared           string                       `json:"compared"`
	Signals            []readmodel.Signal           `json:"signals"`
	UnreadDependencies []readmodel.UnreadDependency `json:"unread_dependencies"`
}

// TreeBringsDue are the changes a check reads: not read yet, or not read
// by an earlier check, of versions installed now; the oldest first.
func (e *Executor) TreeBringsDue(ctx context.Context) ([]TreeChange, error) {
	rows, err := e.q.TreeBringsDue(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the lockfile changes to read: %w", err))
	}
	out := make([]TreeChange, len(rows))
	for i, r := range rows {
		out[i] = TreeChange{IntervalID: r.IntervalID, Name: r.Name, Version: r.Version, Previous: r.Previous, InstalledAt: r.InstalledAt}
	}
	return out, nil
}

// TreeBringsSave stores what the check of epoch read of lockfile
// changes, in its fenced transaction; a change read already, or pruned,
// is left. It returns the changes written.
func (t *Tx) TreeBringsSave(ctx context.Context, changes []TreeBrings, epoch int64) ([]int64, error) {
	body, err := json.Marshal(changes)
	if err != nil {
		return nil, err
	}
	ids, err := t.q.TreeBringsSave(ctx, t.tx, db.TreeBringsSaveParams{Changes: body, Epoch: epoch})
	if err != nil {
		return nil, mapError(fmt.Errorf("store what lockfile changes brought: %w", err))
	}
	return ids, nil
}

// PackageChanges reads what the lockfile changes to the package name on
// site brought, newest first, at most limit, in UTC.
func (e *Executor) PackageChanges(ctx context.Context, site int64, name string, limit int) ([]readmodel.PackageChange, error) {
	rows, err := e.q.TreeBringsOfPackage(ctx, e.dbtx, db.TreeBringsOfPackageParams{Site: site, Name: name, Lim: int32(limit)})
	if err != nil {
		return nil, mapError(fmt.Errorf("read what the changes to %q brought: %w", name, err))
	}
	out := make([]readmodel.PackageChange, len(rows))
	for i, r := range rows {
		c := readmodel.PackageChange{Version: r.Version, Previous: r.Previous, Compared: r.Compared, InstalledAt: r.InstalledAt.UTC(),
			State: readmodel.ChangeState(r.State), Unread: readmodel.UnreadReason(r.Unread), ReadAt: utc(r.ReadAt),
			Signals: []readmodel.Signal{}, UnreadDependencies: []readmodel.UnreadDependency{}}
		if c.Previous == nil {
			c.Previous = []string{}
		}
		if err := json.Unmarshal([]byte(r.Signals), &c.Signals); err != nil {
			return nil, fmt.Errorf("the change of %s to %s: signals: %w", name, r.Version, err)
		}
		if err := json.Unmarshal([]byte(r.UnreadDependencies), &c.UnreadDependencies); err != nil {
			return nil, fmt.Errorf("the change of %s to %s: unread dependencies: %w", name, r.Version, err)
		}
		out[i] = c
	}
	return out, nil
}

// EventPlanTreeBrings queues, in tx, a trust_downgrade event of each
// signal of the local site's lockfile changes among ids (written earlier
// in tx) on every enabled channel, once: the channels are the local
// site's (docs/design.md 4b).
func (t *Tx) EventPlanTreeBrings(ctx context.Context, ids []int64, epoch int64) ([]uuid.UUID, error) {
	p := db.EventPlanTreeBringsParams{Site: LocalSite, Ids: ids}
	if p.Ids == nil {
		p.Ids = []int64{}
	}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	out, err := t.q.EventPlanTreeBrings(ctx, t.tx, p)
	return out, mapError(err)
}
