package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// SitePush is an accepted push of a site's lockfile, as audited
// (site.push): the file's name and what its write changed.
type SitePush struct {
	Site    string `json:"site"`
	File    string `json:"file"`
	Sha256  string `json:"sha256"`
	Written TreeWritten
	// Unchanged: the same bytes as the site's last push; nothing but
	// sites.pushed_at was written.
	Unchanged bool `json:"unchanged"`
}

// SitePushed records, in tx, that site pushed a lockfile that was
// accepted: sites.pushed_at moves to the database's now, the push is
// audited (site.push) and the site's refused push, if one stood
// (PushRefused), is removed, in the same transaction. It returns the new
// pushed_at; ErrNotFound when the site is gone.
func (t *Tx) SitePushed(ctx context.Context, site int64, p SitePush) (time.Time, error) {
	at, err := t.q.SitePushed(ctx, t.tx, site)
	if err != nil {
		return time.Time{}, mapError(fmt.Errorf("record the push of %s: %w", p.Site, err))
	}
	// The row's counts are readmodel.TreeChange's, under its names, as
	// the site's history reads them back (SitePushes).
	w := p.Written.Change()
	err = t.AuditAppend(ctx, 0, readmodel.AuditSitePush, map[string]any{"site": p.Site, "file": p.File, "sha256": p.Sha256,
		"unchanged": p.Unchanged || w.Unchanged, "added": w.Added, "changed": w.Changed, "removed": w.Removed,
		"installed": w.Installed, "uninstalled": w.Uninstalled})
	if err != nil {
		return at, err
	}
	return at, mapError(t.q.SitePushRefusalClear(ctx, t.tx, site))
}

// PushRefused records that a registered site's push of the lockfile
// named file was refused for reason (the push's 422 words): the site's
// refused push, one row however often it is refused, which the site's
// next accepted push removes (Tx.SitePushed). pushedBefore is the site's
// last push accepted when the refused one began (Site.PushedAt): when
// another was accepted since, it stands and nothing is recorded.
func (e *Executor) PushRefused(ctx context.Context, site int64, pushedBefore *time.Time, file, reason string) error {
	return mapError(e.q.SitePushRefusalRecord(ctx, e.dbtx, db.SitePushRefusalRecordParams{
		SiteID: site, Path: file, Error: cut(reason, MaxInputErrorBytes), PushedBefore: pushedBefore,
	}))
}

// PushRefusal is a registered site's refused push that stands, as a
// refused input of the site's lockfile; nil when its last push was
// accepted or none was refused.
func (e *Executor) PushRefusal(ctx context.Context, site int64) (*readmodel.InputRefusal, error) {
	rows, err := e.q.SitePushRefusalGet(ctx, e.dbtx, site)
	if err != nil || len(rows) == 0 {
		return nil, mapError(err)
	}
	r := rows[0]
	return &readmodel.InputRefusal{Input: readmodel.InputLockfile, Path: r.Path, Error: r.Error,
		Since: r.Since.UTC(), RefusedAt: r.RefusedAt.UTC()}, nil
}

// SitePushes lists site's accepted pushes, newest first, from their
// audit rows (site.push) since the site was registered (a removed site's
// name registered again starts afresh): limit rows after the first skip.
func (e *Executor) SitePushes(ctx context.Context, site Site, limit, skip int) ([]readmodel.SitePushRow, error) {
	rows, err := e.q.SitePushList(ctx, e.dbtx, db.SitePushListParams{Site: site.Name, Since: site.CreatedAt,
		MaxRows: int32(limit), SkipRows: int32(skip)})
	if err != nil {
		return nil, mapError(fmt.Errorf("read the pushes of %s: %w", site.Name, err))
	}
	out := make([]readmodel.SitePushRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.SitePushRow{ID: r.ID, At: r.At.UTC()}
		if err := json.Unmarshal(r.Detail, &out[i]); err != nil {
			return nil, fmt.Errorf("read the push %d of %s: %w", r.ID, site.Name, err)
		}
	}
	return out, nil
}
