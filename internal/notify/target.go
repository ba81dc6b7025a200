package notify

import (
	"github.com/upcheck/upcheck/internal/readmodel"
)

// A channel's target is a credential: whoever has a webhook URL (Slack's
// above all) can post to the channel, and an email address is a person's.
// Only the answer that creates a channel shows its target whole; after
// that, the AdminCP and the API show it through ShownTarget.

// ShownTarget is how a channel's target is shown to someone who is not
// creating it: a viewer sees a webhook's scheme and host only and no email
// address; an admin (admin true) sees a webhook's scheme and host and the
// last four characters of the rest, enough to tell two channels apart,
// and the whole email address (readmodel.ShownURL, which feeds' URLs are
// shown through too).
func ShownTarget(kind, target string, admin bool) string {
	if kind == string(readmodel.ChannelEmail) {
		if admin {
			return target
		}
		return "an email address (shown to admins)"
	}
	if shown, ok := readmodel.ShownURL(target, admin); ok {
		return shown
	}
	return "a webhook URL"
}
