package notify

import (
	"encoding/json"
	"fmt"

	"github.com/upcheck/upcheck/internal/store"
)

// slackText words an event for a chat channel.
func slackText(d store.Delivery) string {
	var p eventPayload
	if json.Unmarshal(d.Payload, &p) != nil {
		return "upcheck: " + d.Type
	}
	name := p.Component.Name
	switch d.Type {
	case "security_update.available":
		text := fmt.Sprintf("upcheck: security update for %s: %s → %s", name, p.Component.Installed, p.Version)
		if p.Severity != "" {
			text += " (" + p.Severity + ")"
		}
		if p.Summary != "" {
			text += ": " + p.Summary
		}
		return text
	case "advisory.unfixed":
		return fmt.Sprintf("upcheck: %s %s is affected by %s (%s), no fix yet: %s",
			name, p.Component.Installed, p.Advisory.ID, p.Advisory.Severity, p.Advisory.Summary)
	case "update.available":
		return fmt.Sprintf("upcheck: update for %s: %s → %s", name, p.Component.Installed, p.Version)
	case "source.failing":
		return fmt.Sprintf("upcheck: the update source %s has been failing for a day. %s", p.Source, p.problem())
	case "check.overdue":
		return "upcheck: no update check has completed for two days"
	case "test":
		return "upcheck: " + p.Message
	}
	return "upcheck: " + d.Type
}
