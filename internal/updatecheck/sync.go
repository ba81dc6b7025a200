package updatecheck

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// SyncReport says what a manifest sync changed.
type SyncReport struct {
	Components  int `json:"components"`
	Added       int `json:"added"`
	Changed     int `json:"changed"`
	Removed     int `json:"removed"`
	Reevaluated int `json:"reevaluated"`
	// Tree is what a lockfile's sync changed in the installed tree
	// (TreeSyncer); absent for a manifest's.
	Tree *TreeReport `json:"tree,omitempty"`
}

// syncBatch is how many component rows one sync transaction writes. Each
// holds the lease's lock, which a running check's renewals and fenced
// writes wait for: a batch must stay within a few milliseconds.
const syncBatch = 500

// evaluateRounds bounds how often a sync evaluates again components whose
// write was refused because their inputs moved meanwhile.
const evaluateRounds = 3

// Syncer keeps the installed components in step with the manifest: the
// manifest sync, run by `upcheck components sync` and by serve at start.
// It writes through the check's write path, under the lease's lock rather
// than the lease.
type Syncer struct {
	*writer
}

// NewSyncer returns the manifest sync writing as c does: the same store,
// lease, notifier and reads (NotifyWith and TellReads on c apply to it).
func NewSyncer(c *Checker) *Syncer { return &Syncer{writer: c.writer} }

// Sync makes the installed components exactly those of m, then
// evaluates every component that has no result from its current inputs
// (new ones, changed ones, all of them when the core changed) from its
// source's stored document, without a fetch.
//
// The component rows are written in short transactions that hold the
// lease's lock, so a check's fenced write never sees them change between
// its reads and its commit; evaluation happens outside any transaction, and
// the results go through the guarded write, which refuses any evaluated from
// inputs that moved meanwhile. A sync that stops half way leaves components
// without a current result, which the read model shows as not evaluated and
// the next sync or check evaluates.
func (s *Syncer) Sync(ctx context.Context, m *manifest.Manifest) (SyncReport, error) {
	if err := m.Validate(); err != nil {
		return SyncReport{}, err
	}
	if err := m.CheckRegistries(s.registries()); err != nil {
		return SyncReport{}, err
	}
	site := store.LocalSite // the manifest of upcheck's own configuration
	before, err := s.store.Components(ctx, site)
	if err != nil {
		return SyncReport{}, err
	}
	rep, upserts, removed := componentChanges(site, m, before)
	defer s.reads.Changed()
	ctx, countSites := s.withCounts(ctx)
	defer countSites()
	countsDue(ctx, site)
	if err := s.writeComponents(ctx, site, before, upserts); err != nil {
		return SyncReport{}, err
	}
	if rep.Removed, err = s.removeComponents(ctx, site, removed); err != nil {
		return SyncReport{}, err
	}

	// The dismissals and skips the manifest declares, after the components
	// they name are written (docs/policy.md "Dismissals and skips as
	// code"); a skip is an input of evaluation, so it is written under the
	// lease's lock.
	var approved []string
	err = s.lease.WithLock(ctx, func(tx *store.Tx) error {
		if _, err := tx.ApplyManifestDismissals(ctx, manifestDismissals(m)); err != nil {
			return err
		}
		if _, err := tx.ApplyManifestSkips(ctx, manifestSkips(m)); err != nil {
			return err
		}
		var err error
		approved, err = tx.ApplyManifestApprovals(ctx, manifestApprovals(m))
		return err
	})
	if err != nil {
		return SyncReport{}, fmt.Errorf("sync components: dismissals, skips and approvals: %w", err)
	}
	// An approval is an input the read model does not weigh (a skip is):
	// the components whose approvals changed are evaluated again here.
	for _, code := range approved {
		if err := (&Skips{writer: s.writer}).reevaluate(ctx, site, code); err != nil {
			return SyncReport{}, fmt.Errorf("sync components: evaluate %q under its approvals: %w", code, err)
		}
	}

	if rep.Reevaluated, err = s.evaluateStored(ctx, site); err != nil {
		return SyncReport{}, fmt.Errorf("sync components: evaluate: %w", err)
	}
	s.logger.InfoContext(ctx, "components synced", "components", rep.Components, "added", rep.Added,
		"changed", rep.Changed, "removed", rep.Removed, "reevaluated", rep.Reevaluated)
	return rep, nil
}

