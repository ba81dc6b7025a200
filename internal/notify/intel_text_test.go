package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

var (
	maliciousPayload = []byte(`{"component": {"code": "blog", "name": "Blog", "installed": "2.3.0"}, "package": "acme-blog",
		"advisory": {"id": "MAL-2025-1", "aliases": ["GHSA-mal1-xxxx-yyyy"], "severity": "critical", "summary": "Steals <tokens>", "malicious": true}}`)
	exploitedPayload = []byte(`{"component": {"code": "gallery", "name": "Gallery", "installed": "3.0.0"},
		"advisory": {"id": "ACME-2", "aliases": ["CVE-2026-1111"], "severity": "high", "summary": "Open redirect", "known_exploited": true,
		"kev": {"cve": "CVE-2026-1111", "date_added": "2026-11-01", "due_date": "2026-11-22", "required_action": "Apply <!channel> mitigations.", "ransomware": "Known"},
		"epss": {"cve": "CVE-2026-1111", "score": 0.943, "percentile": 0.991}}}`)
	unfixedPayload = []byte(`{"component": {"code": "forms", "name": "Forms", "installed": "1.0.0"},
		"advisory": {"id": "F-1", "severity": "critical", "summary": "Bad"}}`)
)

// A message names a known malicious package first, then an advisory
// exploited in the wild (before an unfixed critical one), with KEV's
// dates, the note that they are set for US federal agencies, the required
// action, ransomware use and the EPSS probability.
func TestIntelEventsInEmail(t *testing.T) {
	t.Parallel()
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}, Events: []store.MessageEvent{
		{Type: string(readmodel.EventAdvisoryUnfixed), Key: "u", Payload: unfixedPayload},
		{Type: string(readmodel.EventKnownExploited), Key: "e", Payload: exploitedPayload},
		{Type: string(readmodel.EventMalicious), Key: "m", Payload: maliciousPayload},
	}}
	mail, err := composeMail(m, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "[upcheck] Known malicious package: remove it: Blog 2.3.0 and 2 more"; mail.Subject != want {
		t.Errorf("subject %q, want %q", mail.Subject, want)
	}
	last := -1
	for _, want := range []string{
		"* Known malicious package: remove it. Blog (acme-blog) 2.3.0 is matched by MAL-2025-1 (GHSA-mal1-xxxx-yyyy)",
		"* Gallery 3.0.0 is affected by ACME-2 (CVE-2026-1111) (high), exploited in the wild",
		"Listed in the KEV catalogue since 2026-11-01, due date 2026-11-22 (KEV's dates are set for US federal agencies: a reference, not a deadline for every site)",
		"Required action: Apply <!channel> mitigations.",
		"Known to be used in ransomware campaigns",
		"EPSS 94.3 % · 99th percentile",
		"* Forms 1.0.0 is affected by F-1 (critical), with no fix yet",
	} {
		i := strings.Index(mail.Text, want)
		if i < 0 || i < last {
			t.Fatalf("%q is missing or out of order in:\n%s", want, mail.Text)
		}
		last = i
	}
	if strings.Contains(mail.HTML, "<!channel>") || strings.Contains(mail.HTML, "<tokens>") {
		t.Errorf("feed text not escaped in the HTML body:\n%s", mail.HTML)
	}
}

// A chat says the same, with the feed's text escaped so that it neither
// pings nor links: the required action, which would be markup, as code.
func TestIntelEventsInChat(t *testing.T) {
	t.Parallel()
	for typ, want := range map[readmodel.EventType]string{
		readmodel.EventMalicious: "upcheck: known malicious package: remove it: Blog 2.3.0 is matched by MAL-2025-1 (GHSA-mal1-xxxx-yyyy): Steals &lt;tokens&gt;",
		readmodel.EventKnownExploited: "upcheck: Gallery 3.0.0 is affected by ACME-2 (CVE-2026-1111) (high), exploited in the wild. " +
			"Listed in the KEV catalogue since 2026-11-01, due date 2026-11-22 (KEV's dates are set for US federal agencies: a reference, not a deadline for every site). " +
			"Required action: `Apply &lt;!channel&gt; mitigations.`. Known to be used in ransomware campaigns. EPSS 94.3 % · 99th percentile",
	} {
		payload := maliciousPayload
		if typ == readmodel.EventKnownExploited {
			payload = exploitedPayload
		}
		if got := slackText(store.Delivery{Type: string(typ), Payload: payload}, ""); got != want {
			t.Errorf("%s:\n got %q\nwant %q", typ, got, want)
		}
	}
}

func TestEPSSWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		score, pct float64
		want       string
	}{{0.943, 0.991, "EPSS 94.3 % · 99th percentile"}, {0.0004, 0.011, "EPSS 0.04 % · 1st percentile"},
		{0.12, 0.22, "EPSS 12.0 % · 22nd percentile"}, {0.5, 0.13, "EPSS 50.0 % · 13th percentile"}, {0.5, 0.03, "EPSS 50.0 % · 3rd percentile"}} {
		if got := EPSSWords(c.score, c.pct); got != c.want {
			t.Errorf("EPSSWords(%v, %v) = %q, want %q", c.score, c.pct, got, c.want)
		}
	}
}

// A malicious version with a clean successor is told the way out, not
// "remove it": in the mail and in a chat.
func TestMaliciousWithACleanSuccessorWords(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"component": {"code": "debug", "name": "debug", "installed": "4.4.2"}, "package": "debug",
		"advisory": {"id": "MAL-2025-46974", "severity": "critical", "summary": "Malicious code", "malicious": true, "cleared_by": "4.4.3"}}`)
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}, Events: []store.MessageEvent{
		{Type: string(readmodel.EventMalicious), Key: "m", Payload: payload}}}
	mail, err := composeMail(m, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "4.4.3 is not affected: update to it"; !strings.Contains(mail.Subject, want) || !strings.Contains(mail.Text, want) ||
		strings.Contains(mail.Text, "remove it") {
		t.Errorf("mail subject %q text:\n%s\nwant %q and no \"remove it\"", mail.Subject, mail.Text, want)
	}
	var p eventPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	if text := intelChatText(string(readmodel.EventMalicious), p, intelAdvisory{}, "debug", "4.4.2"); !strings.Contains(text, "4.4.3 is not affected: update to it") || strings.Contains(text, "remove it") {
		t.Errorf("chat %q", text)
	}
}
