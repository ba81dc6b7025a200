package updatecheck

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// The installed tree's findings (docs/feeds.md "The whole tree"): every
// installed package version matched by the components' matcher
// (knowledge.match), and the look-back over the versions the tree no
// longer has. They are evaluated under the check's lease, again only when
// the tree (tree_state.tree_hash) or the feeds' version (intel_state)
// moved since the last evaluation, and written whole in one fenced
// transaction: a check or a feed sync killed midway leaves the last
// findings, and the next one, finding the versions moved, evaluates again.

// EvaluateTree evaluates the installed tree's findings now, when the tree
// or the feeds moved since they were (after a lockfile sync changed the
// tree), holding the lease as an import does; it reports whether it wrote.
// Nothing happens when a check or a feed sync holds the lease: the next
// check or feed sync evaluates it.
func (c *Checker) EvaluateTree(ctx context.Context) (bool, error) {
	var wrote bool
	err := feedHost{c.writer}.HoldLease(ctx, func(ctx context.Context, l lease.Lease) error {
		var err error
		wrote, err = c.evaluateTree(ctx, l)
		return err
	})
	if errors.Is(err, feedsync.ErrBusy) {
		return false, nil
	}
	return wrote, err
}

// evaluateTree evaluates the tree's findings under l when the tree or the
// feeds moved since they were, and writes them; it reports whether it
// wrote. A lockfile sync that changes the tree meanwhile makes it evaluate
// again (up to evaluateRounds).
func (w *writer) evaluateTree(ctx context.Context, l lease.Lease) (bool, error) {
	for range evaluateRounds {
		due, ok, err := w.store.TreeEvaluationDue(ctx)
		if err != nil || !ok || !due.Due {
			return false, err
		}
		ev, err := w.treeEvaluation(ctx)
		if err != nil {
			return false, err
		}
		err = w.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
			added, err := tx.TreeFindingsWrite(ctx, ev.findings, ev.exposures, due.TreeHash, ev.version, l.Epoch)
			if err != nil {
				return err
			}
			// A fix never outlives its finding: an instance whose version
			// changed keeps its id, and its fixes would stay until the
			// next check's fix step.
			if _, err := tx.TreeFixesDeleteStale(ctx); err != nil {
				return err
			}
			if w.notifier != nil {
				// The new counted findings, malicious above all, in
				// the evaluation's transaction: at least once.
				if err := w.notifier.QueueTreeFindings(ctx, tx, store.LocalSite, w.treeDevMode(), l.Epoch); err != nil {
					return err
				}
			}
			ids := make([]int64, 0, len(added))
			for _, x := range added {
				if err := tx.TreeExposureAudit(ctx, x); err != nil {
					return err
				}
				w.logger.WarnContext(ctx, "a version the site had installed is named by an advisory", "package", x.Name,
					"version", x.Version, "advisory", x.AdvisoryID, "sentence", x.Sentence())
				ids = append(ids, x.ID)
			}
			if w.notifier == nil || len(ids) == 0 {
				return nil
			}
			return w.notifier.QueueTreeExposed(ctx, tx, ids, l.Epoch)
		})
		if errors.Is(err, store.ErrTreeMoved) {
			continue
		}
		if err != nil {
			return false, err
		}
		w.reads.Changed()
		return true, nil
	}
	return false, nil
}

// treeEval is one evaluation of the tree: its findings and look-back, at
// the feeds' version.
type treeEval struct {
	version   int64
	findings  []store.TreeFinding
	exposures []store.TreeExposure
}

// treeChunk is how many package names one read of the stored records
// takes: the records of a chunk are parsed, matched and dropped before the
// next chunk is read, so that a tree of thousands of packages, each named
// by many records, is matched in bounded memory (docs/performance.md).
const treeChunk = 250

