package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// Approval is an admin's approval of what one version of a component
// brings (component_approvals, docs/policy.md "Approvals"): Digest is the
// SHA-256 of what needed approval (its install scripts by the SHA-256 of
// their text, its sources outside the registry by their spec), so it
// holds for that version and that text only.
type Approval struct {
	// Site is the site whose component it is (sites.id).
	Site                          int64
	Code, Version, Digest, Reason string
	// By is who approved it, as they were called ("manifest" for the
	// manifest's); UserID 0 for no user.
	By           string
	UserID       int64
	FromManifest bool
	At           time.Time
	// What are the lines of what was approved, in words, for the audit
	// log; not stored with the approval.
	What []string `json:"-"`
}

// ApprovalPut records a, replacing an approval of the same version and
// digest, with its audit row (component.approve) in the same
// transaction. The reason is required, as a skip's.
func (t *Tx) ApprovalPut(ctx context.Context, a Approval) (Approval, error) {
	a.Reason = strings.TrimSpace(a.Reason)
	switch {
	case a.Reason == "":
		return a, ErrReasonRequired
	case utf8.RuneCountInString(a.Reason) > MaxReasonLength:
		return a, ErrReasonTooLong
	}
	at, err := t.q.ApprovalPut(ctx, t.tx, db.ApprovalPutParams{Site: a.Site, Code: a.Code, Version: a.Version, Digest: a.Digest, Reason: a.Reason,
		Actor: a.By, UserID: optionalID(a.UserID), FromManifest: a.FromManifest})
	if err != nil {
		return a, mapError(fmt.Errorf("approve %s of %q: %w", a.Version, a.Code, err))
	}
	a.At = at
	detail := map[string]any{"component": a.Code, "version": a.Version, "digest": a.Digest, "reason": a.Reason, "by": a.By,
		"from_manifest": a.FromManifest}
	if len(a.What) > 0 {
		detail["approved"] = a.What
	}
	return a, t.auditSiteAppend(ctx, a.UserID, readmodel.AuditComponentApprove, a.Site, detail)
}

// Approvals are the approvals of site's component, newest first.
func (e *Executor) Approvals(ctx context.Context, site int64, code string) ([]Approval, error) {
	rows, err := e.q.ApprovalList(ctx, e.dbtx, db.ApprovalListParams{Site: site, Code: code})
	if err != nil {
		return nil, mapError(fmt.Errorf("list the approvals of %q: %w", code, err))
	}
	out := make([]Approval, len(rows))
	for i, r := range rows {
		out[i] = Approval{Site: site, Code: r.Code, Version: r.Version, Digest: r.Digest, Reason: r.Reason, By: r.Actor,
			FromManifest: r.FromManifest, At: r.ApprovedAt}
	}
	return out, nil
}

// ApprovalInputs are the approvals of every component of site that has
// any, as an evaluation reads them (ComponentInput.Approvals), by code.
func (e *Executor) ApprovalInputs(ctx context.Context, site int64) (map[string]string, error) {
	rows, err := e.q.ApprovalInputs(ctx, e.dbtx, site)
	if err != nil {
		return nil, mapError(fmt.Errorf("list approvals: %w", err))
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Code] = r.Approvals
	}
	return out, nil
}

// FleetApprovalInputs are the approvals of every site's components that
// have any, as an evaluation reads them, by component.
func (e *Executor) FleetApprovalInputs(ctx context.Context) (map[ComponentKey]string, error) {
	rows, err := e.q.ApprovalInputsFleet(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the fleet's approvals: %w", err))
	}
	out := make(map[ComponentKey]string, len(rows))
	for _, r := range rows {
		out[ComponentKey{Site: r.SiteID, Code: r.Code}] = r.Approvals
	}
	return out, nil
}

// ApplyManifestApprovals makes the manifest's approvals exactly want
// (From manifest, by ManifestActor), audited: one declared and not
// standing is approved (component.approve), one standing and no longer
// declared ends (component.unapprove). It returns the codes whose
// approvals changed, to be evaluated again; an admin's approvals stand.
// The manifest is the local site's (LocalSite).
func (t *Tx) ApplyManifestApprovals(ctx context.Context, want []Approval) ([]string, error) {
	rows, err := t.q.ApprovalsOfManifest(ctx, t.tx, LocalSite)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the manifest's approvals: %w", err))
	}
	type key struct{ code, version, digest string }
	standing := make(map[key]string, len(rows))
	for _, r := range rows {
		standing[key{r.Code, r.Version, r.Digest}] = r.Reason
	}
	changed := map[string]bool{}
	wanted := make(map[key]bool, len(want))
	for _, a := range want {
		k := key{a.Code, a.Version, a.Digest}
		wanted[k] = true
		if reason, ok := standing[k]; ok && reason == strings.TrimSpace(a.Reason) {
			continue
		}
		a.Site, a.By, a.UserID, a.FromManifest = LocalSite, ManifestActor, 0, true
		if _, err := t.ApprovalPut(ctx, a); err != nil {
			return nil, err
		}
		changed[a.Code] = true
	}
	for k, reason := range standing {
		if wanted[k] {
			continue
		}
		if _, err := t.q.ApprovalDelete(ctx, t.tx, db.ApprovalDeleteParams{Site: LocalSite, Code: k.code, Version: k.version, Digest: k.digest}); err != nil {
			return nil, mapError(fmt.Errorf("end the manifest's approval of %s of %q: %w", k.version, k.code, err))
		}
		detail := map[string]any{"component": k.code, "version": k.version, "digest": k.digest, "reason": reason,
			"by": ManifestActor, "from_manifest": true}
		if err := t.AuditAppend(ctx, 0, readmodel.AuditComponentUnapprove, detail); err != nil {
			return nil, err
		}
		changed[k.code] = true
	}
	codes := make([]string, 0, len(changed))
	for c := range changed {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes, nil
}
