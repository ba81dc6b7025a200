// The npm registries' signing keys during a check: fetched once per
// registry, compared with the keys pinned for it, and pinned again with
// their audit row when they change.

package updatecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// registryKeys is one registry's signing keys during one check: fetched
// once, whatever the number of its packages, and compared with the keys
// pinned for it.
type registryKeys struct {
	registry string
	pinned   *store.RegistryKeys // nil: never seen

	once    sync.Once
	keys    []npm.Key
	fail    failure // the keys could not be read and none are pinned
	change  *registryChange
	claimed atomic.Bool // the change is written with one source only
}

// registryChange is a registry's keys to pin: first sight (Old nil) or a
// change, for the fenced write, the audit log and the notification.
type registryChange struct {
	Registry string   `json:"registry"`
	OldKeys  []string `json:"old_keys"`
	NewKeys  []string `json:"new_keys"`
	keys     []byte   // the keys document to pin
	first    bool
}

// resolve fetches the registry's keys once per check (name is a package it
// serves) and decides which keys versions are verified with:
//   - the keys it publishes, pinned on first sight; other keys than the
//     pinned ones are a change (pinned in their turn, and said);
//   - the pinned keys when it publishes none any more, or its keys cannot be
//     read: a registry that stops signing must not stop verification;
//   - none when it never published any.
//
// It reports false when the check was cancelled.
func (rk *registryKeys) resolve(ctx context.Context, c *Checker, name npm.Name) bool {
	cancelled := false
	rk.once.Do(func() {
		pinned, _ := c.pinnedKeys(rk.pinned)
		keys, err := c.npm.Keys(ctx, name)
		switch {
		case fetch.IsCancelled(ctx, err):
			cancelled = true
			rk.fail = failure{kind: readmodel.ErrorOther, detail: "cancelled"}
		case err != nil && pinned != nil:
			c.logger.WarnContext(ctx, "registry keys could not be read: versions are verified with the pinned ones", "registry", rk.registry, "error", err)
			rk.keys = pinned
		case err != nil:
			rk.fail = failureOf(err, "the registry's signing keys could not be read")
		case len(keys) == 0 && pinned != nil:
			c.logger.WarnContext(ctx, "the registry publishes no signing keys any more: versions are verified with the pinned ones", "registry", rk.registry)
			rk.keys = pinned
		case len(keys) == 0:
		default:
			rk.keys = keys
			doc := npm.KeysDocument(keys)
			switch {
			case rk.pinned == nil:
				rk.change = &registryChange{Registry: rk.registry, NewKeys: npm.KeyIDs(keys), keys: doc, first: true}
			case pinned == nil || !bytes.Equal(npm.KeysDocument(pinned), doc):
				rk.change = &registryChange{Registry: rk.registry, OldKeys: rk.pinned.KeyIDs, NewKeys: npm.KeyIDs(keys), keys: doc}
				c.logger.WarnContext(ctx, "the registry's signing keys changed", "registry", rk.registry,
					"old_keys", rk.pinned.KeyIDs, "new_keys", rk.change.NewKeys)
			}
		}
	})
	return !cancelled && !fetch.IsCancelled(ctx, ctx.Err())
}

// claim hands the change to pin to the first source that asks.
func (rk *registryKeys) claim() *registryChange {
	if rk.change == nil || !rk.claimed.CompareAndSwap(false, true) {
		return nil
	}
	return rk.change
}

// saveRegistryChange pins a registry's keys in the fenced transaction that
// writes the source, with its audit row and, for a change after first
// sight, its notification.
func (w *writer) saveRegistryChange(ctx context.Context, tx *store.Tx, ch *registryChange, epoch int64) error {
	if ch == nil {
		return nil
	}
	if err := tx.RegistryKeysSave(ctx, ch.Registry, ch.keys, ch.NewKeys, epoch); err != nil {
		return err
	}
	if ch.first {
		return tx.AuditAppend(ctx, 0, readmodel.AuditRegistryKeysPin, ch)
	}
	if err := tx.AuditAppend(ctx, 0, readmodel.AuditRegistryKeysChange, ch); err != nil {
		return err
	}
	if w.notifier == nil {
		return nil
	}
	return w.notifier.QueueRegistryKeysChanged(ctx, tx, ch.Registry, ch.OldKeys, epoch)
}

