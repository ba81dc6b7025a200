package views

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// ChannelPath is a channel's action: test, enable, disable or delete (a
// GET of delete asks first; its form posts the deletion).
func ChannelPath(id int64, action string) string {
	return PathNotifications + "/channels/" + strconv.FormatInt(id, 10) + "/" + action
}

// DeliveryRetryPath retries a failed delivery.
func DeliveryRetryPath(id string) string {
	return PathNotifications + "/events/" + url.PathEscape(id) + "/retry"
}

// eventTypeText names an event type in words.
func eventTypeText(t string) string {
	switch readmodel.EventType(t) {
	case readmodel.EventMalicious:
		return MaliciousTitle
	case readmodel.EventKnownExploited:
		return "Advisory exploited in the wild"
	case readmodel.EventTreeExposed:
		return "A version once installed is named by an advisory"
	case readmodel.EventTreeFinding:
		return "A package in the dependencies is named by an advisory"
	case readmodel.EventFleetFinding:
		return "A package is named by an advisory on sites of the fleet"
	case readmodel.EventSecurityUpdate:
		return "Security update"
	case readmodel.EventAdvisoryUnfixed:
		return "Advisory with no fix"
	case readmodel.EventUpdateAvailable:
		return "Update"
	case readmodel.EventDeprecated:
		return "Installed version deprecated"
	case readmodel.EventTrustDowngrade:
		return "Trust downgrade"
	case readmodel.EventRegistryKeysChanged:
		return "Registry signing keys changed"
	case readmodel.EventSourceFailing:
		return "Source failing for a day"
	case readmodel.EventCheckOverdue:
		return "No check for two days"
	case readmodel.EventTest:
		return "Test"
	}
	return t
}

// EventSubject is what an event is about, read from its key
// ("security_update.available:blog@2.4.0" is "blog@2.4.0"; a site's
// "tree.finding@shop:debug@4.4.2/MAL-1" is "shop: debug@4.4.2/MAL-1").
func EventSubject(key string) string {
	head, subject, _ := strings.Cut(key, ":")
	if strings.HasPrefix(key, "test:") {
		return ""
	}
	if _, site, ok := strings.Cut(head, "@"); ok && site != "" {
		return site + ": " + subject
	}
	return subject
}

func channelSendsText(c readmodel.ChannelRow) string {
	// A channel of security events gets every type but update.available:
	// trust downgrades, deprecations and registry key changes too.
	what := "security and trust problems"
	if readmodel.ChannelEvents(c.Events) == readmodel.ChannelEventsAll {
		what = "security and trust problems and every update"
	}
	if c.MinEPSS != nil {
		what += " (unfixed advisories from EPSS " + strconv.FormatFloat(*c.MinEPSS*100, 'f', 1, 64) +
			" %; exploited and malicious packages always)"
	}
	switch readmodel.ChannelKind(c.Kind) {
	case readmodel.ChannelSlack:
		return what + ", as chat messages"
	case readmodel.ChannelEmail:
		return what + ", by email, one message per check"
	default:
		return what + ", as signed JSON"
	}
}

func deliveryBadge(state string, held bool) badge {
	switch {
	case readmodel.DeliveryState(state) == readmodel.DeliveryPending && held:
		return badge{"Held", toneWarn}
	}
	switch readmodel.DeliveryState(state) {
	case readmodel.DeliveryDelivered:
		return badge{"Delivered", toneOK}
	case readmodel.DeliveryFailed:
		return badge{"Failed", toneDanger}
	}
	return badge{"Pending", toneNeutral}
}

// notificationsFailingText is the dashboard's line about deliveries that
// keep failing.
func notificationsFailingText(n int) string {
	if n == 1 {
		return "1 notification could not be delivered."
	}
	return strconv.Itoa(n) + " notifications could not be delivered."
}

// ChannelForm is the add-a-channel form's fields.
type ChannelForm struct {
	Kind, URL, To, Events, Name string
	// MinEPSS is the EPSS threshold as typed ("": none).
	MinEPSS string
	// Scope is local, sites or fleet; Sites the site names as typed.
	Scope, Sites string
}

// NotificationsProps is the Notifications page.
type NotificationsProps struct {
	Layout     LayoutProps
	CanManage  bool
	Channels   []readmodel.ChannelRow
	Deliveries []readmodel.DeliveryRow
	// NewSecret is the signing secret of the webhook channel just added,
	// shown this once.
	NewSecret string
	// NewTarget is the full URL (or the addresses) of the channel just
	// added, shown this once; the table shows targets masked.
	NewTarget string
	// FormError says why a channel could not be added, in plain words.
	FormError string
	// Form is what the refused form said, to fill it in again.
	Form ChannelForm
	// Notice confirms an action ("Test event queued").
	Notice string
	// MayChooseFleet: the principal sees every site, so may subscribe a
	// channel to the fleet.
	MayChooseFleet bool
	// MayChooseLocal: the principal sees the local site, so may
	// subscribe a channel to it.
	MayChooseLocal bool
}

// channelScopeText says which sites a channel is told of.
func channelScopeText(c readmodel.ChannelRow) string {
	switch c.Scope {
	case readmodel.ScopeFleet:
		return "Every site: one message per finding, naming its sites"
	case readmodel.ScopeSites:
		if len(c.Sites) == 1 {
			return "The site " + c.Sites[0]
		}
		if len(c.Sites) == 0 {
			return "No site (its sites were removed)"
		}
		return "The sites " + strings.Join(c.Sites, ", ")
	}
	return "The local site"
}