// componentChanges is what makes site's installed components those of m:
// the rows to add or change, the codes to remove, and the report's counts
// of them.
func componentChanges(site int64, m *manifest.Manifest, before []store.Component) (SyncReport, []store.Component, []string) {
	old := make(map[string]store.Component, len(before))
	for _, comp := range before {
		old[comp.Code] = comp
	}
	rep := SyncReport{Components: len(m.Components)}
	var upserts []store.Component
	for _, mc := range m.Components {
		next := store.Component{Site: site, Code: mc.Code, Name: mc.Name, InstalledVersion: mc.Version, SourceURL: mc.Source, PinnedKey: mc.Pin(),
			Package: mc.NpmPackage(), Policy: m.PolicyOf(mc).Text()}
		prev, existed := old[mc.Code]
		delete(old, mc.Code) // what is left once the loop ends was removed
		switch {
		case !existed:
			rep.Added++
		case prev != next:
			rep.Changed++
		default:
			continue
		}
		upserts = append(upserts, next)
	}
	return rep, upserts, slices.Sorted(maps.Keys(old))
}

// writeComponents writes site's upserts in batches under the lease's
// lock, with one audit row per source whose pin changes, naming all its
// components, committed with the batch that writes the last of them.
func (s *Syncer) writeComponents(ctx context.Context, site int64, before, upserts []store.Component) error {
	changes := pinChanges(before, upserts)
	last := map[string]int{}    // source -> position of its last upsert
	pins := map[string]string{} // code -> its pin now
	for i, u := range upserts {
		last[u.SourceURL] = i
		pins[u.Code] = u.PinnedKey
	}
	for start := 0; start < len(upserts); start += syncBatch {
		end := min(start+syncBatch, len(upserts))
		batch := upserts[start:end]
		var due []pinChange // the changes whose last component this batch writes
		for _, change := range changes {
			if i := last[change.Source]; i >= start && i < end {
				due = append(due, change)
			}
		}
		err := s.lease.WithLock(ctx, func(tx *store.Tx) error {
			return s.upsertComponents(ctx, tx, site, batch, due, pins)
		})
		if err != nil {
			return fmt.Errorf("sync components: %w", err)
		}
	}
	return nil
}

// upsertComponents writes batch, site's components to add or change, in
// tx, with the audit row (and the warning, when it lowers trust) of each
// pin change of changes.
func (w *writer) upsertComponents(ctx context.Context, tx *store.Tx, site int64, batch []store.Component, changes []pinChange,
	pins map[string]string) error {
	if _, err := tx.ComponentUpsertMany(ctx, site, batch); err != nil {
		return err
	}
	for _, change := range changes {
		if err := tx.AuditAppend(ctx, 0, auditPin, change); err != nil {
			return err
		}
		if err := w.recordPinDowngrade(ctx, tx, site, change, pins); err != nil {
			return err
		}
	}
	return nil
}

// syncComponentsTx makes site's installed components those of m in tx,
// all at once: a registered site's push, whose lockfile is refused or
// accepted whole with its tree. before are site's components as read
// before tx; the push's tree write, in the same tx, refuses the whole
// push when another push of the site wrote since (store.ErrTreeMoved).
func (w *writer) syncComponentsTx(ctx context.Context, tx *store.Tx, site int64, m *manifest.Manifest,
	before []store.Component) (SyncReport, error) {
	rep, upserts, removed := componentChanges(site, m, before)
	pins := make(map[string]string, len(upserts))
	for _, u := range upserts {
		pins[u.Code] = u.PinnedKey
	}
	if len(upserts) > 0 {
		if err := w.upsertComponents(ctx, tx, site, upserts, pinChanges(before, upserts), pins); err != nil {
			return rep, err
		}
	}
	if len(removed) > 0 {
		n, err := tx.ComponentDelete(ctx, site, removed)
		if err != nil {
			return rep, err
		}
		rep.Removed = int(n)
	}
	return rep, nil
}

// removeComponents deletes site's components of codes in batches under
// the lease's lock and says how many it removed.
func (s *Syncer) removeComponents(ctx context.Context, site int64, codes []string) (int, error) {
	removed := 0
	for start := 0; start < len(codes); start += syncBatch {
		batch := codes[start:min(start+syncBatch, len(codes))]
		err := s.lease.WithLock(ctx, func(tx *store.Tx) error {
			n, err := tx.ComponentDelete(ctx, site, batch)
			removed += int(n)
			return err
		})
		if err != nil {
			return removed, fmt.Errorf("sync components: remove: %w", err)
		}
	}
	return removed, nil
}

