package updatecheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// SyncReport says what a manifest sync changed.
type SyncReport struct {
	Components  int `json:"components"`
	Added       int `json:"added"`
	Changed     int `json:"changed"`
	Removed     int `json:"removed"`
	Reevaluated int `json:"reevaluated"`
}

// SyncComponents makes the installed components exactly those of m, in one
// transaction. Components whose installed version changed (all of them, when
// the core's did) are re-evaluated at once from their source's stored
// document, without a fetch. The transaction holds the lease's lock, so it
// never interleaves with a check's fenced write; a check that evaluated the
// old version finds the component changed and does not overwrite the new
// result (see queries/component_results.sql).
func (c *Checker) SyncComponents(ctx context.Context, m *manifest.Manifest) (SyncReport, error) {
	if err := m.Validate(); err != nil {
		return SyncReport{}, err
	}
	before, err := c.store.Components(ctx)
	if err != nil {
		return SyncReport{}, err
	}
	old := make(map[string]store.Component, len(before))
	for _, comp := range before {
		old[comp.Code] = comp
	}

	rep := SyncReport{Components: len(m.Components)}
	next := make([]store.Component, len(m.Components))
	codes := make([]string, len(m.Components))
	core := ""
	coreChanged := false
	for i, mc := range m.Components {
		next[i] = store.Component{Code: mc.Code, Name: mc.Name, InstalledVersion: mc.Version, SourceURL: mc.Source, PinnedKey: mc.Key}
		codes[i] = mc.Code
		prev, existed := old[mc.Code]
		switch {
		case !existed:
			rep.Added++
		case prev != next[i]:
			rep.Changed++
		}
		if mc.Code == updatedoc.CoreCode {
			core = mc.Version
			coreChanged = existed && prev.InstalledVersion != mc.Version
		}
	}

	dismissals, err := c.store.DismissalsFor(ctx)
	if err != nil {
		return SyncReport{}, err
	}
	err = c.lease.WithLock(ctx, func(tx *store.Tx) error {
		for _, comp := range next {
			if err := tx.ComponentUpsert(ctx, comp); err != nil {
				return fmt.Errorf("component %q: %w", comp.Code, err)
			}
		}
		n, err := tx.ComponentDeleteMissing(ctx, codes)
		if err != nil {
			return err
		}
		rep.Removed = int(n)
		for _, comp := range next {
			prev, existed := old[comp.Code]
			if comp.SourceURL == "" || !existed || (prev == comp && !coreChanged) {
				continue // new components wait for their first fetch
			}
			ok, err := c.reevaluate(ctx, tx, comp, core, dismissals)
			if err != nil {
				return fmt.Errorf("re-evaluate %q: %w", comp.Code, err)
			}
			if ok {
				rep.Reevaluated++
			}
		}
		return nil
	})
	c.summary.invalidate()
	if err != nil {
		return SyncReport{}, fmt.Errorf("sync components: %w", err)
	}
	c.logger.InfoContext(ctx, "components synced", "components", rep.Components, "added", rep.Added,
		"changed", rep.Changed, "removed", rep.Removed, "reevaluated", rep.Reevaluated)
	return rep, nil
}

// reevaluate rewrites comp's result from its source's stored document. It
// reports false when there is no usable stored document yet.
func (c *Checker) reevaluate(ctx context.Context, tx *store.Tx, comp store.Component, core string, dismissals map[string]map[string]bool) (bool, error) {
	src, err := tx.Source(ctx, comp.SourceURL)
	if errors.Is(err, store.ErrNotFound) || (err == nil && src.Document == nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	doc, err := updatedoc.Parse(src.Document)
	if err != nil {
		return false, nil // cannot happen for a stored document; the next fetch decides
	}
	j := job{url: comp.SourceURL, components: []store.Component{comp}}
	for _, r := range c.evaluate(doc, j, core, src.Epoch, dismissals) {
		if _, err := tx.ResultUpsert(ctx, r); err != nil {
			return false, err
		}
	}
	return true, nil
}
