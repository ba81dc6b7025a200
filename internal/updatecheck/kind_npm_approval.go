// Approvals pinned to a version (docs/policy.md "Approvals"): under a
// policy whose approve is "scripts", an npm update whose diff against the
// installed version adds or changes an install-time script, or declares
// a dependency from outside the registry, is held until an admin approves
// that exact version and what it brings.

package updatecheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// Why an approval is refused, in words an operator can act on.
var (
	// ErrApproveNothing: the version brings nothing an approval is for
	// (no install script added or changed, no source outside the
	// registry), or its manifests are not known to say so.
	ErrApproveNothing = errors.New("the version brings no install script and no source outside the registry that awaits an approval")
	// ErrApproveNotNpm: the component's source is not an npm package.
	ErrApproveNotNpm = errors.New("only an npm package's updates await approval")
)

// approvalNeed is what version brings over installed in pkg that awaits
// an approval: a line per install script added or changed (by the
// SHA-256 of its whole text: npm.Script), per hasInstallScript newly set
// with no script to name, and per declared dependency from outside the
// registry; sorted, with the SHA-256 of the lines joined by "\n", which
// the approval names. ok is false when it brings none, or the manifests
// were not kept (nothing can be said, and nothing is held).
func approvalNeed(pkg *npm.Package, installed, version string) (readmodel.ApprovalAsk, bool) {
	b, kept := npm.Diff(pkg, installed, version)
	if !kept {
		return readmodel.ApprovalAsk{}, false
	}
	var lines []string
	for _, s := range b.Scripts {
		lines = append(lines, s.Name+" script sha256:"+s.New.SHA256)
	}
	if b.InstallScriptFlag && len(b.Scripts) == 0 {
		lines = append(lines, "an install script (hasInstallScript) with no text in scripts")
	}
	for _, e := range b.Exotic {
		lines = append(lines, e.Section+" "+e.Name+" from "+e.Spec)
	}
	if len(lines) == 0 {
		return readmodel.ApprovalAsk{}, false
	}
	slices.Sort(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return readmodel.ApprovalAsk{Version: version, Digest: hex.EncodeToString(h[:]), Lines: lines}, true
}

// approved reports whether approvals (store.ComponentInput.Approvals: a
// line "VERSION DIGEST" each) approve version with digest.
func approved(approvals, version, digest string) bool {
	return slices.Contains(strings.Split(approvals, "\n"), version+" "+digest)
}

// approvalGate is the offer's release.OfferOptions.Unapproved for an npm
// component: a version that brings what awaits approval, not approved.
func approvalGate(pkg *npm.Package, in store.ComponentInput) func(string) bool {
	return func(version string) bool {
		need, ok := approvalNeed(pkg, in.InstalledVersion, version)
		return ok && !approved(in.Approvals, version, need.Digest)
	}
}

// approvalAsk is what the evaluation ev of an npm component leaves
// awaiting an approval: the release held for one, or the offered security
// fix that awaits one; nil when none does.
func approvalAsk(pkg *npm.Package, installed string, ev release.Evaluation) *readmodel.ApprovalAsk {
	for _, rs := range ev.Releases {
		if !rs.AwaitsApproval {
			continue
		}
		need, ok := approvalNeed(pkg, installed, rs.Version)
		if !ok {
			return nil
		}
		need.Offered = rs.Offer == release.ReleaseOffered
		return &need
	}
	return nil
}

// Approvals are the admins' approvals of what an update brings (docs/policy.md
// "Approvals"). An approval is an input of evaluation, as a skip is: it
// is written with its audit row, and the component is evaluated again
// from its source's stored document at once, so the release it approves
// is offered without a check; the guarded write refuses a result
// evaluated under other approvals, so a check racing an approval never
// undoes it.
type Approvals struct {
	*writer
}

// NewApprovals returns the approvals, writing as c does.
func NewApprovals(c *Checker) *Approvals { return &Approvals{writer: c.writer} }

// ApproveRequest is an admin's approval of what Version of the component
// Code brings, with a reason (required, at most store.MaxReasonLength
// characters). UserID (0 for none) and By (the user's email, or
// readmodel.ActorCLI) are who asked.
type ApproveRequest struct {
	// Site is the site whose component it is (sites.id).
	Site                  int64
	Code, Version, Reason string
	UserID                int64
	By                    string
}

// Approve records req's approval of what the version brings now (as its
// source's stored package says: the install scripts by the SHA-256 of
// their text, the sources outside the registry), audited
// (component.approve), and evaluates the component again. It returns the
// approval as stored.
//
// store.ErrNotFound: the component is not installed;
// store.ErrReasonRequired, store.ErrReasonTooLong: the reason;
// ErrApproveNotNpm, ErrApproveNothing: nothing to approve.
func (a *Approvals) Approve(ctx context.Context, req ApproveRequest) (store.Approval, error) {
	comp, err := a.store.Component(ctx, req.Site, req.Code)
	if err != nil {
		return store.Approval{}, err
	}
	req.Version = strings.TrimSpace(req.Version)
	if req.Reason, err = reasonOf(req.Reason); err != nil {
		return store.Approval{}, err
	}
	need, err := a.need(ctx, comp, req.Version)
	if err != nil {
		return store.Approval{}, err
	}
	var out store.Approval
	err = a.lease.WithLock(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.ApprovalPut(ctx, store.Approval{Site: comp.Site, Code: comp.Code, Version: req.Version, Digest: need.Digest, Reason: req.Reason,
			By: req.By, UserID: req.UserID, What: need.Lines})
		return err
	})
	if err != nil {
		return store.Approval{}, err
	}
	a.reads.Changed()
	return out, a.reevaluate(ctx, comp.Site, comp.Code)
}

