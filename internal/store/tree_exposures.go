package store

// The look-back's findings (tree_exposures): an advisory naming a version
// a site had installed and no longer has, found by the tree's evaluation
// (TreeFindingsWrite), audited, notified and listed.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// TreeExposure is a look-back finding: an advisory naming a version the
// tree had installed during an interval and no longer has.
type TreeExposure struct {
	ID             int64           `json:"-"`
	Site           int64           `json:"site_id"`
	IntervalID     int64           `json:"interval_id"`
	Name           string          `json:"name"`
	Version        string          `json:"version"`
	AdvisoryID     string          `json:"advisory_id"`
	Advisory       json.RawMessage `json:"advisory"`
	Malicious      bool            `json:"malicious"`
	KnownExploited bool            `json:"known_exploited"`
	InstalledAt    time.Time       `json:"installed_at"`
	RemovedAt      time.Time       `json:"removed_at"`
	FoundAt        time.Time       `json:"-"`
}

// Sentence is the exposure in words (readmodel.ExposureSentence).
func (x TreeExposure) Sentence() string {
	return readmodel.ExposureSentence(x.Name, x.Version, x.AdvisoryID, x.Malicious, x.InstalledAt, x.RemovedAt)
}

// TreeExposureAudit appends the audit row of a new exposure in tx.
func (t *Tx) TreeExposureAudit(ctx context.Context, x TreeExposure) error {
	return t.AuditAppend(ctx, 0, readmodel.AuditTreeExposed, map[string]any{
		"site_id": x.Site, "package": x.Name, "version": x.Version, "advisory": x.AdvisoryID, "malicious": x.Malicious,
		"exploited": x.KnownExploited, "installed_at": x.InstalledAt, "removed_at": x.RemovedAt,
		"sentence": x.Sentence(),
	})
}

// EventPlanTreeExposed queues, in tx, the tree.exposed event of each new
// exposure (ids) on every enabled channel, once.
func (t *Tx) EventPlanTreeExposed(ctx context.Context, ids []int64, epoch int64) ([]uuid.UUID, error) {
	p := db.EventPlanTreeExposedParams{Ids: ids}
	if p.Ids == nil {
		p.Ids = []int64{}
	}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	out, err := t.q.EventPlanTreeExposed(ctx, t.tx, p)
	return out, mapError(err)
}

// TreeExposures lists the look-back's findings, newest first.
func (e *Executor) TreeExposures(ctx context.Context, site int64, limit int) ([]TreeExposure, error) {
	rows, err := e.q.TreeExposureList(ctx, e.dbtx, db.TreeExposureListParams{Site: site, MaxRows: int32(limit)})
	if err != nil {
		return nil, mapError(fmt.Errorf("list the tree's exposures: %w", err))
	}
	out := make([]TreeExposure, len(rows))
	for i, r := range rows {
		out[i] = TreeExposure{ID: r.ID, Site: site, Name: r.Name, Version: r.Version, AdvisoryID: r.AdvisoryID, Advisory: r.Advisory,
			Malicious: r.Malicious, KnownExploited: r.KnownExploited, InstalledAt: r.InstalledAt, RemovedAt: r.RemovedAt, FoundAt: r.FoundAt}
	}
	return out, nil
}
