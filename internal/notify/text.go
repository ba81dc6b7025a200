package notify

import (
	"encoding/json"
	"fmt"

	"github.com/upcheck/upcheck/internal/store"
)

// payload is what the events' payloads hold, as far as words need it.
type payload struct {
	Component struct {
		Code, Name, Installed string
	} `json:"component"`
	Version  string `json:"version"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Message  string `json:"message"`
	Advisory struct {
		ID, Severity, Summary string
	} `json:"advisory"`
}

// slackText words an event for a chat channel.
func slackText(d store.Delivery) string {
	var p payload
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
	case "test":
		return "upcheck: " + p.Message
	}
	return "upcheck: " + d.Type
}
