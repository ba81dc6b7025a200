// Badges: a status in a few words, with a tone (colour) that only repeats
// what the words say. The catalog row's, the source's, an advisory's
// severity and a signature's.

package views

import (
	"time"
)

// tone is a badge's colour; the badge's words always say the same thing.
type tone string

const (
	toneOK      tone = "ok"
	toneInfo    tone = "info"
	toneWarn    tone = "warn"
	toneDanger  tone = "danger"
	toneNeutral tone = "neutral"
)

// badge is a short status in words.
type badge struct {
	Text string
	Tone tone
}

// dismissedText is what n dismissed advisories leave: "1 advisory dismissed
// until 20 Dec", "2 advisories dismissed with no end", "3 advisories
// dismissed, the first until 20 Dec" (until: the soonest end of those that
// end, nil when none does); "" for none.
func dismissedText(n int, until *time.Time, now time.Time) string {
	if n <= 0 {
		return ""
	}
	s := countNoun(n, "advisory", "advisories") + " dismissed"
	switch {
	case until == nil:
		return s + " with no end"
	case n == 1:
		return s + " until " + shortDate(*until, now)
	}
	return s + ", the first until " + shortDate(*until, now)
}

// shortDate is a day in UTC, "20 Dec", with the year when it is not now's.
func shortDate(t, now time.Time) string {
	t = t.UTC()
	if t.Year() == now.UTC().Year() {
		return t.Format("2 Jan")
	}
	return t.Format("2 Jan 2006")
}
