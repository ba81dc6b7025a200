package updatecheck

import (
	"context"
	"errors"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// Reevaluate rewrites one component's result from its source's stored
// document, with the current dismissals, without a fetch: after an
// advisory was dismissed or restored, the badge and the alert follow at
// once. It holds the lease's lock, like a manifest sync.
func (c *Checker) Reevaluate(ctx context.Context, code string) error {
	comp, err := c.store.Component(ctx, code)
	if err != nil || comp.SourceURL == "" {
		return err
	}
	core := ""
	switch coreComp, err := c.store.Component(ctx, updatedoc.CoreCode); {
	case err == nil:
		core = coreComp.InstalledVersion
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	dismissals, err := c.store.DismissalsFor(ctx)
	if err != nil {
		return err
	}
	defer c.summary.invalidate()
	return c.lease.WithLock(ctx, func(tx *store.Tx) error {
		_, err := c.reevaluate(ctx, tx, comp, core, dismissals)
		return err
	})
}
