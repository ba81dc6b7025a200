package readmodel

// ChannelKind is how a notification channel is sent to
// (notification_channels.kind, whose CHECK constraint allows exactly
// AllChannelKinds).
type ChannelKind string

// The channel kinds.
const (
	// ChannelWebhook: a signed JSON POST (Standard Webhooks).
	ChannelWebhook ChannelKind = "webhook"
	// ChannelSlack: a Slack or Mattermost incoming webhook.
	ChannelSlack ChannelKind = "slack"
	// ChannelEmail: one message per check, to an address.
	ChannelEmail ChannelKind = "email"
)

// AllChannelKinds are the channel kinds, in this order.
func AllChannelKinds() []ChannelKind {
	return []ChannelKind{ChannelWebhook, ChannelSlack, ChannelEmail}
}

// ChannelEvents is which events a channel takes
// (notification_channels.events).
type ChannelEvents string

// The choices.
const (
	// ChannelEventsSecurity: every event but EventUpdateAvailable.
	ChannelEventsSecurity ChannelEvents = "security"
	// ChannelEventsAll: every event.
	ChannelEventsAll ChannelEvents = "all"
)

// AllChannelEvents are the choices, in this order.
func AllChannelEvents() []ChannelEvents {
	return []ChannelEvents{ChannelEventsSecurity, ChannelEventsAll}
}

// DeliveryState is where a notification event's (or an email message's)
// delivery stands (notification_events.state, notification_messages.state).
type DeliveryState string

// The delivery states.
const (
	// DeliveryPending: not delivered yet; it is tried (again) when due.
	DeliveryPending DeliveryState = "pending"
	// DeliveryDelivered: the receiver took it.
	DeliveryDelivered DeliveryState = "delivered"
	// DeliveryFailed: its last attempt failed for good; it waits for a
	// retry by hand.
	DeliveryFailed DeliveryState = "failed"
)

// AllDeliveryStates are the delivery states, in this order.
func AllDeliveryStates() []DeliveryState {
	return []DeliveryState{DeliveryPending, DeliveryDelivered, DeliveryFailed}
}
