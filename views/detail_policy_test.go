package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// policyDetail is a blog at 2.3.0 under a policy: 2.4.0 offered, 2.5.0
// waiting, 3.0.0 held, 2.3.2 skipped from the manifest, three releases in
// between, and both trust downgrades.
func policyDetail() DetailProps {
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	return DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "blog", Name: "Blog", Installed: "2.3.0",
		Latest: "3.0.0", SourceURL: "https://acme.example/updates.json", Evaluated: true, LastSuccessAt: ago(time.Hour), UpdateAvailable: true,
		UpdateVersion: "2.4.0", PinDowngrade: "the manifest requires 1 signature where it required 2", PinDowngradedAt: new(at),
		NewPublisherVersion: "2.4.0", NewPublisher: "mallory"}, CanManage: true, Policy: DetailPolicy{Offer: "minor", Hold: "<3.0.0",
		Soak: "3 days"}, Waiting: &readmodel.HeldRelease{Version: "2.5.0", Reason: "waits until 4 Dec 18:00 UTC (soak 3 days)"},
		Held: &readmodel.HeldRelease{Version: "3.0.0", Reason: "held by the policy <3.0.0"}, Skip: &DetailSkip{SkippedVersion: readmodel.SkippedVersion{Version: "2.3.2",
			Reason: "breaks our <b>theme</b>", By: "manifest", SkippedAt: at, FromManifest: true},
			Hides: true}, Between: []ReleaseRow{
			{Version: "2.4.0", Released: "2026-11-20", Summary: "New editor", URL: "https://acme.example/blog/2.4.0", Offer: "offered"},
			{Version: "2.3.2", Released: "2026-11-10", Summary: "Theme fixes", URL: "https://acme.example/blog/2.3.2", Offer: "skipped",
				OfferReason: "skipped"},
			{Version: "2.3.1", Released: "2026-11-01", Security: true, Summary: "Fixes stored XSS", URL: "https://acme.example/blog/2.3.1",
				Offer: "superseded"},
		}}
}

// A policy, a skip and a pin downgrade in words, as the page and the API
// say them.
func TestPolicyWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    DetailPolicy
		want string
	}{
		{DetailPolicy{}, "every update, as soon as it is published"},
		{DetailPolicy{Offer: "patch", Soak: "3 days", Hold: "<3.0.0"}, "takes patch updates only · soak 3 days · hold <3.0.0"},
		{DetailPolicy{Offer: "security"}, "takes security updates only"},
		{DetailPolicy{Offer: "minor"}, "takes minor and patch updates only"},
		{DetailPolicy{Soak: "36 hours"}, "takes every update · soak 36 hours"},
		{DetailPolicy{Approve: "scripts"}, "takes every update · install scripts and outside sources await approval"},
	} {
		if got := PolicyText(c.p); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	if got := PinDowngradeText(at, "the manifest pins no key any more"); got != "On 2 Dec 2026, the manifest lowered the trust of this source's keys: the manifest pins no key any more" {
		t.Errorf("pin downgrade %q", got)
	}
}

