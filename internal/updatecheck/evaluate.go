package updatecheck

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// The one evaluation path. Whatever asks for results — a fetched document,
// a 304, a failed fetch that keeps a stored document, a manifest sync — ends
// in evaluate and writeResults:
//
//   - evaluate derives a component's result from the document, its installed
//     version and the installed core, and records those inputs on the result;
//   - completeResults writes it, in short transactions, through a guarded
//     statement that refuses a result whose inputs are no longer the
//     current ones;
//   - when results were refused, or components joined the source, it reads
//     the inputs again and evaluates those components once more, outside
//     any transaction, until every component of the source has a result
//     from its current inputs (or a bounded number of rounds passed, when
//     a sync keeps moving them: that sync evaluates them itself).
//
// Dismissals are not inputs: a result lists every advisory that affects the
// installed version and the read model leaves out dismissed ones when read.

// docInput is one trusted document, parsed once, ready to evaluate
// components against.
type docInput struct {
	url  string
	doc  *updatedoc.Document
	hash []byte // sha256 of the exact body, as sources.document_hash
	key  string // the pinned key the body verified under; "" unsigned
	// kind evaluates the components against it (sourceKind.evaluate).
	kind sourceKind
	// npm, for an npm source, is its package instead of doc: each
	// component's releases are what the package offers its installed
	// version (npmKind.evaluate).
	npm *npmDoc
}

