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
// share it.
func (w *writer) evaluateFromStored(ctx context.Context, todo []store.Unevaluated, core store.Component) ([]store.Result, error) {
	var out []store.Result
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
		docOf, err := kindOf(src.URL).stored(ctx, reads, src, core)
		if err != nil {
			return nil, err
		}
		for _, u := range group {
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
	return store.ComponentInput{Code: u.Code, InstalledVersion: u.InstalledVersion, CoreVersion: core.InstalledVersion, Package: u.Package,
		Policy: u.Policy, Skipped: u.Skipped, Approvals: u.Approvals}
}

// core is the installed core (the zero Component when none is).
func (w *writer) core(ctx context.Context) (store.Component, error) {
	comp, err := w.store.Component(ctx, release.CoreCode)
	if errors.Is(err, store.ErrNotFound) {
		return store.Component{}, nil
	}
	return comp, err
}
