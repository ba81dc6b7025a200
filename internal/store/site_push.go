package store

import (
	"context"
	"fmt"
	"time"

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
// accepted: sites.pushed_at moves to the database's now, and the push is
// audited (site.push) in the same transaction. It returns the new
// pushed_at; ErrNotFound when the site is gone.
func (t *Tx) SitePushed(ctx context.Context, site int64, p SitePush) (time.Time, error) {
	at, err := t.q.SitePushed(ctx, t.tx, site)
	if err != nil {
		return time.Time{}, mapError(fmt.Errorf("record the push of %s: %w", p.Site, err))
	}
	w := p.Written
	err = t.AuditAppend(ctx, 0, readmodel.AuditSitePush, map[string]any{"site": p.Site, "file": p.File, "sha256": p.Sha256,
		"unchanged": p.Unchanged || w.Unchanged, "added": w.Added, "changed": w.Changed, "removed": w.Removed,
		"installed": w.Opened, "uninstalled": w.Closed})
	return at, err
}
