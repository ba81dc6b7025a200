package views

import (
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// policyNotes say what the policy held back from a catalog row, as the
// result stored it (docs/policy.md "Say why"): "2.4.0 skipped", "2.5.0
// waits until 4 Dec 18:00 UTC (soak 3 days)", "3.0.0 held by the policy
// <3.0.0", "2.6.0 not offered: this site takes security updates only".
func policyNotes(r readmodel.CatalogRow) []string {
	var notes []string
	if s := r.Skipped; s != nil {
		notes = append(notes, s.Version+" skipped")
	}
	if w := r.Waiting; w != nil {
		switch {
		case w.Reason != "":
			notes = append(notes, w.Version+" "+w.Reason)
		case w.Until != nil:
			notes = append(notes, w.Version+" waits until "+w.Until.UTC().Format("2 Jan 15:04")+" UTC")
		default:
			notes = append(notes, w.Version+" waits for its soak")
		}
	}
	if h := r.Held; h != nil {
		reason := h.Reason
		if reason == "" {
			reason = "not offered by the policy"
		}
		notes = append(notes, h.Version+" "+reason)
	}
	return notes
}

// trustBadges are a catalog row's trust downgrades besides a lost
// provenance: a version published by an account new to the package, a
// manifest sync that lowered the trust of the source's keys.
func trustBadges(r readmodel.CatalogRow) []badge {
	var bs []badge
	if p := r.NewPublisher; p != nil {
		bs = append(bs, badge{"Trust downgrade: " + readmodel.NewPublisherText(p.Version, p.Account), toneWarn})
	}
	if d := r.PinDowngrade; d != nil {
		bs = append(bs, badge{"Trust downgrade: " + readmodel.PinDowngradeText(d.Reason), toneWarn})
	}
	return bs
}

// withPolicyNotes adds the policy's notes to a row's badges: after its
// offered update ("Update to 2.4.1 · 2.5.0 waits until …"), in place of
// "Up to date" ("No update offered · 2.4.0 skipped": a newer release
// exists), or as a badge of their own when neither shows.
func withPolicyNotes(bs []badge, r readmodel.CatalogRow) []badge {
	notes := policyNotes(r)
	if len(notes) == 0 {
		return bs
	}
	text := strings.Join(notes, " · ")
	for i := range bs {
		if bs[i].Tone == toneInfo || bs[i].Tone == toneOK {
			if strings.HasPrefix(bs[i].Text, "Update") || strings.HasPrefix(bs[i].Text, "Up to date") {
				// A newer release held back is not "Up to date".
				bs[i].Text = strings.Replace(bs[i].Text, "Up to date", noUpdateOfferedText, 1)
				bs[i].Text += " · " + text
				if bs[i].Tone == toneOK {
					bs[i].Tone = toneInfo
				}
				return bs
			}
		}
	}
	return append(bs, badge{upperFirst(text), toneNeutral})
}
