package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// A chat and an email word a new tree finding as readmodel words it, the
// package's name escaped; the email ranks a malicious one as a malicious
// package, a vulnerable one as an advisory.
func TestTreeFindingWords(t *testing.T) {
	t.Parallel()
	payload := func(name string, malicious bool, fixed string) []byte {
		b, err := json.Marshal(map[string]any{"package": name, "version": "4.4.2", "advisory": map[string]any{"id": "MAL-2026-2002"},
			"malicious": malicious, "known_exploited": false, "fixed_in": fixed})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got := slackText(store.Delivery{Type: string(readmodel.EventTreeFinding), Payload: payload("debug", true, "")}, "")
	if want := "upcheck: debug 4.4.2, in the site's dependencies, is malicious (MAL-2026-2002): remove it and treat secrets on this site as exposed"; got != want {
		t.Errorf("chat:\n got %q\nwant %q", got, want)
	}
	if got := slackText(store.Delivery{Type: string(readmodel.EventTreeFinding), Payload: payload("<b>@channel", true, "")}, ""); strings.ContainsAny(got, "<>") {
		t.Errorf("chat not escaped: %q", got)
	}
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}, Events: []store.MessageEvent{
		{Type: string(readmodel.EventTreeFinding), Key: "tree.finding:qs@4.4.2/MAL-2026-2002", Payload: payload("qs", false, "4.4.3")},
		{Type: string(readmodel.EventTreeFinding), Key: "tree.finding:debug@4.4.2/MAL-2026-2002", Payload: payload("debug", true, "")}}}
	mail, err := composeMail(m, "https://upcheck.example.org")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mail.Text, "* qs 4.4.2, in the site's dependencies, is affected by MAL-2026-2002: fixed in 4.4.3") ||
		!strings.Contains(mail.Subject, "debug 4.4.2 is named by MAL-2026-2002") {
		t.Errorf("mail %q:\n%s", mail.Subject, mail.Text)
	}
	if mal, vuln := strings.Index(mail.Text, "debug 4.4.2"), strings.Index(mail.Text, "qs 4.4.2"); mal < 0 || vuln < mal {
		t.Errorf("the malicious package is not listed first:\n%s", mail.Text)
	}
}
