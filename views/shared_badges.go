// Badges: a status in a few words, with a tone (colour) that only repeats
// what the words say. The catalog row's, the source's, an advisory's
// severity and a signature's.

package views

import (
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// tone is a badge's colour (readmodel.Tone); the badge's words always
// say the same thing.
type tone = readmodel.Tone

const (
	toneOK      = readmodel.ToneOK
	toneInfo    = readmodel.ToneInfo
	toneWarn    = readmodel.ToneWarn
	toneDanger  = readmodel.ToneDanger
	toneNeutral = readmodel.ToneNeutral
)

// badge is a short status in words.
type badge struct {
	Text string
	Tone tone
}

// dismissedText is what n dismissed advisories leave: "1 advisory dismissed
// until the end of 15 Jan", "2 advisories dismissed with no end", "3
// advisories dismissed, the first until the end of 15 Jan" (until: the
// soonest end of those that end, nil when none does); "" for none.
func dismissedText(n int, until *time.Time, now time.Time) string {
	if n <= 0 {
		return ""
	}
	s := countNoun(n, "advisory", "advisories") + " dismissed"
	switch {
	case until == nil:
		return s + " with no end"
	case n == 1:
		return s + " until " + untilShort(*until, now)
	}
	return s + ", the first until " + untilShort(*until, now)
}

// untilShort is a dismissal's end as the badges say it, the day the
// detail page's row names (expiredOnText): an end at midnight UTC, as the
// page's and the API's dates give, is "the end of" the day before it
// ("the end of 15 Jan" for 16 Jan 00:00 UTC), never the next day's date.
func untilShort(t, now time.Time) string {
	u := t.UTC()
	if u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
		return "the end of " + shortDate(u.Add(-time.Hour), now)
	}
	return shortDate(u, now)
}

// shortDate is a day in UTC, "20 Dec", with the year when it is not now's.
func shortDate(t, now time.Time) string {
	t = t.UTC()
	if t.Year() == now.UTC().Year() {
		return t.Format("2 Jan")
	}
	return readmodel.DateText(t)
}
