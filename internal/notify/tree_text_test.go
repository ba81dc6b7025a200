package notify

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// exposedPayloadOf is a tree.exposed payload as EventPlanTreeExposed
// builds it, with a hostile package name.
func exposedPayloadOf(t *testing.T, name string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"package": name, "version": "4.4.2", "advisory": map[string]any{"id": "MAL-2026-2002"},
		"malicious": true, "known_exploited": false,
		"installed_at": time.Date(2026, 9, 8, 13, 16, 0, 0, time.UTC), "removed_at": time.Date(2026, 9, 8, 15, 40, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A chat and an email word the look-back's event as readmodel words it,
// the package's name escaped; the email lists it right after a malicious
// package.
func TestTreeExposedWords(t *testing.T) {
	t.Parallel()
	got := slackText(store.Delivery{Type: string(readmodel.EventTreeExposed), Payload: exposedPayloadOf(t, "debug")}, "")
	if want := "upcheck: debug 4.4.2 (malicious) was installed from 8 Sep 2026 13:16 to 8 Sep 2026 15:40 UTC: treat secrets on this site as exposed"; got != want {
		t.Errorf("chat:\n got %q\nwant %q", got, want)
	}
	if got := slackText(store.Delivery{Type: string(readmodel.EventTreeExposed), Payload: exposedPayloadOf(t, "<b>@channel")}, ""); strings.ContainsAny(got, "<>") {
		t.Errorf("chat not escaped: %q", got)
	}
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}, Events: []store.MessageEvent{
		{Type: string(readmodel.EventTreeExposed), Key: "tree.exposed:debug@4.4.2", Payload: exposedPayloadOf(t, "debug")}}}
	mail, err := composeMail(m, "https://upcheck.example.org")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mail.Text, "* debug 4.4.2 (malicious) was installed from 8 Sep 2026 13:16 to 8 Sep 2026 15:40 UTC: treat secrets on this site as exposed") ||
		!strings.Contains(mail.Subject, "debug 4.4.2 was installed and is named by MAL-2026-2002") {
		t.Errorf("mail %q:\n%s", mail.Subject, mail.Text)
	}
	if rankExposed <= rankMalicious || rankExposed >= rankExploited {
		t.Errorf("rank %d, want between a malicious package's %d and an exploited advisory's %d", rankExposed, rankMalicious, rankExploited)
	}
}
