package updatecheck

import (
	"testing"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
)

// A security fix is never held for an approval: 1.0.1 adds a postinstall
// and fixes an OSV advisory of the installed 1.0.0, so under approve:
// scripts it is offered, with what it brings beside it and the approval
// asked for in the same place (registry facts' approval, offered).
func TestASecurityFixIsOfferedWithTheApprovalAsked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := npmreg.New(t)
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("@acme/hulud", "1.0.1", map[string]npmreg.Version{
		"1.0.0": {Published: day(2)},
		"1.0.1": {Published: day(3), Scripts: map[string]string{"postinstall": "node bundle.js"}}})
	b.useRegistry(r)
	fs := feedserver.New(t)
	fs.SetRecords(records(osvgen.Record("GHSA-hulu-d000-0001", "@acme/hulud", osvgen.KindVuln, "", "1.0.1")))
	b.checker.UseFeeds(NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		manifest.Component{Code: "hulud", Name: "Hulud", Version: "1.0.0", Source: "npm:@acme/hulud",
			Policy: release.Policy{Approve: release.ApproveScripts}})
	if res := b.run(lease.Operator); res.Status != Completed {
		t.Fatalf("check = %+v", res)
	}
	if update, held, _, _ := b.offerOf("hulud"); update != "1.0.1" || held != "" {
		t.Fatalf("the security fix: offered %q, held %q; want 1.0.1 offered, nothing held", update, held)
	}
	var facts readmodel.RegistryFacts
	b.registryFacts("hulud", &facts)
	if a := facts.Approval; a == nil || a.Version != "1.0.1" || !a.Offered {
		t.Errorf("the approval asked beside the fix: %+v, want 1.0.1, offered", facts.Approval)
	}
	if len(facts.Brings) == 0 || facts.Brings[0].Kind != readmodel.SignalInstallScript {
		t.Errorf("what the fix brings: %+v, want its install script", facts.Brings)
	}
}
