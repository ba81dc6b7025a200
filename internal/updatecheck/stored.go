package updatecheck

import (
	"context"
	"errors"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// evaluateFromStored evaluates todo (ordered by source) from the stored
// documents and what the feeds know; components whose document cannot be
// trusted are left out. The manifest sync and the feeds' re-evaluation
// share it. Each component is evaluated against its site's core.
func (w *writer) evaluateFromStored(ctx context.Context, todo []store.Unevaluated) ([]store.Result, error) {
	var out []store.Result
	cores := map[int64]store.Component{}
	coreOf := func(site int64) (store.Component, error) {
		if c, ok := cores[site]; ok {
			return c, nil
		}
		c, err := w.core(ctx, site)
		cores[site] = c
		return c, err
	}
	reads := &storedReads{w: w}
	packages := make([]string, len(todo))
	for i, u := range todo {
		packages[i] = u.Package
	}
	k, err := w.knowledge(ctx, packages)
	if err != nil {
		return nil, err
	}
	for start := 0; start < len(todo); {
		end := start
		for end < len(todo) && todo[end].SourceURL == todo[start].SourceURL {
			end++
		}
		group := todo[start:end]
		start = end
		src, err := w.store.Source(ctx, group[0].SourceURL)
		if err != nil {
			return nil, err
		}
		docs := map[int64]func(string) *docInput{} // by site: its core
		for _, u := range group {
			core, err := coreOf(u.Site)
			if err != nil {
				return nil, err
			}
			docOf, ok := docs[u.Site]
			if !ok {
				if docOf, err = kindOf(src.URL).stored(ctx, reads, src, core); err != nil {
					return nil, err
				}
				docs[u.Site] = docOf
			}
			d := docOf(u.PinnedKey)
			if d == nil {
				continue
			}
			r, err := evaluateOne(d, k, unevaluatedInput(u, core), src.Epoch)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// unevaluatedInput is u as an evaluation input, with the installed core.
func unevaluatedInput(u store.Unevaluated, core store.Component) store.ComponentInput {
	return store.ComponentInput{Site: u.Site, Code: u.Code, InstalledVersion: u.InstalledVersion, CoreVersion: core.InstalledVersion, Package: u.Package,
		Policy: u.Policy, Skipped: u.Skipped, Approvals: u.Approvals}
}

// core is site's installed core (the zero Component when none is).
func (w *writer) core(ctx context.Context, site int64) (store.Component, error) {
	comp, err := w.store.Component(ctx, site, release.CoreCode)
	if errors.Is(err, store.ErrNotFound) {
		return store.Component{}, nil
	}
	return comp, err
}
