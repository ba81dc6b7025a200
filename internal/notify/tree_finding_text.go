package notify

import (
	"encoding/json"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The words of a new tree finding's event, tree.finding (docs/feeds.md
// "The whole tree"): readmodel.TreeFindingSentence, its package, version,
// advisory id and fixed version passed through the channel's escaping,
// ranked as the component's finding of its kind: malicious first, then
// exploited in the wild, then vulnerable.

// treeFindingPayload is a tree.finding event's payload.
type treeFindingPayload struct {
	Package  string `json:"package"`
	Version  string `json:"version"`
	Advisory struct {
		ID string `json:"id"`
	} `json:"advisory"`
	Malicious      bool   `json:"malicious"`
	KnownExploited bool   `json:"known_exploited"`
	FixedIn        string `json:"fixed_in"`
	// Site names the site, for a channel of some sites ("" for a local
	// channel's event).
	Site string `json:"site"`
}

// treeFindingSentence words payload through word (clean or chat).
func treeFindingSentence(payload []byte, word func(string, int) string) (treeFindingPayload, string, bool) {
	var p treeFindingPayload
	if json.Unmarshal(payload, &p) != nil || p.Package == "" {
		return p, "", false
	}
	fixed := ""
	if p.FixedIn != "" {
		fixed = word(p.FixedIn, chatVersionMax)
	}
	return p, sitePrefix(p.Site, word) + readmodel.TreeFindingSentence(word(p.Package, chatNameMax), word(p.Version, chatVersionMax),
		word(p.Advisory.ID, chatIDMax), p.Malicious, p.KnownExploited, fixed), true
}

// sitePrefix is "site shop: " for an event naming a site, through word;
// "" for none.
func sitePrefix(site string, word func(string, int) string) string {
	if site == "" {
		return ""
	}
	return "site " + word(site, chatNameMax) + ": "
}

// treeFindingChatText words a tree.finding event for a chat.
func treeFindingChatText(payload []byte, typ string) string {
	if _, s, ok := treeFindingSentence(payload, chat); ok {
		return "upcheck: " + s
	}
	return "upcheck: " + chat(typ, chatIDMax)
}

// findingRank is a mail item's rank for a finding of the tree: a
// malicious package's, a known exploited one's, or an advisory's.
func findingRank(malicious, knownExploited bool) int {
	switch {
	case malicious:
		return rankMalicious
	case knownExploited:
		return rankExploited
	}
	return rankAdvisory
}

// wordTreeFinding words a tree.finding event as a mail item.
func wordTreeFinding(it *mailItem, payload []byte) {
	p, s, ok := treeFindingSentence(payload, clean)
	it.rank = findingRank(p.Malicious, p.KnownExploited)
	if !ok {
		it.subject, it.Title = string(readmodel.EventTreeFinding), string(readmodel.EventTreeFinding)
		return
	}
	it.order = clean(p.Package, chatNameMax)
	it.subject = sitePrefix(p.Site, clean) + clean(p.Package, chatNameMax) + " " + clean(p.Version, chatVersionMax) + " is named by " +
		clean(p.Advisory.ID, chatIDMax)
	it.Title = s
}
