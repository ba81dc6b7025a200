package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// Why a skip is refused (docs/policy.md "Skips"). Each is said in words an
// operator can act on; the pages, the API and the CLI add the version and
// the component.
var (
	// ErrSkipNotAVersion: the version to skip is not a semantic version.
	ErrSkipNotAVersion = errors.New("the version to skip is not a semantic version, such as 2.4.0")
	// ErrSkipNotNewer: the version is not newer than the installed one:
	// nothing at or below it is offered anyway.
	ErrSkipNotNewer = errors.New("the version to skip is not newer than the installed version")
	// ErrSkipNoSuchRelease: the component's update source publishes no
	// such release (in its current evaluation).
	ErrSkipNoSuchRelease = errors.New("the update source publishes no such release")
	// ErrSkipPrerelease: a pre-release is never offered to a site on a
	// stable release, so there is nothing to skip.
	ErrSkipPrerelease = errors.New("a pre-release is not offered to a site on a stable release, so there is nothing to skip")
	// ErrSkipSecurity: a security release for this site (its publisher
	// marks it so, or it fixes an advisory of the installed version) is
	// never hidden; its advisory is dismissed instead, with a reason.
	ErrSkipSecurity = errors.New("a security release cannot be skipped: dismiss its advisory instead, with a reason")
	// ErrSkipWayOut: the release is the way out of a malicious or
	// known-exploited advisory of the installed version (its cleared_by):
	// a security release, said in the words of what skipping it would
	// leave (removing the package, or the exploited flaw).
	ErrSkipWayOut = errors.New("the release is the way out of a malicious or exploited advisory of the installed version, and cannot be skipped: dismiss the advisory instead, with a reason")
	// ErrSkipNotEvaluated: the component has no current evaluation, so
	// what its source publishes is not known.
	ErrSkipNotEvaluated = errors.New("the component has no current evaluation, so its releases are not known: run a check first")
	// ErrNoSkip: Unskip of a component that skips no version.
	ErrNoSkip = errors.New("the component skips no version")
)

// Skips are the admins' "not this version": a plain update is not offered
// until a newer release is (docs/policy.md "Skips"). A skip is an input of
// evaluation, as the installed version is, so changing one evaluates the
// component again from its source's stored document at once: no check and
// no network are needed for the catalog to read "skipped".
//
// The skip is written, with its audit row and the new result, in one short
// transaction that holds the lease's lock, as the manifest sync writes
// its skips: a check's fenced write never sees the skip change between its
// reads and its commit. The evaluation itself runs before, outside any
// transaction; the guarded write (store.Tx.ResultWrite) refuses a result
// evaluated under another skip or from another document, whoever wrote
// it: a check racing a skip has its result refused and evaluates again
// from the current inputs, and a skip whose result is refused because a
// check stored another document meanwhile evaluates again here.
type Skips struct {
	*writer
	// beforeWrite, for tests, runs between the evaluation and the
	// transaction that writes the skip and its result.
	beforeWrite func()
}

// NewSkips returns the skips, writing as c does (the same store, lease,
// notifications and reads).
func NewSkips(c *Checker) *Skips { return &Skips{writer: c.writer} }

// SkipRequest is an admin's skip of Version of the component Code, with a
// reason (required, at most store.MaxReasonLength characters). UserID (0
// for none) and By (the user's email, or readmodel.ActorCLI) are who asked,
// for the audit log and the pages.
type SkipRequest struct {
	// Site is the site whose component it is (sites.id).
	Site                  int64
	Code, Version, Reason string
	UserID                int64
	By                    string
}

// reasonOf is an admin's reason for a skip or an approval, trimmed:
// store.ErrReasonRequired when empty, store.ErrReasonTooLong past
// store.MaxReasonLength characters.
func reasonOf(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return "", store.ErrReasonRequired
	case utf8.RuneCountInString(reason) > store.MaxReasonLength:
		return "", store.ErrReasonTooLong
	}
	return reason, nil
}