// refusalWords are the reasons a version is never offered, as the detail
// page says them.
func refusalWords(err error) string {
	switch {
	case errors.Is(err, npm.ErrUnsigned):
		return "the registry publishes signing keys, and this version has no signature"
	case errors.Is(err, npm.ErrUnknownKey):
		return "signed by a key the registry does not publish"
	case errors.Is(err, npm.ErrExpiredKey):
		return "signed by a key that had expired when it was published"
	case errors.Is(err, npm.ErrBadSignature):
		return "its signature does not match its name, version and integrity: the package may have been altered"
	}
	return err.Error()
}

// evaluate evaluates one component of an npm source: what the package
// offers its installed version (npm.OfferFor) is evaluated as a
// document's releases are, and the registry's own facts (deprecation,
// provenance, signatures, an unlisted version) go beside the result. The
// offered update (none when there is no update) published by an account
// new to the package is the result's NewPublisherVersion and NewPublisher.
func (npmKind) evaluate(d *docInput, k *knowledge, in store.ComponentInput, epoch int64) (store.Result, error) {
	n := d.npm
	offer := npm.OfferFor(n.pkg, in.InstalledVersion, n.core, n.keys)
	pkg := offer.Package
	r, err := evaluateGated(d, k, &pkg, in, epoch, approvalGate(n.pkg, in))
	if err != nil {
		return r, err
	}
	r.Deprecated = offer.Deprecated
	if r.UpdateVersion != "" {
		if account, isNew := npm.NewPublisher(n.pkg, r.UpdateVersion); isNew {
			r.NewPublisherVersion, r.NewPublisher = r.UpdateVersion, account
		}
	}
	facts := registryFacts(n, offer, in.InstalledVersion, r.ProvenanceLost)
	if r.UpdateVersion != "" {
		facts.Brings, facts.BringsUnread, facts.ProvenanceUnread = bringsSignals(n, in.InstalledVersion, r.UpdateVersion)
	}
	if err := approvalFacts(&facts, n, in, r); err != nil {
		return store.Result{}, err
	}
	if r.RegistryFacts, err = json.Marshal(facts); err != nil {
		return store.Result{}, fmt.Errorf("encode the registry's facts of %q: %w", in.Code, err)
	}
	return r, nil
}

// registryFacts are what the registry said of the package, for the
// detail page: the installed version and every version offered, newest
// first, with their provenance and the key that verified each.
func registryFacts(n *npmDoc, o npm.Offer, installed, provenanceLost string) readmodel.RegistryFacts {
	f := readmodel.RegistryFacts{Package: n.pkg.Name, Registry: n.registry, Deprecated: o.Deprecated, Unlisted: o.Unlisted,
		KeysPublished: len(n.keys) > 0, ProvenanceLost: provenanceLost, Versions: []readmodel.RegistryVersion{}}
	version := func(v string, requiresCore string) readmodel.RegistryVersion {
		return readmodel.RegistryVersion{Version: v, Published: n.pkg.Published[v], Installed: v == installed,
			Provenance: o.Provenance[v], RequiresCore: requiresCore, SignedBy: o.SignedBy[v]}
	}
	listedInstalled := false
	for _, r := range o.Package.Releases {
		listedInstalled = listedInstalled || r.Version == installed
		f.Versions = append(f.Versions, version(r.Version, r.RequiresCore))
	}
	if !o.Unlisted && !listedInstalled {
		// The installed version is not offered (deprecated, a prerelease,
		// newer than latest): it is listed all the same, in its place.
		rv := version(installed, "")
		at := len(f.Versions)
		if iv, err := npmver.Parse(installed); err == nil {
			for i, r := range f.Versions {
				if v, err := npmver.Parse(r.Version); err == nil && iv.GreaterThan(v) {
					at = i
					break
				}
			}
		}
		f.Versions = slices.Insert(f.Versions, at, rv)
	}
	for _, r := range o.Refused {
		f.Refused = append(f.Refused, readmodel.RefusedVersion{Version: r.Version, Reason: refusalWords(r.Err)})
	}
	return f
}
