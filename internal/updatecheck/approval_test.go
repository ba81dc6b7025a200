package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
)

// offerOf reads code's stored offer: the update, the held release and
// the kind of why it is held, and the approvals it was evaluated under.
func (b *bundle) offerOf(code string) (update, held, heldKind, approvals string) {
	b.t.Helper()
	b.db.QueryRow(b.t, `SELECT coalesce(update_version, ''), coalesce(held_version, ''), coalesce(held_reason->>'kind', ''), approvals
		FROM component_results WHERE code = $1`, code).Scan(&update, &held, &heldKind, &approvals)
	return
}

// approvalSite publishes @acme/hulud 1.0.0 and 1.0.1, which adds a
// postinstall (the Shai-Hulud shape), installs 1.0.0 under policy, and
// checks.
func (b *bundle) approvalSite(policy release.Policy) *npmreg.Registry {
	b.t.Helper()
	r := npmreg.New(b.t)
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("@acme/hulud", "1.0.1", map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Scripts: map[string]string{"test": "jest"}},
		"1.0.1": {Published: day(3), Scripts: map[string]string{"test": "jest", "postinstall": "node bundle.js"}}})
	b.useRegistry(r)
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "hulud", Name: "Hulud", Version: "1.0.0", Source: "npm:@acme/hulud", Policy: policy})
	b.run(lease.Operator)
	return r
}

// Under approve: scripts, an update that adds a postinstall is held until
// an admin approves it; the approval is refused without a reason, is
// audited, offers the release at once, survives a restart (a new Checker
// over the same database) and another instance's check, and does not
// carry to the next version, whose script differs: that one is held
// again, and the approved one is offered meanwhile.
func TestAnApprovalHoldsForItsVersionAndScriptOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.approvalSite(release.Policy{Approve: release.ApproveScripts})
	if update, held, kind, _ := b.offerOf("hulud"); update != "" || held != "1.0.1" || kind != string(release.ReasonAwaitsApproval) {
		t.Fatalf("before approval: offered %q, held %q (%s); want 1.0.1 held awaiting approval", update, held, kind)
	}
	if row := b.catalogRow("hulud"); row.Held == nil || !strings.Contains(row.Held.Reason, "until an admin approves") {
		t.Errorf("the catalog's held release %+v", row.Held)
	}
	ctx := context.Background()
	approvals := NewApprovals(b.checker)
	if _, err := approvals.Approve(ctx, ApproveRequest{Site: store.LocalSite, Code: "hulud", Version: "1.0.1", Reason: "  ", By: "ops@example.org"}); !errors.Is(err, store.ErrReasonRequired) {
		t.Fatalf("an approval without a reason: %v, want %v", err, store.ErrReasonRequired)
	}
	if _, err := approvals.Approve(ctx, ApproveRequest{Site: store.LocalSite, Code: "hulud", Version: "1.0.0", Reason: "fine", By: "ops@example.org"}); !errors.Is(err, ErrApproveNothing) {
		t.Errorf("approving what brings nothing: %v, want %v", err, ErrApproveNothing)
	}
	if n := b.count(`SELECT count(*) FROM component_approvals`); n != 0 {
		t.Fatalf("%d approvals stored after refusals", n)
	}
	a, err := approvals.Approve(ctx, ApproveRequest{Site: store.LocalSite, Code: "hulud", Version: "1.0.1", Reason: "bundle.js reviewed", By: "ops@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Digest) != 64 || a.Version != "1.0.1" {
		t.Errorf("approval %+v", a)
	}
	if update, held, _, under := b.offerOf("hulud"); update != "1.0.1" || held != "" || under != "1.0.1 "+a.Digest {
		t.Fatalf("after approval: offered %q, held %q, under %q; want 1.0.1 offered at once", update, held, under)
	}
	if n := b.count(`SELECT count(*) FROM audit_log WHERE action = 'component.approve' AND detail->>'version' = '1.0.1' AND detail->>'reason' = 'bundle.js reviewed'`); n != 1 {
		t.Errorf("%d component.approve audit rows, want 1", n)
	}

	// A restart: another Checker (another instance) over the same
	// database checks again.
	other := b.otherInstance()
	other.UseNpm(b.checker.npm)
	if _, err := other.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil {
		t.Fatal(err)
	}
	if update, held, _, _ := b.offerOf("hulud"); update != "1.0.1" || held != "" {
		t.Fatalf("after a restart: offered %q, held %q; want 1.0.1 still approved", update, held)
	}

	// 1.0.2 changes the script: held again; 1.0.1, approved, is offered.
	r.Publish("@acme/hulud", "1.0.2", map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Scripts: map[string]string{"test": "jest"}},
		"1.0.1": {Published: day(3), Scripts: map[string]string{"test": "jest", "postinstall": "node bundle.js"}},
		"1.0.2": {Published: day(4), Scripts: map[string]string{"test": "jest", "postinstall": "node bundle.js --fetch"}}})
	if _, err := other.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil {
		t.Fatal(err)
	}
	if update, held, kind, _ := b.offerOf("hulud"); update != "1.0.1" || held != "1.0.2" || kind != string(release.ReasonAwaitsApproval) {
		t.Errorf("with 1.0.2's new script: offered %q, held %q (%s); want 1.0.1 offered, 1.0.2 held awaiting approval", update, held, kind)
	}
	var facts readmodel.RegistryFacts
	b.registryFacts("hulud", &facts)
	if a := facts.Approval; a == nil || a.Version != "1.0.2" || a.Offered || len(a.Lines) != 1 || !strings.HasPrefix(a.Lines[0], "postinstall script sha256:") {
		t.Errorf("what awaits approval: %+v", facts.Approval)
	}
}