// Skip records req's skip, replacing the component's, audited
// (component.skip), and evaluates the component again, so that the plain
// releases at or below the version are no longer offered and a newer one
// is. It returns the skip as stored.
//
// store.ErrNotFound: the component is not installed;
// store.ErrReasonRequired, store.ErrReasonTooLong: the reason;
// store.ErrFromManifest: the manifest declares the component's skip; and
// the ErrSkip* errors say why the version cannot be skipped.
func (s *Skips) Skip(ctx context.Context, req SkipRequest) (store.Skip, error) {
	comp, err := s.store.Component(ctx, req.Site, req.Code)
	if err != nil {
		return store.Skip{}, err
	}
	req.Version = strings.TrimSpace(req.Version)
	if req.Reason, err = reasonOf(req.Reason); err != nil {
		return store.Skip{}, err
	}
	if err := s.notFromManifest(ctx, comp.Site, comp.Code); err != nil {
		return store.Skip{}, err
	}
	if err := s.skippable(ctx, comp.Site, comp.Code, req.Version); err != nil {
		return store.Skip{}, err
	}
	var out store.Skip
	err = s.change(ctx, comp, req.Version, func(tx *store.Tx) error {
		if err := tx.SkipPut(ctx, store.Skip{Site: comp.Site, Code: comp.Code, Version: req.Version, Reason: req.Reason, By: req.By, UserID: req.UserID}); err != nil {
			return err
		}
		var err error
		out, _, err = tx.SkipOf(ctx, comp.Site, comp.Code)
		return err
	})
	return out, err
}

// Unskip ends the skip of site's component, audited (component.unskip),
// and evaluates it again: the skipped version is offered again if it is
// the newest allowed. It returns the skip it ended. store.ErrNotFound: the
// component is not installed; ErrNoSkip: it skips nothing;
// store.ErrFromManifest: the manifest declares the skip.
func (s *Skips) Unskip(ctx context.Context, site int64, code string, userID int64, by string) (store.Skip, error) {
	comp, err := s.store.Component(ctx, site, code)
	if err != nil {
		return store.Skip{}, err
	}
	cur, ok, err := s.store.SkipOf(ctx, site, code)
	switch {
	case err != nil:
		return store.Skip{}, err
	case !ok:
		return store.Skip{}, ErrNoSkip
	case cur.FromManifest:
		return store.Skip{}, store.ErrFromManifest
	}
	err = s.change(ctx, comp, "", func(tx *store.Tx) error {
		ended, err := tx.SkipDelete(ctx, site, code, userID, by, false)
		if err == nil && ended == "" {
			return ErrNoSkip // ended meanwhile
		}
		return err
	})
	return cur, err
}

// notFromManifest refuses early to change a skip the manifest declares
// (SkipPut and SkipDelete refuse it too, in their transaction).
func (s *Skips) notFromManifest(ctx context.Context, site int64, code string) error {
	cur, ok, err := s.store.SkipOf(ctx, site, code)
	if err != nil {
		return err
	}
	if ok && cur.FromManifest {
		return store.ErrFromManifest
	}
	return nil
}

// skippable says whether version may be skipped, judged on the
// component's current evaluation: a release its source publishes, newer
// than the installed version, weighed for the site (no pre-release for a
// stable installed version), and no security release for the site. The
// offer itself never hides a security release whatever the skip
// (release.Evaluation.Offer), so a release that becomes one later is
// offered all the same.
func (s *Skips) skippable(ctx context.Context, site int64, code, version string) error {
	v, err := npmver.Parse(version)
	if err != nil {
		return ErrSkipNotAVersion
	}
	d, err := s.store.ComponentDetail(ctx, site, code)
	if err != nil {
		return err
	}
	if !d.Evaluated || len(d.Evaluation) == 0 {
		return ErrSkipNotEvaluated
	}
	inst, err := npmver.Parse(d.Installed)
	if err != nil {
		return ErrSkipNotEvaluated // the installed version could not be evaluated
	}
	if !v.GreaterThan(inst) {
		return ErrSkipNotNewer
	}
	var ev release.Evaluation
	if err := json.Unmarshal(d.Evaluation, &ev); err != nil {
		return fmt.Errorf("stored evaluation of %q: %w", code, err)
	}
	// The offer weighs the releases for the site (Offer "" for one it does
	// not, a pre-release for a stable site) and marks its security
	// releases (SecurityFix), which no skip hides.
	if err := ev.Offer(d.Installed, release.OfferOptions{Skipped: version, Now: time.Now()}); err != nil {
		return ErrSkipNotEvaluated
	}
	for _, r := range ev.Releases {
		rv, err := npmver.Parse(r.Version)
		if err != nil || !rv.Equal(v) {
			continue
		}
		switch {
		case r.Offer == "":
			return ErrSkipPrerelease
		case wayOut(ev.Advisories, r.Version):
			return ErrSkipWayOut
		case r.SecurityFix:
			return ErrSkipSecurity
		}
		return nil
	}
	return ErrSkipNoSuchRelease
}

