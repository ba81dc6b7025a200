package release

import "testing"

// Under Approve: scripts, the release that would be offered and brings
// what the policy holds is held for an approval and the next older one is
// offered; a security fix is offered all the same, marked as awaiting
// the approval; without the policy member nothing is asked.
func TestOfferHoldsWhatAwaitsApproval(t *testing.T) {
	t.Parallel()
	rs := []Release{{Version: "1.2.0", Released: day(3, 1)}, {Version: "1.1.0", Released: day(2, 1)}, {Version: "1.0.0", Released: day(1, 1)}}
	var asked []string
	unapproved := func(v string) bool { asked = append(asked, v); return v == "1.2.0" }
	held := "held until an admin approves what it brings (an install script, or a source outside the registry)"

	ev := evaluateReleases(t, rs, nil, "1.0.0")
	if err := ev.Offer("1.0.0", OfferOptions{Policy: Policy{Approve: ApproveScripts}, Now: offerNow, Unapproved: unapproved}); err != nil {
		t.Fatal(err)
	}
	checkOffer(t, &ev, offerWant{update: "1.1.0", held: &heldWords{Version: "1.2.0", Reason: held},
		between: []offerRow{{version: "1.2.0", offer: ReleaseHeld, reason: held}, {version: "1.1.0", offer: ReleaseOffered}}})
	if ev.Releases[0].Reason.Kind != ReasonAwaitsApproval || !ev.Releases[0].AwaitsApproval {
		t.Errorf("1.2.0: %+v", ev.Releases[0])
	}
	if len(asked) != 2 {
		t.Errorf("asked of %v, want the two releases that would be offered in turn", asked)
	}

	// A security fix: offered, the approval asked beside it.
	ev = evaluateReleases(t, rs, []Advisory{{ID: "GHSA-x", Affected: "<1.2.0", FixedIn: "1.2.0"}}, "1.0.0")
	if err := ev.Offer("1.0.0", OfferOptions{Policy: Policy{Approve: ApproveScripts}, Now: offerNow, Unapproved: unapproved}); err != nil {
		t.Fatal(err)
	}
	if ev.Update == nil || ev.Update.Version != "1.2.0" || !ev.Releases[0].AwaitsApproval || ev.Held != nil {
		t.Errorf("a security fix awaiting approval: update %v, awaits %v, held %+v; want 1.2.0 offered, awaiting approval",
			ev.Update, ev.Releases[0].AwaitsApproval, ev.Held)
	}

	// No Approve in the policy: nothing asked, 1.2.0 offered.
	asked = nil
	ev = evaluateReleases(t, rs, nil, "1.0.0")
	if err := ev.Offer("1.0.0", OfferOptions{Now: offerNow, Unapproved: unapproved}); err != nil {
		t.Fatal(err)
	}
	if ev.Update == nil || ev.Update.Version != "1.2.0" || len(asked) != 0 {
		t.Errorf("without approve: update %v, asked %v", ev.Update, asked)
	}
}

func TestPolicyApprove(t *testing.T) {
	t.Parallel()
	if err := (Policy{Approve: "everything"}).Validate(); err == nil {
		t.Error(`approve "everything" is valid`)
	}
	site := Policy{Approve: ApproveScripts}
	if got := site.With(Policy{Approve: None}); got.Approve != "" {
		t.Errorf("a component's none leaves approve %q", got.Approve)
	}
	if got := (Policy{}).With(Policy{Approve: ApproveScripts}).Text(); got != `{"approve":"scripts"}` {
		t.Errorf("text %s", got)
	}
}