// Without approve in the policy nothing is held.
func TestWithoutApproveNothingAwaitsApproval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.approvalSite(release.Policy{})
	if update, held, _, _ := b.offerOf("hulud"); update != "1.0.1" || held != "" {
		t.Fatalf("without approve: offered %q, held %q; want 1.0.1 offered", update, held)
	}
}

func (b *bundle) count(query string) int {
	b.t.Helper()
	var n int
	b.db.QueryRow(b.t, query).Scan(&n)
	return n
}

func (b *bundle) registryFacts(code string, into *readmodel.RegistryFacts) {
	b.t.Helper()
	var raw []byte
	b.db.QueryRow(b.t, `SELECT coalesce(registry_facts, '{}') FROM component_results WHERE code = $1`, code).Scan(&raw)
	if err := json.Unmarshal(raw, into); err != nil {
		b.t.Fatal(err)
	}
}

// An approval declared in the manifest, by the digest the page gives,
// offers the release at the sync, with no check; a sync that no longer
// declares it ends it, audited, and the release is held again.
func TestAnApprovalAsCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.approvalSite(release.Policy{Approve: release.ApproveScripts})
	var facts readmodel.RegistryFacts
	b.registryFacts("hulud", &facts)
	if facts.Approval == nil || facts.Approval.Version != "1.0.1" {
		t.Fatalf("what awaits approval: %+v", facts.Approval)
	}
	comps := []manifest.Component{{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		{Code: "hulud", Name: "Hulud", Version: "1.0.0", Source: "npm:@acme/hulud", Policy: release.Policy{Approve: release.ApproveScripts}}}
	m := &manifest.Manifest{Components: comps, Approvals: []manifest.Approval{
		{Component: "hulud", Version: "1.0.1", Digest: facts.Approval.Digest, Reason: "reviewed in PR 12"}}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	if update, held, _, _ := b.offerOf("hulud"); update != "1.0.1" || held != "" {
		t.Fatalf("after the manifest's approval: offered %q, held %q; want 1.0.1", update, held)
	}
	if _, err := NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	if n := b.count(`SELECT count(*) FROM audit_log WHERE action = 'component.approve' AND detail->>'from_manifest' = 'true'`); n != 1 {
		t.Errorf("%d approvals audited after syncing the same manifest twice, want 1", n)
	}
	m.Approvals = nil
	if _, err := NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	if update, held, kind, _ := b.offerOf("hulud"); update != "" || held != "1.0.1" || kind != string(release.ReasonAwaitsApproval) {
		t.Errorf("after the manifest dropped its approval: offered %q, held %q (%s); want 1.0.1 held again", update, held, kind)
	}
	if n := b.count(`SELECT count(*) FROM audit_log WHERE action = 'component.unapprove'`); n != 1 {
		t.Errorf("%d component.unapprove audit rows, want 1", n)
	}
}

// An approval committed while another instance's check fetches (after it
// read the components and their approvals) is not undone by the check's
// write: the check's result, evaluated without it, is refused by the
// guarded write, and the check evaluates again under the approval.
func TestAnApprovalDuringACheckStands(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.approvalSite(release.Policy{Approve: release.ApproveScripts})
	target, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	asked, release1 := make(chan struct{}, 1), make(chan struct{})
	proxy := httputil.NewSingleHostReverseProxy(target)
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.Contains(req.URL.Path, "hulud") {
			select {
			case asked <- struct{}{}:
				<-release1
			default:
			}
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(held.Close)
	u, err := npm.ParseRegistryURL(held.URL)
	if err != nil {
		t.Fatal(err)
	}
	other := b.otherInstance()
	other.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}, MaxDocument: 1 << 20})
	ctx := context.Background()
	checkErr := make(chan error, 1)
	go func() {
		_, err := other.RunLockedUpdateCheck(ctx, lease.Operator, "test")
		checkErr <- err
	}()
	<-asked
	if _, err := NewApprovals(b.checker).Approve(ctx, ApproveRequest{Site: store.LocalSite, Code: "hulud", Version: "1.0.1", Reason: "reviewed", By: "ops@example.org"}); err != nil {
		close(release1)
		t.Fatal(err)
	}
	close(release1)
	if err := <-checkErr; err != nil {
		t.Fatal(err)
	}
	if update, held, _, under := b.offerOf("hulud"); update != "1.0.1" || held != "" || !strings.HasPrefix(under, "1.0.1 ") {
		t.Errorf("after the check: offered %q, held %q, under %q; want 1.0.1 offered under the approval", update, held, under)
	}
}
