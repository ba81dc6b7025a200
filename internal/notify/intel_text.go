package notify

import (
	"fmt"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The words of the advisory feeds' events: malicious_package and
// advisory.exploited (docs/notifications.md). Both come before every other
// event, a known malicious package first; KEV's text (its required action)
// is feed text and is cleaned and escaped like a publisher's.

// MalwareWords and ExploitedWords are what the pages, the mails and the
// chats say of the two (the words the issue asks for, in one place).
const (
	MalwareWords   = readmodel.MalwareWords
	ExploitedWords = readmodel.ExploitedWords
)

// Ranks of the feeds' events: their places in readmodel.AttentionKinds,
// before an unfixed advisory.
var (
	rankMalicious = 10 * readmodel.Urgency(readmodel.KindMalicious)
	rankExploited = 10 * readmodel.Urgency(readmodel.KindKnownExploited)
)

// intelAdvisory is what an exploited or malicious event's advisory adds
// (release.AdvisoryMatch's feed facts).
type intelAdvisory struct {
	KEV *struct {
		CVE            string `json:"cve"`
		DateAdded      string `json:"date_added"`
		DueDate        string `json:"due_date"`
		RequiredAction string `json:"required_action"`
		Ransomware     string `json:"ransomware"`
	} `json:"kev"`
	EPSS *struct {
		Score      float64 `json:"score"`
		Percentile float64 `json:"percentile"`
	} `json:"epss"`
}

// EPSSWords is the read model's (one definition for pages and messages).
func EPSSWords(score, percentile float64) string { return readmodel.EPSSWords(score, percentile) }

// kevDetails are the KEV facts of an exploited advisory, each through word.
func kevDetails(a intelAdvisory, word func(string, int) string) []string {
	var out []string
	if k := a.KEV; k != nil {
		line := "Listed in the KEV catalogue since " + word(k.DateAdded, 20)
		if k.DueDate != "" {
			line += ", due date " + word(k.DueDate, 20) + " (KEV's dates are set for US federal agencies: a reference, not a deadline for every site)"
		}
		out = append(out, line)
		if act := word(k.RequiredAction, 300); act != "" {
			out = append(out, "Required action: "+act)
		}
		if strings.EqualFold(k.Ransomware, "Known") {
			out = append(out, "Known to be used in ransomware campaigns")
		}
	}
	if e := a.EPSS; e != nil {
		out = append(out, EPSSWords(e.Score, e.Percentile))
	}
	return out
}

// wordIntelEvent words a malicious_package or advisory.exploited event as a
// mail item; name and installed are already clean.
func wordIntelEvent(it *mailItem, typ string, p eventPayload, intel intelAdvisory, name, installed string) {
	a := p.Advisory
	id, sev := advisoryIDs([]advisoryRef{{ID: a.ID, Aliases: a.Aliases}}, clean), clean(a.Severity, 20)
	switch readmodel.EventType(typ) {
	case readmodel.EventMalicious:
		it.rank = rankMalicious
		pkg := ""
		if n := clean(p.Package, 120); n != "" && n != name {
			pkg = " (" + n + ")"
		}
		it.subject = "Known malicious package: remove it: " + name + " " + installed
		it.Title = "Known malicious package: remove it. " + name + pkg + " " + installed + " is matched by " + id
		if v := clean(a.ClearedBy, 60); v != "" {
			it.subject = "Known malicious package: " + name + " " + installed + "; " + readmodel.NotAffectedText(v)
			it.Title = "Known malicious package. " + name + pkg + " " + installed + " is matched by " + id + "; " + readmodel.NotAffectedText(v)
		}
		it.Details = nonEmpty(clean(a.Summary, 300))
	case readmodel.EventKnownExploited:
		it.rank = rankExploited + sevRank(sev)
		it.subject = "Exploited in the wild: " + id + " affects " + name + " " + installed
		it.Title = name + " " + installed + " is affected by " + id + paren(sev) + ", exploited in the wild"
		it.Details = append(nonEmpty(clean(a.Summary, 300)), kevDetails(intel, clean)...)
	}
	it.URL = webURL(a.URL)
}

// intelChatText words a malicious_package or advisory.exploited event for
// a chat; name and installed are already escaped.
func intelChatText(typ string, p eventPayload, intel intelAdvisory, name, installed string) string {
	a := p.Advisory
	id := chatAdvisoryIDs([]advisoryRef{{ID: a.ID, Aliases: a.Aliases}})
	switch readmodel.EventType(typ) {
	case readmodel.EventMalicious:
		text := fmt.Sprintf("upcheck: %s: %s %s is matched by %s", MalwareWords, name, installed, id)
		if v := chat(a.ClearedBy, chatIDMax); v != "" {
			text = fmt.Sprintf("upcheck: %s: %s %s is matched by %s; %s", readmodel.MalwareTitle, name, installed, id, readmodel.NotAffectedText(v))
		}
		if s := chat(a.Summary, chatSummaryMax); s != "" {
			text += ": " + s
		}
		return text
	case readmodel.EventKnownExploited:
		text := fmt.Sprintf("upcheck: %s %s is affected by %s", name, installed, id)
		if sev := chat(a.Severity, chatSeverityMax); sev != "" {
			text += " (" + sev + ")"
		}
		text += ", " + ExploitedWords
		for _, d := range kevDetails(intel, chat) {
			text += ". " + strings.TrimRight(d, ".")
		}
		return text
	}
	return "upcheck: " + chat(typ, chatIDMax)
}