// evaluate computes the results of the components in inputs from d and
// what the feeds know (k). A component whose versions do not parse gets a
// result saying so (EvalError); an error means a result could not be
// encoded at all.
func evaluate(d *docInput, k *knowledge, inputs []store.ComponentInput, epoch int64) ([]store.Result, error) {
	out := make([]store.Result, 0, len(inputs))
	for _, in := range inputs {
		r, err := evaluateOne(d, k, in, epoch)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// evaluateOne is one component's result from d, by d's kind.
func evaluateOne(d *docInput, k *knowledge, in store.ComponentInput, epoch int64) (store.Result, error) {
	return d.kind.evaluate(d, k, in, epoch)
}

// evaluateDoc evaluates one component against pkg, what the document of d's
// source or, for an npm source, what its package offers the component,
// and merges what the feeds know of its package (knowledge.merge).
func evaluateDoc(d *docInput, k *knowledge, pkg *release.Package, in store.ComponentInput, epoch int64) (store.Result, error) {
	return evaluateGated(d, k, pkg, in, epoch, nil)
}

// evaluateGated is evaluateDoc with the kind's approval gate
// (release.OfferOptions.Unapproved; nil: none).
func evaluateGated(d *docInput, k *knowledge, pkg *release.Package, in store.ComponentInput, epoch int64,
	unapproved func(string) bool) (store.Result, error) {
	if k == nil {
		k = noKnowledge
	}
	r := store.Result{
		Site: in.Site, Code: in.Code, SourceURL: d.url, InstalledVersion: in.InstalledVersion, CoreVersion: in.CoreVersion,
		DocumentHash: d.hash, VerifiedKey: d.key, Epoch: epoch, IntelVersion: k.version,
		Advisories: []byte("[]"), Evaluation: []byte("{}"),
	}
	if in.Code == release.CoreCode {
		r.CoreVersion = in.InstalledVersion
	}
	ev := weigh(&r, pkg, k, in, unapproved)
	if err := resultOf(&r, ev, in); err != nil {
		return store.Result{}, err
	}
	return r, nil
}

// weigh evaluates pkg for the component, merges the feeds' advisories and
// decides the offer under the component's policy. What cannot be weighed
// is r's EvalError: an evaluation error never hides the feeds' advisories
// (malware and KEV included, docs/feeds.md), and nothing is offered that
// the policy did not judge.
func weigh(r *store.Result, pkg *release.Package, k *knowledge, in store.ComponentInput, unapproved func(string) bool) release.Evaluation {
	ev, err := release.Evaluate(pkg, in.Code, in.InstalledVersion, in.CoreVersion)
	evaluated := err == nil
	if err != nil {
		r.EvalError = err.Error()
		ev = release.Evaluation{Advisories: []release.AdvisoryMatch{}, Releases: []release.ReleaseStatus{}}
	}
	if ev.Missing {
		r.EvalError = fmt.Sprintf("the update document has no package %q", in.Code)
	}
	k.merge(&ev, in)
	if evaluated {
		if err := offer(&ev, k, in, unapproved); err != nil {
			r.EvalError = err.Error()
			ev.Update, ev.UpdateAvailable, ev.Security, ev.SecurityRelease = nil, false, false, nil
		}
	}
	return ev
}

// resultOf writes what ev decided into r: the policy's verdicts (waiting,
// held, next change), the versions offered, the advisories by what they
// are, and the evaluation itself.
func resultOf(r *store.Result, ev release.Evaluation, in store.ComponentInput) error {
	r.Policy, r.SkippedVersion, r.Approvals = in.Policy, in.Skipped, in.Approvals
	if ev.Waiting != nil {
		r.WaitingVersion, r.WaitingUntil = ev.Waiting.Version, ev.Waiting.Until
	}
	if ev.Held != nil {
		reason, err := json.Marshal(ev.Held.Reason)
		if err != nil {
			return fmt.Errorf("encode the held reason: %w", err)
		}
		r.HeldVersion, r.HeldReason = ev.Held.Version, reason
	}
	r.NextChangeAt = ev.NextChange
	r.ProvenanceLost = ev.ProvenanceLost
	// security is the publisher's mark; a release that clears an advisory
	// counts while that advisory is open (fix_ids, read with the
	// dismissals).
	r.UpdateAvailable, r.Security, r.NeedsNewerCore = ev.UpdateAvailable, ev.SecurityMarked, ev.NeedsNewerCore
	r.FixIDs = ev.FixIDs
	if ev.Fix != nil {
		r.FixVersion = ev.Fix.Version
	}
	if ev.Latest != nil {
		r.LatestVersion, r.ReleaseURL = ev.Latest.Version, ev.Latest.URL
	}
	if ev.Update != nil {
		r.UpdateVersion, r.ReleaseURL = ev.Update.Version, ev.Update.URL
	}
	if ev.BlockedUpdate != nil {
		r.RequiredCore = ev.BlockedUpdate.RequiresCore
	}
	if ev.SecurityRelease != nil {
		r.SecurityVersion = ev.SecurityRelease.Version
		r.SecurityVersions = ev.SecurityVersions
	}
	for _, a := range ev.Advisories {
		r.AdvisoryIDs = append(r.AdvisoryIDs, a.ID)
		if a.NoFix {
			r.NoFixIDs = append(r.NoFixIDs, a.ID)
		}
		if a.KnownExploited {
			r.ExploitedIDs = append(r.ExploitedIDs, a.ID)
		}
		if a.Malicious {
			r.MaliciousIDs = append(r.MaliciousIDs, a.ID)
		}
	}
	var err error
	if r.Advisories, err = json.Marshal(ev.Advisories); err != nil {
		return fmt.Errorf("encode the advisories of %q: %w", in.Code, err)
	}
	if r.Evaluation, err = json.Marshal(ev); err != nil {
		return fmt.Errorf("encode the evaluation of %q: %w", in.Code, err)
	}
	return nil
}

// offer decides what the component is offered under its policy and skip
// (docs/policy.md), once the feeds' advisories are merged: a release that
// fixes one of them is a security release. The soak is judged on the
// database's clock at the evaluation (knowledge.clock).
func offer(ev *release.Evaluation, k *knowledge, in store.ComponentInput, unapproved func(string) bool) error {
	p, err := release.ParsePolicyText(in.Policy)
	if err != nil {
		return err
	}
	return ev.Offer(in.InstalledVersion, release.OfferOptions{Policy: p, Skipped: in.Skipped, Now: k.clock(), Unapproved: unapproved})
}

// lockedTx runs fn in one short transaction that holds the lease's lock:
// a fenced one for a check (lease.WithLease), a plain locked one for a sync
// (lease.WithLock).
type lockedTx func(ctx context.Context, fn func(*store.Tx) error) error

// resultBatch is how many results one transaction writes: a transaction
// holds the lease's lock, which renewals and every other writer wait for,
// so it must stay within a few milliseconds whatever the number of
// components of a source.
const resultBatch = 100

// completeResults writes results evaluated from d in batches, then makes
// sure that every component using d's source now has a result from the
// current inputs: written are the codes already written (refused: some
// others were refused), using how many components used the source when its
// row was written. Components whose
// write was refused (their inputs moved) or that joined the source are
// evaluated again from inputs read outside any transaction; a write that
// races with another change is refused again and the next round reads
// again.
func (w *writer) completeResults(ctx context.Context, run lockedTx, d *docInput, results []store.Result,
	written []store.ComponentKey, refused bool, using int, epoch int64) error {
	done := make(map[store.ComponentKey]bool, using)
	for _, k := range written {
		done[k] = true
	}
	write := func(results []store.Result) error {
		for start := 0; start < len(results); start += resultBatch {
			batch := results[start:min(start+resultBatch, len(results))]
			err := run(ctx, func(tx *store.Tx) error {
				keys, err := tx.ResultWrite(ctx, batch)
				if err != nil {
					return err
				}
				for _, k := range keys {
					done[k] = true
				}
				refused = refused || len(keys) < len(batch)
				return w.queue(ctx, tx, keys, epoch)
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(results); err != nil {
		return err
	}
	for range evaluateRounds {
		if !refused && len(done) == using {
			return nil // every component of the source has its result
		}
		inputs, err := w.store.ComponentInputsForSource(ctx, d.url)
		if err != nil {
			return err
		}
		inputs = slices.DeleteFunc(inputs, func(in store.ComponentInput) bool { return done[in.Key()] })
		if len(inputs) == 0 {
			return nil
		}
		using, refused = len(done)+len(inputs), false
		k, err := w.knowledge(ctx, packagesOf(inputs))
		if err != nil {
			return err
		}
		results, err := evaluate(d, k, inputs, epoch)
		if err != nil {
			return err
		}
		if err := write(results); err != nil {
			return err
		}
	}
	return nil
}
