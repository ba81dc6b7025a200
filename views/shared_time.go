// Times and durations in words: relative to LayoutProps.Now ("3 hours
// ago"), exact in UTC for tooltips and tables, and a run's duration.

package views

import (
	"fmt"
	"strconv"
	"time"
)

// isoTime is the datetime attribute of a <time> element.
func isoTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// absTime is a time for a tooltip or a table, always in UTC.
func absTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// relTime is t relative to now: "just now", "5 minutes ago", "in 3 days";
// beyond 30 days the date itself.
func relTime(now, t time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		if future {
			return "in under a minute"
		}
		return "just now"
	case d < time.Hour:
		s = countNoun(int(d/time.Minute), "minute", "minutes")
	case d < 24*time.Hour:
		s = countNoun(int(d/time.Hour), "hour", "hours")
	case d < 30*24*time.Hour:
		s = countNoun(int(d/(24*time.Hour)), "day", "days")
	default:
		return t.UTC().Format("2 Jan 2006")
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// durationText is a run's duration: "850 ms", "4.2 s", "2 min 5 s".
func durationText(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
	default:
		s := ms / 1000
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
}