// treeEvaluation matches every installed package version, and every
// version the tree had installed and no longer has, against what the
// feeds know now, treeChunk package names at a time.
func (w *writer) treeEvaluation(ctx context.Context) (treeEval, error) {
	installed, err := w.store.TreeInstalledVersions(ctx)
	if err != nil {
		return treeEval{}, err
	}
	past, err := w.store.TreePastVersions(ctx)
	if err != nil {
		return treeEval{}, err
	}
	// Both lists sorted by name, as Go orders them (the database's
	// collation may not): each chunk takes the versions of its names from
	// the front of each.
	slices.SortStableFunc(installed, func(a, b store.NameVersion) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(past, func(a, b store.PastVersion) int { return strings.Compare(a.Name, b.Name) })
	names := make([]string, 0, len(installed)+len(past))
	for _, p := range installed {
		names = append(names, p.Name)
	}
	for _, p := range past {
		names = append(names, p.Name)
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	out := treeEval{version: -1, findings: []store.TreeFinding{}, exposures: []store.TreeExposure{}}
	size := cmp.Or(w.treeChunk, treeChunk)
	for start := 0; start < len(names) || out.version < 0; start += size {
		chunk := names[min(start, len(names)):min(start+size, len(names))]
		k, err := w.knowledge(ctx, chunk)
		if err != nil {
			return treeEval{}, err
		}
		if out.version >= 0 && k.version != out.version {
			// Only the lease's holder stores advisories: not while it
			// evaluates. Said rather than mixed.
			return treeEval{}, fmt.Errorf("the feeds' version moved from %d to %d during the tree's evaluation", out.version, k.version)
		}
		out.version = k.version
		last := ""
		if len(chunk) > 0 {
			last = chunk[len(chunk)-1]
		}
		n := countUpTo(installed, func(p store.NameVersion) string { return p.Name }, last)
		m := countUpTo(past, func(p store.PastVersion) string { return p.Name }, last)
		ev, err := k.evaluateTree(installed[:n], past[:m])
		if err != nil {
			return treeEval{}, err
		}
		installed, past = installed[n:], past[m:]
		out.findings = append(out.findings, ev.findings...)
		out.exposures = append(out.exposures, ev.exposures...)
	}
	return out, nil
}

// countUpTo is how many of the first elements of sorted (by name) have a
// name at most last.
func countUpTo[T any](sorted []T, name func(T) string, last string) int {
	n := 0
	for n < len(sorted) && name(sorted[n]) <= last {
		n++
	}
	return n
}

// evaluateTree is the tree's findings and look-back from k: for each
// installed version, every advisory the components' matcher finds (the
// withdrawn ones apart); for each past interval, the advisories that say
// the version is malicious or exploited in the wild.
func (k *knowledge) evaluateTree(installed []store.NameVersion, past []store.PastVersion) (treeEval, error) {
	ev := treeEval{version: k.version, findings: []store.TreeFinding{}, exposures: []store.TreeExposure{}}
	for _, p := range installed {
		advisories, withdrawn := k.match(p.Name, p.Version, false, nil, nil, nil)
		for _, list := range []struct {
			as        []release.AdvisoryMatch
			withdrawn bool
		}{{advisories, false}, {withdrawn, true}} {
			for _, a := range list.as {
				f, err := treeFinding(p.Name, p.Version, a, list.withdrawn)
				if err != nil {
					return treeEval{}, err
				}
				ev.findings = append(ev.findings, f)
			}
		}
	}
	for _, p := range past {
		advisories, _ := k.match(p.Name, p.Version, false, nil, nil, nil)
		for _, a := range advisories {
			if !a.Malicious && !a.KnownExploited {
				continue
			}
			body, err := json.Marshal(a)
			if err != nil {
				return treeEval{}, fmt.Errorf("the advisory %s of %s@%s: %w", a.ID, p.Name, p.Version, err)
			}
			ev.exposures = append(ev.exposures, store.TreeExposure{IntervalID: p.IntervalID, Site: p.Site, Name: p.Name, Version: p.Version,
				AdvisoryID: a.ID, Advisory: body, Malicious: a.Malicious, KnownExploited: a.KnownExploited,
				InstalledAt: p.InstalledAt, RemovedAt: p.RemovedAt})
		}
	}
	return ev, nil
}

// treeFinding is a, an advisory of name@version, as the tree's findings
// store it (store.TreeFindingOf), keyed by its id and aliases.
func treeFinding(name, version string, a release.AdvisoryMatch, withdrawn bool) (store.TreeFinding, error) {
	return store.TreeFindingOf(name, version, a, advisoryKeys(a.ID, a.Aliases), withdrawn)
}
