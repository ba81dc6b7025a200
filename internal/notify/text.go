package notify

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Chat text caps, in runes (docs/notifications.md): each piece of
// publisher text is cut to its cap with "…", and the whole post to
// chatTextMax.
const (
	chatNameMax     = 80
	chatVersionMax  = 40
	chatSeverityMax = 20
	chatIDMax       = 80
	chatSummaryMax  = 300
	chatSourceMax   = 200
	chatTextMax     = 1500
)

// chat makes publisher text safe in a Slack or Mattermost message: one line
// (control and invisible format characters, bidi overrides among them,
// become spaces; runs of spaces one), at most max runes, and &, < and >
// escaped as both formats require, so that "<!channel>" or
// "<https://evil.example|a disguised link>" is shown as text and neither
// pings nor links. Cut before escaping: an entity is never cut in half.
//
// Text with anything else either format reads as markup (plainChat says
// what) is an inline code span (chatCode): a mention ("@channel", "@here",
// "@all", "@user", an npm scope), a markdown link or image, a bare URL or
// domain, emphasis, strike-through. One channel kind serves Slack and
// Mattermost alike and their escapes differ (Mattermost's backslash shows
// in Slack), while both show a code span as it is: neither formats or
// links it, and Mattermost pings for no mention inside one.
func chat(s string, max int) string {
	c := clean(s, max)
	if plainChat(c) {
		return chatEscape(c)
	}
	return codeSpan(c)
}

// chatEscape escapes &, < and > for Slack's mrkdwn and Mattermost.
func chatEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// codeSpan is cleaned text as an inline code span of a chat, escaped, its
// backticks made quotes so that it cannot end the span; "" for none.
func codeSpan(c string) string {
	if c == "" {
		return ""
	}
	return "`" + chatEscape(strings.ReplaceAll(c, "`", "'")) + "`"
}

