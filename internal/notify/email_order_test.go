package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// A message lists its items in the summary's urgency order
// (readmodel.AttentionKinds: an advisory with no fix before a security
// update), each kind by readmodel.Severity.Rank, so "moderate" ranks with
// "medium" above "low", and an unknown severity comes last; the subject
// names the first.
func TestEmailOrderIsTheSummarys(t *testing.T) {
	t.Parallel()
	event := func(typ, code, severity string) store.MessageEvent {
		p := map[string]any{"component": map[string]string{"code": code, "name": code, "installed": "1.0.0"}, "version": "1.0.1"}
		switch typ {
		case "security_update.available":
			p["severity"] = severity
		case "advisory.unfixed":
			p["advisory"] = map[string]string{"id": "ADV-" + code, "severity": severity}
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return store.MessageEvent{Type: typ, Key: typ + ":" + code, Payload: b}
	}
	// Given worst last, with names that sort the other way.
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}, Events: []store.MessageEvent{
		event("update.available", "a-plain", ""),
		event("security_update.available", "b-unknown", "whatever"),
		event("security_update.available", "c-low", "low"),
		event("security_update.available", "d-moderate", "Moderate"),
		event("security_update.available", "e-medium", "medium"),
		event("security_update.available", "f-critical", "critical"),
		event("advisory.unfixed", "g-low", "low"),
		event("advisory.unfixed", "h-high", "high"),
	}}
	mail, err := composeMail(m, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"h-high 1.0.0 is affected by ADV-h-high (high), with no fix yet",
		"g-low 1.0.0 is affected by ADV-g-low (low), with no fix yet",
		"Security update for f-critical: 1.0.0 → 1.0.1 (critical)",
		"Security update for d-moderate: 1.0.0 → 1.0.1 (Moderate)",
		"Security update for e-medium: 1.0.0 → 1.0.1 (medium)",
		"Security update for c-low: 1.0.0 → 1.0.1 (low)",
		"Security update for b-unknown: 1.0.0 → 1.0.1 (whatever)",
		"Update for a-plain: 1.0.0 → 1.0.1",
	}
	last := -1
	for _, item := range want {
		i := strings.Index(mail.Text, "* "+item+"\n")
		if i < 0 || i < last {
			t.Fatalf("%q is missing or out of order; want the order\n%s\ngot:\n%s", item, strings.Join(want, "\n"), mail.Text)
		}
		last = i
	}
	if want := "[upcheck] Unfixed advisory for h-high 1.0.0: ADV-h-high (high) and 7 more"; mail.Subject != want {
		t.Errorf("subject %q, want %q", mail.Subject, want)
	}
}