// The update section says the policy, the waiting and the held release
// with why, the skip (a manifest's cannot be undone here), and lists
// every release in between newest first, each with its kind, summary,
// notes link and what the policy makes of it.
func TestDetailSaysWhy(t *testing.T) {
	t.Parallel()
	root := doc(t, ComponentDetail(policyDetail()))
	for id, want := range map[string]string{
		"detail-policy":  "Policy: this site takes minor and patch updates only · soak 3 days · hold <3.0.0 (security releases skip the tier and the soak).",
		"detail-waiting": "2.5.0 waits until 4 Dec 18:00 UTC (soak 3 days).",
		"detail-held":    "3.0.0 held by the policy <3.0.0.",
	} {
		if got := text(one(t, root, id)); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	rows := byTestID(root, "between-row")
	var versions []string
	for _, r := range rows {
		v, _ := attr(r, "data-version")
		versions = append(versions, v)
	}
	if strings.Join(versions, " ") != "2.4.0 2.3.2 2.3.1" {
		t.Fatalf("releases in between %v, want 2.4.0 2.3.2 2.3.1, newest first", versions)
	}
	for i, want := range []struct{ summary, href, offer, kind string }{
		{"New editor", "https://acme.example/blog/2.4.0", "Offered: the update to install", "Regular"},
		{"Theme fixes", "https://acme.example/blog/2.3.2", "Skipped", "Regular"},
		{"Fixes stored XSS", "https://acme.example/blog/2.3.1", "Comes with the update to 2.4.0", "Security"},
	} {
		row := text(rows[i])
		if !strings.Contains(row, want.summary) || !strings.Contains(row, want.kind) {
			t.Errorf("row %d %q lacks %q or %q", i, row, want.summary, want.kind)
		}
		if got := text(one(t, rows[i], "between-offer")); got != want.offer {
			t.Errorf("row %d offer %q, want %q", i, got, want.offer)
		}
		if href, _ := attr(one(t, rows[i], "between-notes"), "href"); href != want.href {
			t.Errorf("row %d notes %q, want %q", i, href, want.href)
		}
	}
	if got := text(one(t, root, "detail-pin-downgrade")); !strings.Contains(got, "On 2 Dec 2026, the manifest lowered the trust of this source's keys: the manifest requires 1 signature where it required 2.") {
		t.Errorf("pin downgrade %q", got)
	}
	if got := text(one(t, root, "detail-new-publisher")); !strings.Contains(got, readmodel.NewPublisherText("2.4.0", "mallory")) {
		t.Errorf("new publisher %q", got)
	}

	// No policy, nothing held: the section lists the releases in between
	// and says nothing of a policy.
	p := policyDetail()
	p.Policy, p.Waiting, p.Held, p.Skip = DetailPolicy{}, nil, nil, nil
	root = doc(t, ComponentDetail(p))
	if n := len(byTestID(root, "detail-policy-facts")); n != 0 {
		t.Errorf("without a policy the page says %d policy facts", n)
	}
	if n := len(byTestID(root, "between-row")); n != 3 {
		t.Errorf("without a policy, %d releases in between", n)
	}
	// Nothing known: no section.
	p.Evaluated = false
	if n := len(byTestID(doc(t, ComponentDetail(p)), "detail-update")); n != 0 {
		t.Error("an unevaluated component has an update section")
	}
}

// The headline says a skip that hides a release, and the release that
// waits when nothing is offered.
func TestDetailHeadlineSaysTheSkipAndTheWait(t *testing.T) {
	t.Parallel()
	p := DetailProps{DetailRow: readmodel.DetailRow{Name: "Forms", SourceURL: "https://acme.example/u.json", Evaluated: true,
		LastSuccessAt: ago(time.Hour)}, Skip: &DetailSkip{SkippedVersion: readmodel.SkippedVersion{Version: "1.1.0"}, Hides: true}}
	if h := detailHeadline(p); h.Title+h.rest() != "No update offered · 1.1.0 skipped" {
		t.Errorf("skipped: %q", h.Title+h.rest())
	}
	p.Skip.Hides = false
	p.Waiting = &readmodel.HeldRelease{Version: "1.2.0", Reason: "waits until 4 Dec 18:00 UTC (soak 3 days)"}
	if h := detailHeadline(p); h.Title+h.rest() != "No update offered: 1.2.0 waits until 4 Dec 18:00 UTC (soak 3 days)" {
		t.Errorf("waiting: %q", h.Title+h.rest())
	}
}

// A dismissal the manifest declares says so, and the page offers neither
// a restore button nor a form to replace it, in force or not.
func TestManifestDismissalHasNoForm(t *testing.T) {
	t.Parallel()
	md := func(expired bool) *AdvisoryDismissal {
		return &AdvisoryDismissal{By: "manifest", At: now.Add(-time.Hour), Reason: "the comments module is disabled",
			Expired: expired, ExpiresAt: in(-time.Minute), FromManifest: true}
	}
	p := DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "blog", Installed: "2.3.0", Evaluated: true,
		SourceURL: "https://acme.example/u.json", LastSuccessAt: ago(time.Hour)}, CanManage: true, Advisories: []AdvisoryRow{
		{ID: "M-1", Severity: "high", Dismissed: true, Dismissal: md(false)},
		{ID: "M-2", Severity: "high", Dismissal: md(true)},
		{ID: "A-3", Severity: "low", Dismissed: true, Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now}},
	}}
	root := doc(t, ComponentDetail(p))
	if n := len(byTestID(root, "dismissal-manifest")); n != 2 {
		t.Errorf("%d rows say they are the manifest's, want 2", n)
	}
	if n := len(byTestID(root, "advisory-undismiss")); n != 1 {
		t.Errorf("%d restore buttons, want 1 (the admin's dismissal only)", n)
	}
	if n := len(byTestID(root, "dismiss-form")); n != 0 {
		t.Errorf("%d dismiss forms, want none: the manifest's dismissal cannot be replaced", n)
	}
	if got := text(byTestID(root, "dismissal-by")[0]); got != "the manifest" {
		t.Errorf("by %q", got)
	}
	if got := text(one(t, root, "dismissal-reopened")); !strings.HasPrefix(got, "Counts again: the dismissal by the manifest on ") {
		t.Errorf("reopened %q", got)
	}
}

