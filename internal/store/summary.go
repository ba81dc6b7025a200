package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// Summary reads the update summary in one statement over the read model,
// so its counts agree with each other, with the catalog and with source
// health, of one site (its installed tree; the components are the local
// site's). Times come back in UTC, as the JSON API shows them. mode is
// UPCHECK_LOCKFILE_DEV: what the tree's counts count
// (upcheck_tree_attention).
func (e *Executor) Summary(ctx context.Context, site int64, mode readmodel.DevMode) (readmodel.Summary, error) {
	r, err := e.q.SummaryRead(ctx, e.dbtx, db.SummaryReadParams{Site: site, AttentionLimit: readmodel.AttentionLimit, DevMode: string(mode)})
	if err != nil {
		return readmodel.Summary{}, mapError(fmt.Errorf("read summary: %w", err))
	}
	out := readmodel.Summary{
		Components: int(r.Components), UpdatesAvailable: int(r.UpdatesAvailable), Waiting: int(r.Waiting), SecurityUpdates: int(r.SecurityUpdates),
		Vulnerable: int(r.Vulnerable), FailingSources: int(r.FailingSources), UntrustedSources: int(r.UntrustedSources),
		UnsignedSources: int(r.UnsignedSources), Stale: int(r.Stale), Deprecated: int(r.Deprecated), TrustDowngrades: int(r.TrustDowngrades), Brings: int(r.Brings), CheckRunning: r.CheckRunning,
		MalwareReadAt: utc(r.MalwareReadAt), ExploitedReadAt: utc(r.ExploitedReadAt),
		NotificationsFailing: int(r.NotificationsFailing), NotificationsPending: int(r.NotificationsPending),
		OldestPendingSeconds: r.OldestPendingSeconds,
	}
	// sqlc cannot type min() over the CTE: the column comes as a time.Time,
	// or nil for NULL.
	if t, ok := r.OldestSuccessAt.(time.Time); ok && !r.AnyNeverSucceeded {
		out.OldestSuccessAt = utc(&t)
	}
	if out.MalwareReadAt != nil {
		n := int(r.Malicious)
		out.Malicious = &n
	}
	if out.ExploitedReadAt != nil {
		n := int(r.KnownExploited)
		out.KnownExploited = &n
	}
	if r.LastStatus != nil {
		out.LastCheck = &readmodel.LastCheck{Status: readmodel.CheckStatus(*r.LastStatus), Trigger: readmodel.Trigger(deref(r.LastTrigger)), Actor: deref(r.LastActor), FinishedAt: utc(r.LastFinishedAt)}
	}
	if err := json.Unmarshal(r.Attention, &out.Attention); err != nil {
		return readmodel.Summary{}, fmt.Errorf("decode the components that need attention: %w", err)
	}
	if out.Attention == nil {
		out.Attention = []readmodel.AttentionItem{}
	}
	for i := range out.Attention {
		out.Attention[i].SecuritySince = utc(out.Attention[i].SecuritySince)
		if pd := out.Attention[i].PinDowngrade; pd != nil {
			pd.At = pd.At.UTC()
		}
	}
	out.AttentionTotal = int(r.AttentionTotal)
	out.AttentionMore = max(out.AttentionTotal-len(out.Attention), 0)
	if out.OldestSecuritySince = timeOf(r.OldestSecuritySince); out.OldestSecuritySince != nil {
		out.OldestSecuritySeconds = r.OldestSecuritySeconds
	}
	if out.InputRefusals, err = e.InputRefusals(ctx); err != nil {
		return readmodel.Summary{}, err
	}
	if r.TreePackages != nil {
		n := int(*r.TreePackages)
		out.TreePackages, out.TreeReadAt = &n, utc(r.TreeReadAt)
	}
	if err := summaryTree(&out, r); err != nil {
		return readmodel.Summary{}, err
	}
	if r.NeverCode != nil {
		out.NeverSucceeded = &readmodel.ComponentRef{Code: *r.NeverCode, Name: deref(r.NeverName)}
	}
	return out, nil
}

// summaryTree fills in what in the tree needs attention: nothing while
// no tree was read (the dependencies are not checked, so no count is
// given), and the malicious and exploited counts only once their feeds
// were read, as the components' are.
func summaryTree(out *readmodel.Summary, r db.SummaryReadRow) error {
	out.TreeAttention = readmodel.TreeAttentionItems{}
	if out.TreePackages == nil {
		return nil
	}
	c := readmodel.TreeCounts{Exposed: int(r.TreeExposed), VulnerableNoFix: int(r.TreeVulnerableNoFix),
		Vulnerable: int(r.TreeVulnerable), Total: int(r.TreeTotal)}
	if out.MalwareReadAt != nil {
		n := int(r.TreeMalicious)
		c.Malicious = &n
	}
	if out.ExploitedReadAt != nil {
		n := int(r.TreeKnownExploited)
		c.KnownExploited = &n
	}
	out.TreeCounts = &c
	if err := json.Unmarshal(r.TreeAttention, &out.TreeAttention); err != nil {
		return fmt.Errorf("decode what in the tree needs attention: %w", err)
	}
	if out.TreeAttention == nil {
		out.TreeAttention = readmodel.TreeAttentionItems{}
	}
	for i := range out.TreeAttention {
		a := &out.TreeAttention[i]
		a.InstalledAt, a.RemovedAt = utc(a.InstalledAt), utc(a.RemovedAt)
	}
	out.TreeAttentionMore = max(c.Total-len(out.TreeAttention), 0)
	return nil
}

// utc is t in UTC; nil stays nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// SummaryReader is Summary of site under mode as a function of the
// context alone: what /metrics reads (metrics.SummaryReader), uncached.
func (e *Executor) SummaryReader(site int64, mode readmodel.DevMode) func(context.Context) (readmodel.Summary, error) {
	return func(ctx context.Context) (readmodel.Summary, error) { return e.Summary(ctx, site, mode) }
}