// need is what version of comp brings that awaits an approval, read from
// its source's stored package.
func (a *Approvals) need(ctx context.Context, comp store.Component, version string) (readmodel.ApprovalAsk, error) {
	if readmodel.SourceKindOf(comp.SourceURL) != readmodel.SourceNpm {
		return readmodel.ApprovalAsk{}, ErrApproveNotNpm
	}
	src, err := a.store.Source(ctx, comp.SourceURL)
	if errors.Is(err, store.ErrNotFound) {
		return readmodel.ApprovalAsk{}, ErrApproveNothing
	}
	if err != nil {
		return readmodel.ApprovalAsk{}, err
	}
	pkg := a.storedPackage(src)
	if pkg == nil {
		return readmodel.ApprovalAsk{}, ErrApproveNothing
	}
	need, ok := approvalNeed(pkg, comp.InstalledVersion, version)
	if !ok {
		return readmodel.ApprovalAsk{}, ErrApproveNothing
	}
	return need, nil
}

// reevaluate evaluates the component again from what is current (its row,
// its skip and approvals, the stored document) until a result is
// written, a few rounds at most, as a skip does.
func (a *Approvals) reevaluate(ctx context.Context, site int64, code string) error {
	return (&Skips{writer: a.writer}).reevaluate(ctx, site, code)
}

// approvalFacts records in facts what r's evaluation leaves awaiting an
// approval, and, for a release held for one, the signals of what it
// brings beside the offered update's: the page shows both.
func approvalFacts(facts *readmodel.RegistryFacts, n *npmDoc, in store.ComponentInput, r store.Result) error {
	if p, err := release.ParsePolicyText(in.Policy); err != nil || p.Approve != release.ApproveScripts || r.EvalError != "" {
		return nil // nothing awaits an approval (a policy that does not read is the result's EvalError)
	}
	var ev release.Evaluation
	if err := json.Unmarshal(r.Evaluation, &ev); err != nil {
		return fmt.Errorf("read back the evaluation of %q: %w", in.Code, err)
	}
	facts.Approval = approvalAsk(n.pkg, in.InstalledVersion, ev)
	if a := facts.Approval; a != nil && !a.Offered {
		signals, unread, provUnread := bringsSignals(n, in.InstalledVersion, a.Version)
		facts.Brings = append(facts.Brings, signals...)
		facts.BringsUnread = append(facts.BringsUnread, unread...)
		facts.ProvenanceUnread = append(facts.ProvenanceUnread, provUnread...)
	}
	return nil
}

// ApprovalRefusalOf is why err refused an approval, for
// readmodel.ApprovalRefusalText; "" for an error that is not the
// operator's to correct.
func ApprovalRefusalOf(err error) readmodel.ApprovalRefusal {
	switch {
	case errors.Is(err, store.ErrReasonRequired):
		return readmodel.ApprovalReasonRequired
	case errors.Is(err, store.ErrReasonTooLong):
		return readmodel.ApprovalReasonTooLong
	case errors.Is(err, ErrApproveNothing):
		return readmodel.ApprovalNothing
	case errors.Is(err, ErrApproveNotNpm):
		return readmodel.ApprovalNotNpm
	}
	return ""
}
