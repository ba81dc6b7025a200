package updatecheck

import (
	"context"
	"errors"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// evaluateFromStored evaluates todo (ordered by source) from the stored
// documents and what the feeds know; components whose document cannot be
// trusted are left out. The manifest sync and the feeds' re-evaluation
// share it.
func (w *writer) evaluateFromStored(ctx context.Context, todo []store.Unevaluated, core store.Component) ([]store.Result, error) {
	var out []store.Result
	var pinned map[string]store.RegistryKeys // read at the first npm source
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
		stored, err := w.store.SourceTrust(ctx, group[0].SourceURL)
		if err != nil {
			return nil, err
		}
		if readmodel.SourceKindOf(src.URL) == readmodel.SourceNpm {
			if pinned == nil {
				if pinned, err = w.store.RegistryKeys(ctx); err != nil {
					return nil, err
				}
			}
			d := w.storedNpmInput(src, pinned, core)
			for _, u := range group {
				if d == nil {
					break
				}
				r, err := evaluateOne(d, k, unevaluatedInput(u, core), src.Epoch)
				if err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			continue
		}
		docs := map[string]*docInput{} // by pin: components of one source may pin different keys
		for _, u := range group {
			d, ok := docs[u.PinnedKey]
			if !ok {
				if d, err = storedDocument(src, u.PinnedKey, trustOf(u.PinnedKey, stored).set); err != nil {
					d = nil // untrusted: the next successful fetch decides
				}
				docs[u.PinnedKey] = d
			}
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

// storedNpmInput is the stored package of the npm source src, verified with
// the keys pinned for the registry it was read from; nil when none can be
// used (the next check decides).
func (w *writer) storedNpmInput(src store.Source, pinned map[string]store.RegistryKeys, core store.Component) *docInput {
	var rk *store.RegistryKeys
	if k, found := pinned[src.Registry]; found {
		rk = &k
	}
	keys, ok := w.pinnedKeys(rk)
	if !ok {
		return nil
	}
	return storedNpm(src, w.storedPackage(src), keys, readmodel.PackageOf(core.SourceURL))
}

// unevaluatedInput is u as an evaluation input, with the installed core.
func unevaluatedInput(u store.Unevaluated, core store.Component) store.ComponentInput {
	return store.ComponentInput{Code: u.Code, InstalledVersion: u.InstalledVersion, CoreVersion: core.InstalledVersion, Package: u.Package,
		Policy: u.Policy, Skipped: u.Skipped}
}

// core is the installed core (the zero Component when none is).
func (w *writer) core(ctx context.Context) (store.Component, error) {
	comp, err := w.store.Component(ctx, release.CoreCode)
	if errors.Is(err, store.ErrNotFound) {
		return store.Component{}, nil
	}
	return comp, err
}
