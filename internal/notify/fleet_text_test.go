package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// fleetPayload is a fleet.finding payload as EventPlanFleetFindings
// builds it: sites named (at most readmodel.FleetSitesNamed), count all.
func fleetPayload(t *testing.T, name string, sites []string, count int) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"package": name, "version": "4.4.2", "advisory": map[string]any{"id": "MAL-2026-0300"},
		"malicious": true, "known_exploited": false, "fixed_in": "", "sites": sites, "site_count": count})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A chat and an email word the fleet digest as readmodel words it: the
// package's name escaped as any publisher text (a scope or markup is a
// code span in a chat, escaped in the email's HTML), the sites named, the
// ones past the payload's list counted ("and 200 more"), the chat post
// cut to its cap; the email ranks it as a malicious package. A tree
// finding of a named site begins with the site.
func TestFleetFindingWords(t *testing.T) {
	t.Parallel()
	got := slackText(store.Delivery{Type: string(readmodel.EventFleetFinding), Payload: fleetPayload(t, "debug", []string{"blog", "shop"}, 2)}, "")
	if want := "upcheck: debug 4.4.2 is malicious (MAL-2026-0300) on 2 sites: blog, shop: remove it and treat secrets on these sites as exposed"; got != want {
		t.Errorf("chat:\n got %q\nwant %q", got, want)
	}
	got = slackText(store.Delivery{Type: string(readmodel.EventFleetFinding), Payload: fleetPayload(t, "<!channel> @acme/x", []string{"a"}, 1)}, "")
	if strings.ContainsAny(got, "<>") || !strings.Contains(got, "`&lt;!channel&gt; @acme/x`") || !strings.Contains(got, "on 1 site: a:") {
		t.Errorf("chat not escaped: %q", got)
	}
	many := make([]string, readmodel.FleetSitesNamed)
	for i := range many {
		many[i] = fmt.Sprintf("customer-site-%03d", i)
	}
	got = slackText(store.Delivery{Type: string(readmodel.EventFleetFinding), Payload: fleetPayload(t, "debug", many, 300)}, "")
	if n := utf8.RuneCountInString(got); n > chatTextMax || !strings.HasSuffix(got, "…") || !strings.Contains(got, "on 300 sites: customer-site-000") {
		t.Errorf("a digest of 300 sites: %d runes, %q", n, got)
	}

	site, err := json.Marshal(map[string]any{"package": "debug", "version": "4.4.2", "advisory": map[string]any{"id": "MAL-2026-0300"},
		"malicious": true, "fixed_in": "", "site": "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if got := slackText(store.Delivery{Type: string(readmodel.EventTreeFinding), Payload: site}, ""); !strings.HasPrefix(got, "upcheck: site shop: debug 4.4.2, in the site's dependencies, is malicious") {
		t.Errorf("a site's tree finding: %q", got)
	}

	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}, Events: []store.MessageEvent{
		{Type: string(readmodel.EventAdvisoryUnfixed), Key: "advisory.unfixed:blog@2.3.0/X-1",
			Payload: []byte(`{"component": {"code": "blog", "name": "Blog", "installed": "2.3.0"}, "advisory": {"id": "X-1", "severity": "low"}}`)},
		{Type: string(readmodel.EventFleetFinding), Key: "fleet.finding:x@4.4.2/MAL-2026-0300#00",
			Payload: fleetPayload(t, "<script>x</script>", append([]string{"blog"}, many[:99]...), 250)}}}
	mail, err := composeMail(m, "https://upcheck.example.org")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mail.Text, "is malicious (MAL-2026-0300) on 250 sites: blog, customer-site-000") ||
		!strings.Contains(mail.Text, "and 150 more: remove it") || !strings.Contains(mail.Subject, "on 250 sites") {
		t.Errorf("mail %q:\n%s", mail.Subject, mail.Text)
	}
	if strings.Contains(mail.HTML, "<script>") {
		t.Errorf("the HTML part carries the package's markup:\n%s", mail.HTML)
	}
	if mal, unfixed := strings.Index(mail.Text, "MAL-2026-0300"), strings.Index(mail.Text, "X-1"); mal < 0 || unfixed < mal {
		t.Errorf("the malicious package is not listed first:\n%s", mail.Text)
	}
}
