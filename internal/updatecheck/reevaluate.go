package updatecheck

import (
	"context"
	"errors"

	"github.com/upcheck/upcheck/internal/store"
)

// Reevaluate rewrites one component's result from its source's stored
// document, with the current dismissals, without a fetch: after an
// advisory was dismissed or restored, the badge and the alert follow at
// once. It holds the lease's lock, like a manifest sync.
func (c *Checker) Reevaluate(ctx context.Context, code string) error {
	components, err := c.store.Components(ctx)
	if err != nil {
		return err
	}
	var comp *store.Component
	core := ""
	for i := range components {
		if components[i].Code == code {
			comp = &components[i]
		}
		if components[i].Code == "core" {
			core = components[i].InstalledVersion
		}
	}
	if comp == nil {
		return store.ErrNotFound
	}
	if comp.SourceURL == "" {
		return nil
	}
	dismissals, err := c.store.DismissalsFor(ctx)
	if err != nil {
		return err
	}
	defer c.summary.invalidate()
	return c.lease.WithLock(ctx, func(tx *store.Tx) error {
		_, err := c.reevaluate(ctx, tx, *comp, core, dismissals)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
}
