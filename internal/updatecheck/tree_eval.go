package updatecheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// The installed trees' findings (docs/feeds.md "The whole tree"): every
// package version any site installs, or installed once, matched by the
// components' matcher (knowledge.match) once per version of the feeds
// however many sites have it (tree_matched), and the look-back over the
// versions each site no longer has, read from those matches. They are
// evaluated under the check's lease, again only when a site's tree or the
// feeds' version (intel_state) moved since the last evaluation, and
// written whole in one fenced transaction: a check or a feed sync killed
// midway leaves the last findings, and the next one, finding the versions
// moved, evaluates again.

// EvaluateTree evaluates the installed trees' findings now, when a tree
// or the feeds moved since they were (after a lockfile sync or a push
// changed a tree), holding the lease as an import does; it reports
// whether it wrote. Nothing happens when a check or a feed sync holds the
// lease: the next check or feed sync evaluates it.
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

// evaluateTree evaluates the trees' findings under l when a tree or the
// feeds moved since they were, and writes them; it reports whether it
// wrote. Only the versions not matched at the feeds' version yet are
// matched (every version when the feeds moved). A site whose tree a sync
// or a push moves meanwhile stays due: the next evaluation matches what
// it brought.
func (w *writer) evaluateTree(ctx context.Context, l lease.Lease) (bool, error) {
	for range evaluateRounds {
		due, ok, err := w.store.TreeEvaluationDue(ctx)
		if err != nil || !ok || !due.Due {
			return false, err
		}
		m, err := w.store.TreeToMatch(ctx, due.Every)
		if err != nil {
			return false, err
		}
		ev, err := w.treeEvaluation(ctx, m.Versions)
		if err != nil {
			return false, err
		}
		if ev.version != due.IntelVersion {
			continue // the feeds moved since due was read: read it again
		}
		err = w.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
			// The sites whose tree moved, read before the write records
			// them evaluated: a finding a push brought is new to its site.
			var moved []int64
			if w.notifier != nil {
				var err error
				if moved, err = tx.TreeSitesMoved(ctx); err != nil {
					return err
				}
			}
			added, err := tx.TreeFindingsWrite(ctx, m, ev.findings, ev.version, l.Epoch)
			if err != nil {
				return err
			}
			// A fix never outlives its finding: an instance whose version
			// changed keeps its id, and its fixes would stay until the
			// next check's fix step.
			if _, err := tx.TreeFixesDeleteStale(ctx, m); err != nil {
				return err
			}
			if w.notifier != nil {
				// The new counted findings, malicious above all, in
				// the evaluation's transaction: at least once.
				if err := w.notifier.QueueTreeFindings(ctx, tx, store.LocalSite, w.treeDevMode(), l.Epoch); err != nil {
					return err
				}
				// The channels of some sites and of the fleet: per site,
				// and the fleet's digest.
				if err := w.notifier.QueueSiteTreeFindings(ctx, tx, moved, w.treeDevMode(), l.Epoch); err != nil {
					return err
				}
			}
			ids := make([]int64, 0, len(added))
			for _, x := range added {
				if err := tx.TreeExposureAudit(ctx, x); err != nil {
					return err
				}
				w.logger.WarnContext(ctx, "a version the site had installed is named by an advisory", "site", x.Site,
					"package", x.Name, "version", x.Version, "advisory", x.AdvisoryID, "sentence", x.Sentence())
				// Sent to the channels that see its site
				// (EventPlanTreeExposed).
				ids = append(ids, x.ID)
			}
			if w.notifier == nil || len(ids) == 0 {
				return nil
			}
			return w.notifier.QueueTreeExposed(ctx, tx, ids, l.Epoch)
		})
		if err != nil {
			return false, err
		}
		w.matched.Add(int64(len(m.Versions)))
		w.logger.InfoContext(ctx, "installed trees evaluated", "sites", len(m.Sites), "versions_matched", len(m.Versions),
			"every", m.Every, "findings", len(ev.findings))
		w.reads.Changed()
		return true, nil
	}
	return false, nil
}

// treeEval is one evaluation of the trees' versions: their findings, at
// the feeds' version.
type treeEval struct {
	version  int64
	findings []store.TreeFinding
}

// treeChunk is how many package names one read of the stored records
// takes: the records of a chunk are parsed, matched and dropped before the
// next chunk is read, so that thousands of packages, each named by many
// records, are matched in bounded memory (docs/performance.md).
const treeChunk = 250

// treeEvaluation matches each of versions against what the feeds know
// now, treeChunk package names at a time.
func (w *writer) treeEvaluation(ctx context.Context, versions []store.NameVersion) (treeEval, error) {
	// Sorted by name, as Go orders them (the database's collation may
	// not): each chunk takes the versions of its names from the front.
	versions = slices.Clone(versions)
	slices.SortStableFunc(versions, func(a, b store.NameVersion) int { return strings.Compare(a.Name, b.Name) })
	names := make([]string, 0, len(versions))
	for _, p := range versions {
		names = append(names, p.Name)
	}
	names = slices.Compact(names)
	out := treeEval{version: -1, findings: []store.TreeFinding{}}
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
		n := 0
		for n < len(versions) && versions[n].Name <= last {
			n++
		}
		found, err := k.evaluateTree(versions[:n])
		if err != nil {
			return treeEval{}, err
		}
		versions = versions[n:]
		out.findings = append(out.findings, found...)
	}
	return out, nil
}

// evaluateTree is the findings of versions from k: for each, every
// advisory the components' matcher finds (the withdrawn ones apart).
func (k *knowledge) evaluateTree(versions []store.NameVersion) ([]store.TreeFinding, error) {
	out := []store.TreeFinding{}
	for _, p := range versions {
		advisories, withdrawn := k.match(p.Name, p.Version, false, nil, nil, nil)
		for _, list := range []struct {
			as        []release.AdvisoryMatch
			withdrawn bool
		}{{advisories, false}, {withdrawn, true}} {
			for _, a := range list.as {
				f, err := treeFinding(p.Name, p.Version, a, list.withdrawn)
				if err != nil {
					return nil, err
				}
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// treeFinding is a, an advisory of name@version, as the tree's findings
// store it (store.TreeFindingOf), keyed by its id and aliases.
func treeFinding(name, version string, a release.AdvisoryMatch, withdrawn bool) (store.TreeFinding, error) {
	return store.TreeFindingOf(name, version, a, advisoryKeys(a.ID, a.Aliases), withdrawn)
}