// plainChat reports whether cleaned text reads the same as plain text in
// Slack and in Mattermost: letters, digits, spaces, non-ASCII symbols, the
// punctuation of prose (- , ; ( ) ' " + = % ? and &, < and >, which
// chatEscape escapes), a '.' not followed by a letter (a version, the end
// of a sentence; "www.x" and "evil.example" would be linked), a ':' before
// a space or at the end (no URL scheme, no :emoji:) and a '_' inside a word
// (neither format's emphasis). Any other ASCII punctuation is markup to
// one of them: @ * _ ~ ` [ ] ! # | $ \ / { } ^.
func plainChat(c string) bool {
	r := []rune(c)
	for i, x := range r {
		var prev, next rune
		if i > 0 {
			prev = r[i-1]
		}
		if i+1 < len(r) {
			next = r[i+1]
		}
		switch {
		case x > unicode.MaxASCII || unicode.IsLetter(x) || unicode.IsDigit(x) || x == ' ':
		case strings.ContainsRune("-,;()'\"+=%?&<>", x):
		case x == '.' && !unicode.IsLetter(next):
		case x == ':' && (next == 0 || next == ' '):
		case x == '_' && isWordRune(prev) && isWordRune(next):
		default:
			return false
		}
	}
	return true
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// slackText words an event for a chat channel. Every string from a payload
// passes through chat; link is the component's AdminCP page ("" for none),
// already escaped.
func slackText(d store.Delivery, link string) string {
	if readmodel.EventType(d.Type) == readmodel.EventTreeExposed {
		return exposedChatText(d.Payload, d.Type) // about no component: no AdminCP link
	}
	if readmodel.EventType(d.Type) == readmodel.EventTreeFinding {
		return treeFindingChatText(d.Payload, d.Type) // about no component: no AdminCP link
	}
	if readmodel.EventType(d.Type) == readmodel.EventFleetFinding {
		return capChat(fleetFindingChatText(d.Payload, d.Type)) // about no component: no AdminCP link; many sites
	}
	var p eventPayload
	if json.Unmarshal(d.Payload, &p) != nil {
		return "upcheck: " + chat(d.Type, chatIDMax)
	}
	name := chat(p.Component.Name, chatNameMax)
	installed, version := chat(p.Component.Installed, chatVersionMax), chat(p.Version, chatVersionMax)
	var text string
	switch readmodel.EventType(d.Type) {
	case readmodel.EventSecurityUpdate:
		text = fmt.Sprintf("upcheck: security update for %s: %s → %s", name, installed, version)
		if sev := chat(p.Severity, chatSeverityMax); sev != "" {
			text += " (" + sev + ")"
		}
		if ids := chatAdvisoryIDs(p.Advisories); ids != "" {
			text += ", fixes " + ids
		}
		if fix := chat(p.FixVersion, chatVersionMax); fix != "" && fix != version {
			text += "; " + readmodel.FixText(installed, fix, "", nil)
		}
		if s := chat(p.Summary, chatSummaryMax); s != "" {
			text += ": " + s
		}
	case readmodel.EventAdvisoryUnfixed:
		a := p.Advisory
		text = fmt.Sprintf("upcheck: %s %s is affected by %s (%s), no fix yet: %s",
			name, installed, chatAdvisoryIDs([]advisoryRef{{ID: a.ID, Aliases: a.Aliases}}),
			chat(a.Severity, chatSeverityMax), chat(a.Summary, chatSummaryMax))
	case readmodel.EventUpdateAvailable:
		text = fmt.Sprintf("upcheck: update for %s: %s → %s", name, installed, version)
	case readmodel.EventSourceFailing:
		text = fmt.Sprintf("upcheck: the update source %s has been failing for a day. %s",
			chat(p.Source, chatSourceMax), chat(p.problem(), chatSummaryMax))
	case readmodel.EventCheckOverdue:
		text = "upcheck: no update check has completed for two days"
	case readmodel.EventMalicious, readmodel.EventKnownExploited:
		var intel struct {
			Advisory intelAdvisory `json:"advisory"`
		}
		_ = json.Unmarshal(d.Payload, &intel) // decoded above; a KEV of another shape words nothing
		text = intelChatText(d.Type, p, intel.Advisory, name, installed)
	case readmodel.EventDeprecated, readmodel.EventRegistryKeysChanged:
		text = npmChatText(d.Type, p, name, installed, version)
	case readmodel.EventTrustDowngrade:
		text = trustChatText(p, name, installed, version)
	case readmodel.EventTest:
		text = "upcheck: " + chat(p.Message, chatSummaryMax)
	default:
		text = "upcheck: " + chat(d.Type, chatIDMax)
	}
	// A registered site's component: the site named first, a digest's
	// sites listed last (the post's cap cuts a long list).
	if prefix, list := p.siteWords(chat); prefix != "" {
		text = "upcheck: " + prefix + strings.TrimPrefix(text, "upcheck: ")
		if list != "" {
			text += ". Sites: " + list
		}
	}
	text = capChat(text)
	if link != "" {
		text += " " + link
	}
	return text
}

// chatAdvisoryIDs is advisoryIDs escaped for a chat.
func chatAdvisoryIDs(refs []advisoryRef) string { return advisoryIDs(refs, chat) }

// advisoryIDs is "ACME-2 (CVE-2026-1234, GHSA-…)" for each advisory, each
// id passed through word; "" for none. At most 10 advisories and 5 aliases
// each are named.
func advisoryIDs(refs []advisoryRef, word func(string, int) string) string {
	parts := make([]string, 0, len(refs))
	for i, a := range refs {
		if i == 10 {
			parts = append(parts, "and "+strconv.Itoa(len(refs)-i)+" more")
			break
		}
		id := word(a.ID, chatIDMax)
		if id == "" {
			continue
		}
		var aliases []string
		for j, al := range a.Aliases {
			if j == 5 {
				break
			}
			if al := word(al, chatIDMax); al != "" {
				aliases = append(aliases, al)
			}
		}
		if len(aliases) > 0 {
			id += " (" + strings.Join(aliases, ", ") + ")"
		}
		parts = append(parts, id)
	}
	return strings.Join(parts, ", ")
}

// isInvisible reports a rune that must not reach a chat or a mail as is:
// control characters, and format characters (Unicode Cf: bidi overrides
// and isolates, zero-width spaces and joiners) that can disguise text.
func isInvisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// capChat cuts a post's text to chatTextMax runes with "…": at a space,
// never inside an entity, and before a code span the cut would leave
// open (its text would be markup again).
func capChat(text string) string {
	r := []rune(text)
	if len(r) <= chatTextMax {
		return text
	}
	cut := string(r[:chatTextMax-1])
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	if strings.Count(cut, "`")%2 == 1 {
		cut = strings.TrimRight(cut[:strings.LastIndexByte(cut, '`')], " ")
	}
	return cut + "…"
}