// A malicious version with a clean successor is told the way out; one
// whose every later release is affected, to remove the package. The
// advisory's row says the release is not affected instead of "No fix yet".
func TestMaliciousHeadlineSaysTheWayOut(t *testing.T) {
	t.Parallel()
	adv := AdvisoryRow{ID: "MAL-2025-46974", Affected: "4.4.2", ClearedBy: "4.4.3", AdvisoryIntel: AdvisoryIntel{Malicious: true}}
	p := DetailProps{DetailRow: readmodel.DetailRow{Name: "debug", Installed: "4.4.2", SourceURL: "npm:debug", Evaluated: true,
		LastSuccessAt: ago(time.Hour), Malicious: true, Vulnerable: true}, Advisories: []AdvisoryRow{adv}}
	if h := detailHeadline(p); h.Title+h.rest() != "Known malicious package: 4.4.3 is not affected: update to it, and check what 4.4.2 could reach" {
		t.Errorf("with a clean successor: %q", h.Title+h.rest())
	}
	if row := render(t, advisoryRow("debug", adv, advisoryRowCtx{})); !strings.Contains(row, "4.4.3 is not affected: update to it") || strings.Contains(row, "No fix yet") {
		t.Errorf("the advisory's row:\n%s", row)
	}
	p.Advisories[0].ClearedBy, p.Advisories[0].NoFix = "", true
	if h := detailHeadline(p); h.Title != MaliciousTitle {
		t.Errorf("with none: %q", h.Title+h.rest())
	}
}

// The smallest release that clears the advisories heads the page, the
// newest beside it, said to be a new major version; the update command
// installs the fix and says so.
func TestDetailLeadsWithTheFix(t *testing.T) {
	t.Parallel()
	p := DetailProps{DetailRow: readmodel.DetailRow{Name: "next", Installed: "14.1.0", SourceURL: "npm:next", Evaluated: true,
		LastSuccessAt: ago(time.Hour), Security: true, Vulnerable: true, UpdateAvailable: true, UpdateVersion: "16.5.0", UpdateCommand: "npm install next@14.1.1",
		FixVersion: "14.1.1", FixCommand: "npm install next@14.1.1", FixIDs: []string{"GHSA-fr5h-rqp8-mj6g"}}}
	want := "Security update: update to 14.1.1 — fixes GHSA-fr5h-rqp8-mj6g; 16.5.0 (a new major version: 14 → 16) is the newest this site takes"
	if h := detailHeadline(p); h.Title+h.rest() != want {
		t.Errorf("headline %q, want %q", h.Title+h.rest(), want)
	}
	if l := updateCommandLabel(p); l != "Update command (14.1.1 clears its advisories)" {
		t.Errorf("command label %q", l)
	}
	p.FixVersion, p.FixCommand, p.FixIDs, p.UpdateCommand, p.Security = "", "", nil, "npm install next@16.5.0", false
	if h := detailHeadline(p); h.Title+h.rest() != "Vulnerable: update to 16.5.0 (a new major version: 14 → 16)" {
		t.Errorf("without a fix: %q", h.Title+h.rest())
	}
}
