package readmodel

// ChannelScope is which sites a notification channel is told of
// (notification_channels.scope, docs/notifications.md "Sites"): its
// events name only those sites.
type ChannelScope string

// The scopes.
const (
	// ScopeLocal: the site upcheck runs beside (every channel made before
	// sites, and the default).
	ScopeLocal ChannelScope = "local"
	// ScopeSites: the sites listed for the channel
	// (notification_channel_sites), the local one among them or not.
	ScopeSites ChannelScope = "sites"
	// ScopeFleet: every site, present and future; the tree findings come
	// as one fleet.finding event per finding, naming its sites.
	ScopeFleet ChannelScope = "fleet"
)

// AllChannelScopes are the scopes, in this order.
func AllChannelScopes() []ChannelScope {
	return []ChannelScope{ScopeLocal, ScopeSites, ScopeFleet}
}

// FleetSitesNamed is how many sites a fleet.finding event names at most
// (the first by name, EventPlanFleetFindings); its site_count counts
// them all.
const FleetSitesNamed = 100
