// Sentences the pages build from counts and props: the check outcome, the
// badge's and the alert's words, the widget's stale warning, the history's
// counts, error pages and the detail page's "unknown". app.js builds some
// of the same sentences after a check; static/js/app.js says which.

package views

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// CheckOutcome is how a "Check for updates" request ended, as the JSON API
// reports it (updatecheck.Result).
type CheckOutcome struct {
	// Status is completed, busy, cooldown, lease_lost (or "interrupted"),
	// skipped, cancelled or failed.
	Status                       string
	Fetched, NotModified, Failed int
	// RetryAfter is the cooldown left, in seconds.
	RetryAfter int
}

// CheckOutcomeMessage words a check outcome for the no-JavaScript form post
// (DashboardProps.Flash), in the sentences app.js shows for the same JSON
// answers; where app.js has no sentence for an answer (a cancelled or
// failed check) it names the HTTP status instead.
func CheckOutcomeMessage(o CheckOutcome) string {
	switch o.Status {
	case "completed":
		return fmt.Sprintf("Check completed: %s fetched, %d unchanged, %d failed.",
			countNoun(o.Fetched, "source", "sources"), o.NotModified, o.Failed)
	case "busy":
		return "A check is already running. Try again in a few minutes."
	case "lease_lost", "interrupted":
		return "The check was interrupted (it lost its lock) and will be retried."
	case "cooldown":
		return fmt.Sprintf("Checks are limited to one every 2 minutes. You can check again in %d s.", max(o.RetryAfter, 0))
	case "skipped":
		return "A check has already completed in this period, so nothing was fetched."
	case "cancelled":
		return "The check was cancelled because the server is shutting down. Try again in a moment."
	default:
		return "The check could not run. Try again later."
	}
}

// countNoun is "1 source" or "3 sources".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// pick is one or many by n.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// updatesAvailableText is the navigation badge's words for screen readers.
func updatesAvailableText(n int) string {
	return countNoun(n, "update available", "updates available")
}

// needsAttention is whether the security alert shows.
func needsAttention(s readmodel.Summary) bool {
	return s.SecurityUpdates+s.Vulnerable > 0
}

// securityAlertText is the security alert's sentence, e.g. "2 security
// updates and 1 vulnerable component need attention."
func securityAlertText(security, vulnerable int) string {
	var parts []string
	if security > 0 {
		parts = append(parts, countNoun(security, "security update", "security updates"))
	}
	if vulnerable > 0 {
		parts = append(parts, countNoun(vulnerable, "vulnerable component", "vulnerable components"))
	}
	verb := "need"
	if len(parts) == 1 && (security == 1 || vulnerable == 1) {
		verb = "needs"
	}
	return strings.Join(parts, " and ") + " " + verb + " attention."
}

// staleText is the widget's stale warning.
func staleText(n int) string {
	return fmt.Sprintf("%s not been checked successfully for over 48 hours.",
		countNoun(n, "component has", "components have"))
}

// runCountsText is what a check did with the sources.
func runCountsText(r RunRow) string {
	s := fmt.Sprintf("%d fetched, %d unchanged, %d failed", r.Fetched, r.NotModified, r.Failed)
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d not started", r.Skipped)
	}
	return s
}

// errorText is an error page's default title and message.
func errorText(status int) (title, message string) {
	switch status {
	case 400:
		return "Bad request", "The request could not be understood. Go back and try again."
	case 401:
		return "Please log in", "Your session has ended. Log in again to continue."
	case 403:
		return "Access denied", "Your account is not allowed to do this. Ask an administrator if you need access."
	case 404:
		return "Page not found", "There is nothing at this address. It may have been removed, or the link may be wrong."
	case 503:
		return "Temporarily unavailable", "upcheck cannot answer right now, usually because its database cannot be reached. Try again in a minute."
	default:
		return "Something went wrong", "The server could not complete the request. Try again in a minute; if it keeps happening, the server log says why."
	}
}

// nameOr is a component's display name, its code when it has none.
func nameOr(name, code string) string {
	if name != "" {
		return name
	}
	return code
}

// sourcesTotalText is "5 sources".
func sourcesTotalText(n int) string {
	return countNoun(n, "source", "sources")
}

// notEvaluatedText says why nothing is known about a component that has no
// current evaluation.
func notEvaluatedText(p DetailProps) string {
	switch {
	case p.LastSuccessAt == nil && p.LastError != "":
		return "Unknown: the update source has never been read successfully, so nothing is known about releases or advisories for this version."
	case p.LastSuccessAt == nil:
		return "Unknown: the update source has not been read yet. The next check will fetch it."
	default:
		return "Unknown: the installed version (or the core's) changed, or the pinned key did, since the source was last read; the next check evaluates it."
	}
}
