package readmodel

// EventType is the type of a notification event (notification_events.type):
// what the queries queue (queries/notifications.sql), what the webhook's
// and Slack's payloads carry as "type", what the emails and the
// Notifications page word. The values are stored and sent: add types,
// never rename one.
type EventType string

// The event types.
const (
	// EventMalicious: the installed package is matched by an advisory
	// saying it is malicious (OSV MAL- records, GitHub's malware
	// advisories): remove it.
	EventMalicious EventType = "malicious_package"
	// EventKnownExploited: an advisory affecting the installed version is
	// exploited in the wild (the KEV catalogue lists its CVE).
	EventKnownExploited EventType = "advisory.exploited"
	// EventAdvisoryUnfixed: the installed version is affected by an
	// advisory with no fixed version.
	EventAdvisoryUnfixed EventType = "advisory.unfixed"
	// EventSecurityUpdate: a newer security release exists.
	EventSecurityUpdate EventType = "security_update.available"
	// EventUpdateAvailable: an installable update exists (channels that
	// take every event only).
	EventUpdateAvailable EventType = "update.available"
	// EventDeprecated: the installed version of an npm package is
	// deprecated by its publisher.
	EventDeprecated EventType = "deprecated"
	// EventTrustDowngrade: the trust of what a component would install
	// went down (docs/policy.md "Trust going down"); the payload's "kind"
	// (TrustDowngradeKind) says how: a manifest sync lowered its source's
	// pin (pin), the offered npm version lost the provenance the installed
	// version has (provenance_lost), or an account new to the package
	// published it (new_publisher).
	EventTrustDowngrade EventType = "trust_downgrade"
	// EventRegistryKeysChanged: an npm registry's signing keys are not
	// the ones pinned when upcheck first saw them.
	EventRegistryKeysChanged EventType = "registry_keys.changed"
	// EventSourceFailing: a source has failed for 24 hours.
	EventSourceFailing EventType = "source.failing"
	// EventCheckOverdue: no check completed for 48 hours.
	EventCheckOverdue EventType = "check.overdue"
	// EventTest: a test notification sent by hand.
	EventTest EventType = "test"
)

// AllEventTypes are the event types, most urgent first (the urgency of
// AttentionKinds, then the sources' and the schedule's health).
func AllEventTypes() []EventType {
	return []EventType{EventMalicious, EventTreeExposed, EventKnownExploited, EventTreeFinding, EventFleetFinding, EventAdvisoryUnfixed, EventSecurityUpdate, EventTrustDowngrade,
		EventDeprecated, EventUpdateAvailable, EventRegistryKeysChanged, EventSourceFailing, EventCheckOverdue, EventTest}
}