// evaluateStored evaluates every component of site that has no result
// from its current inputs against its source's stored document, when that
// document can be trusted, and reports how many results it wrote. Each
// document is parsed once, outside any transaction; the writes go in short
// ones.
func (s *Syncer) evaluateStored(ctx context.Context, site int64) (int, error) {
	written := 0
	for range evaluateRounds {
		todo, err := s.store.ComponentsUnevaluated(ctx, site)
		if err != nil || len(todo) == 0 {
			return written, err
		}
		results, err := s.evaluateFromStored(ctx, todo)
		if err != nil {
			return written, err
		}
		if len(results) == 0 {
			return written, nil // nothing can be evaluated (untrusted documents)
		}
		n, err := s.writeStored(ctx, results)
		written += n
		if err != nil || n == len(results) {
			return written, err
		}
		// Some inputs moved while evaluating: read what holds now, again.
	}
	return written, nil
}

// writeStored writes results in batches, each in a short transaction that
// holds the lease's lock, and reports how many were written.
func (s *Syncer) writeStored(ctx context.Context, results []store.Result) (int, error) {
	written := 0
	for start := 0; start < len(results); start += resultBatch {
		batch := results[start:min(start+resultBatch, len(results))]
		err := s.lease.WithLock(ctx, func(tx *store.Tx) error {
			codes, err := tx.ResultWrite(ctx, batch)
			if err != nil {
				return err
			}
			written += len(codes)
			return s.queue(ctx, tx, codes, 0)
		})
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// auditPin is the audit action of a manifest sync that changed the keys
// pinned for a source (kind trust, as the statements' source.trust).
const auditPin = readmodel.AuditSourcePin

// pinActor is who the audit log says changed a pin: the manifest, loaded
// by `upcheck components sync` or by serve at start (UPCHECK_MANIFEST).
const pinActor = "manifest sync"

// pinChange is a change of the keys pinned for a source, for the audit
// log: the fingerprints and thresholds before and after (no whole keys),
// and the components whose pin changed. Its fields are trustChange's, so
// the audit log words both alike.
type pinChange struct {
	Source       string   `json:"source"`
	Reason       string   `json:"reason"`
	Components   []string `json:"components"`
	OldKeys      []string `json:"old_keys"`
	OldThreshold int      `json:"old_threshold"`
	NewKeys      []string `json:"new_keys"`
	NewThreshold int      `json:"new_threshold"`
	By           string   `json:"by"`
}

// pinChanges are the changes of pinned keys that writing batch makes over
// before: a source that components used before pins another key set now
// (other keys, another threshold, none at all, or some where there was
// none; the manifest gives every component of a source one pin), one
// change per source, naming the components of batch that pin the new set.
// A source no component used before changes no pin.
func pinChanges(before []store.Component, upserts []store.Component) []pinChange {
	was := make(map[string]string, len(before)) // source -> its pin before
	for _, comp := range before {
		if comp.SourceURL != "" {
			was[comp.SourceURL] = comp.PinnedKey
		}
	}
	index := map[string]int{}
	var out []pinChange
	for _, next := range upserts {
		pin, used := was[next.SourceURL]
		if !used || pin == next.PinnedKey {
			continue
		}
		i, seen := index[next.SourceURL]
		if !seen {
			from, to := mustSet(pin), mustSet(next.PinnedKey)
			out = append(out, pinChange{Source: next.SourceURL, OldKeys: orNone(from.Fingerprints()), OldThreshold: from.Threshold(),
				NewKeys: orNone(to.Fingerprints()), NewThreshold: to.Threshold(), By: pinActor})
			i = len(out) - 1
			index[next.SourceURL] = i
		}
		out[i].Components = append(out[i].Components, next.Code)
	}
	for i := range out {
		out[i].Reason = pinReason(out[i])
	}
	return out
}

// pinReason words a pin change: what the manifest pins now, and for which
// components.
func pinReason(c pinChange) string {
	var what string
	switch {
	case len(c.OldKeys) == 0:
		what = "the manifest pins keys where it pinned none"
	case len(c.NewKeys) == 0:
		what = "the manifest pins no key any more: documents are no longer verified"
	case slices.Equal(c.OldKeys, c.NewKeys):
		what = "the manifest requires another number of signatures"
	default:
		what = "the manifest pins other keys"
	}
	return what + ", for " + strings.Join(c.Components, ", ")
}

// orNone is s, or an empty list for nil (the audit's JSON says [], not
// null).
func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
