package notify

import (
	"encoding/json"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The words of the look-back's event, tree.exposed (docs/feeds.md "The
// whole tree"): readmodel.ExposureSentence, its package, version and
// advisory id passed through the channel's escaping.

// rankExposed puts a look-back finding right after a malicious package:
// secrets to treat as exposed.
var rankExposed = rankMalicious + 5

// exposedPayload is a tree.exposed event's payload.
type exposedPayload struct {
	Package  string `json:"package"`
	Version  string `json:"version"`
	Advisory struct {
		ID string `json:"id"`
	} `json:"advisory"`
	Malicious   bool      `json:"malicious"`
	InstalledAt time.Time `json:"installed_at"`
	RemovedAt   time.Time `json:"removed_at"`
	// Site names the site, for a channel of some sites or of the fleet.
	Site string `json:"site"`
}

// exposedSentence words payload through word (clean or chat).
func exposedSentence(payload []byte, word func(string, int) string) (string, bool) {
	var p exposedPayload
	if json.Unmarshal(payload, &p) != nil || p.Package == "" {
		return "", false
	}
	return sitePrefix(p.Site, word) + readmodel.ExposureSentence(word(p.Package, chatNameMax), word(p.Version, chatVersionMax),
		word(p.Advisory.ID, chatIDMax), p.Malicious, p.InstalledAt, p.RemovedAt), true
}

// exposedChatText words a tree.exposed event for a chat.
func exposedChatText(payload []byte, typ string) string {
	if s, ok := exposedSentence(payload, chat); ok {
		return "upcheck: " + s
	}
	return "upcheck: " + chat(typ, chatIDMax)
}

// wordExposed words a tree.exposed event as a mail item.
func wordExposed(it *mailItem, payload []byte) {
	it.rank = rankExposed
	s, ok := exposedSentence(payload, clean)
	if !ok {
		it.subject, it.Title = string(readmodel.EventTreeExposed), string(readmodel.EventTreeExposed)
		return
	}
	var p exposedPayload
	_ = json.Unmarshal(payload, &p) // decoded above
	it.order = clean(p.Package, chatNameMax)
	it.subject = sitePrefix(p.Site, clean) + clean(p.Package, chatNameMax) + " " + clean(p.Version, chatVersionMax) + " was installed and is named by " +
		clean(p.Advisory.ID, chatIDMax)
	it.Title = s
}
