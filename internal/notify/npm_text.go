package notify

import (
	"fmt"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The words of the npm events: deprecated and registry_keys.changed
// (docs/notifications.md). A publisher's
// deprecation message is untrusted text like a release summary: one line,
// cut, and in a chat quoted as code, so that neither Slack nor Mattermost
// formats it (*bold*, links) nor pings for it (@channel).

// chatMessageMax caps a deprecation message in a chat, in runes.
const chatMessageMax = 300

// wordNpmEvent words an npm event as a mail item; name, installed and
// version are already clean.
func wordNpmEvent(it *mailItem, typ string, p eventPayload, name, installed, version string) {
	switch readmodel.EventType(typ) {
	case readmodel.EventDeprecated:
		it.rank = rankDepr
		it.subject = "Deprecated by its publisher: " + name + " " + installed
		it.Title = name + " " + installed + " is deprecated by its publisher"
		if msg := clean(p.Message, 300); msg != "" {
			it.Details = append(it.Details, "Its publisher says: "+msg)
		}
	case readmodel.EventRegistryKeysChanged:
		reg := clean(p.Registry, 200)
		it.rank, it.order = rankKeys, reg
		it.subject = "npm registry signing keys changed: " + reg
		it.Title = it.subject
		it.Details = append(it.Details, "Keys now: "+keyList(p.Keys, clean))
		if len(p.PreviousKeys) > 0 {
			it.Details = append(it.Details, "Keys pinned before: "+keyList(p.PreviousKeys, clean))
		}
		it.Details = append(it.Details, "Check with the registry’s operator that they rotated them.")
	}
}

// npmChatText words an npm event for a chat; name, installed and version
// are already escaped.
func npmChatText(typ string, p eventPayload, name, installed, version string) string {
	switch readmodel.EventType(typ) {
	case readmodel.EventDeprecated:
		text := fmt.Sprintf("upcheck: %s %s is deprecated by its publisher", name, installed)
		if msg := chatCode(p.Message, chatMessageMax); msg != "" {
			text += ": " + msg
		}
		return text
	case readmodel.EventRegistryKeysChanged:
		text := fmt.Sprintf("upcheck: the npm registry %s changed its signing keys: now %s",
			chat(p.Registry, chatSourceMax), keyList(p.Keys, chat))
		if len(p.PreviousKeys) > 0 {
			text += "; pinned before: " + keyList(p.PreviousKeys, chat)
		}
		return text + ". Check with the registry’s operator that they rotated them."
	}
	return "upcheck: " + chat(typ, chatIDMax)
}

// lostText is "2.5.0 was published without the provenance that 2.3.0 had".
func lostText(version, installed string) string {
	return version + " was published without the provenance that " + installed + " had"
}

// keyList is the key ids, each through word, or "none".
func keyList(keys []string, word func(string, int) string) string {
	out := make([]string, 0, len(keys))
	for i, k := range keys {
		if i == 10 {
			out = append(out, fmt.Sprintf("and %d more", len(keys)-i))
			break
		}
		if k := word(k, chatIDMax); k != "" {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// chatCode is publisher text as an inline code span of a chat whatever it
// holds: one line, cut, escaped, its backticks made quotes so that it
// cannot end the span; "" for none.
func chatCode(s string, max int) string { return codeSpan(clean(s, max)) }
