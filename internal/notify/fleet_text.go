package notify

import (
	"encoding/json"
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The words of the fleet digest, fleet.finding (docs/notifications.md
// "Sites"): readmodel.FleetFindingSentence, its package, version,
// advisory id, fixed version and site names passed through the channel's
// escaping, ranked as a tree finding of its kind.

// fleetFindingPayload is a fleet.finding event's payload.
type fleetFindingPayload struct {
	treeFindingPayload
	// Sites are the first readmodel.FleetSitesNamed sites' names;
	// SiteCount counts them all.
	Sites     []string `json:"sites"`
	SiteCount int      `json:"site_count"`
}

// fleetFindingSentence words payload through word (clean or chat).
func fleetFindingSentence(payload []byte, word func(string, int) string) (fleetFindingPayload, string, bool) {
	var p fleetFindingPayload
	if json.Unmarshal(payload, &p) != nil || p.Package == "" {
		return p, "", false
	}
	fixed := ""
	if p.FixedIn != "" {
		fixed = word(p.FixedIn, chatVersionMax)
	}
	sites := make([]string, 0, min(len(p.Sites), readmodel.FleetSitesNamed))
	for _, s := range p.Sites[:min(len(p.Sites), readmodel.FleetSitesNamed)] {
		sites = append(sites, word(s, chatNameMax))
	}
	return p, readmodel.FleetFindingSentence(word(p.Package, chatNameMax), word(p.Version, chatVersionMax), word(p.Advisory.ID, chatIDMax),
		p.Malicious, p.KnownExploited, fixed, sites, p.SiteCount), true
}

// fleetFindingChatText words a fleet.finding event for a chat; the
// post's cap (chatTextMax) cuts a long list of sites.
func fleetFindingChatText(payload []byte, typ string) string {
	if _, s, ok := fleetFindingSentence(payload, chat); ok {
		return "upcheck: " + s
	}
	return "upcheck: " + chat(typ, chatIDMax)
}

// wordFleetFinding words a fleet.finding event as a mail item.
func wordFleetFinding(it *mailItem, payload []byte) {
	p, s, ok := fleetFindingSentence(payload, clean)
	it.rank = findingRank(p.Malicious, p.KnownExploited)
	if !ok {
		it.subject, it.Title = string(readmodel.EventFleetFinding), string(readmodel.EventFleetFinding)
		return
	}
	it.order = clean(p.Package, chatNameMax)
	it.subject = clean(p.Package, chatNameMax) + " " + clean(p.Version, chatVersionMax) + " is named by " + clean(p.Advisory.ID, chatIDMax) +
		" on " + sitesCount(max(p.SiteCount, len(p.Sites)))
	it.Title = s
}

// sitesCount is "1 site" or "N sites".
func sitesCount(n int) string {
	if n == 1 {
		return "1 site"
	}
	return strconv.Itoa(n) + " sites"
}