// wayOut: version clears a malicious or known-exploited advisory of the
// installed version (its ClearedBy).
func wayOut(as []release.AdvisoryMatch, version string) bool {
	for _, a := range as {
		if (a.Malicious || a.KnownExploited) && a.ClearedBy == version {
			return true
		}
	}
	return false
}

// change writes a change of the component's skip (write, in the
// transaction) together with the component evaluated under its new
// skipped version ("" none) from the stored document, and evaluates
// again, from the inputs as they are then, when that result was refused
// because other inputs moved meanwhile.
func (s *Skips) change(ctx context.Context, comp store.Component, skipped string, write func(*store.Tx) error) error {
	results, err := s.evaluateStoredOne(ctx, comp, skipped)
	if err != nil {
		return err
	}
	defer s.reads.Changed()
	ctx, countSites := s.withCounts(ctx)
	defer countSites()
	countsDue(ctx, comp.Site)
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	written := 0
	err = s.lease.WithLock(ctx, func(tx *store.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		keys, err := tx.ResultWrite(ctx, results)
		if err != nil {
			return err
		}
		written = len(keys)
		return s.queue(ctx, tx, keys, 0)
	})
	if err != nil || written == len(results) {
		return err
	}
	return s.reevaluate(ctx, comp.Site, comp.Code)
}

// reevaluate evaluates the component again from what is current (its row,
// its skip, the stored document) until a result is written, a few rounds
// at most: each refusal means a newer writer moved an input, and that
// writer evaluates too. The skip is written by then: an error here says
// only that the catalog reads "not evaluated" until the next check.
func (s *Skips) reevaluate(ctx context.Context, site int64, code string) error {
	ctx, countSites := s.withCounts(ctx)
	defer countSites()
	countsDue(ctx, site)
	for range evaluateRounds {
		comp, err := s.store.Component(ctx, site, code)
		if errors.Is(err, store.ErrNotFound) {
			return nil // removed meanwhile
		}
		if err != nil {
			return err
		}
		cur, _, err := s.store.SkipOf(ctx, site, code)
		if err != nil {
			return err
		}
		results, err := s.evaluateStoredOne(ctx, comp, cur.Version)
		if err != nil || len(results) == 0 {
			return err
		}
		n, err := (&Syncer{writer: s.writer}).writeStored(ctx, results)
		if err != nil || n == len(results) {
			return err
		}
	}
	return nil
}

// evaluateStoredOne evaluates comp under skipped from its source's stored
// document: no result when it has no source or no document that can be
// trusted (the next check decides then).
func (s *Skips) evaluateStoredOne(ctx context.Context, comp store.Component, skipped string) ([]store.Result, error) {
	if comp.SourceURL == "" {
		return nil, nil
	}
	approvals, err := s.store.ApprovalInputs(ctx, comp.Site)
	if err != nil {
		return nil, err
	}
	u := store.Unevaluated{Site: comp.Site, Code: comp.Code, InstalledVersion: comp.InstalledVersion, SourceURL: comp.SourceURL, PinnedKey: comp.PinnedKey,
		Package: comp.Package, Policy: comp.Policy, Skipped: skipped, Approvals: approvals[comp.Code]}
	results, err := s.evaluateFromStored(ctx, []store.Unevaluated{u})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // its source was never stored: nothing to evaluate from
	}
	return results, err
}
