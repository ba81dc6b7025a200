// Badges: a status in a few words, with a tone (colour) that only repeats
// what the words say. The catalog row's, the source's, an advisory's
// severity and a signature's.

package views

import (
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
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

// severityBadge words a severity by its rank (readmodel.Severity.Rank:
// "moderate" is Medium); an unknown or empty one stays visible.
func severityBadge(sev string) badge {
	switch readmodel.Severity(sev).Rank() {
	case readmodel.SeverityCritical.Rank():
		return badge{"Critical", toneDanger}
	case readmodel.SeverityHigh.Rank():
		return badge{"High", toneDanger}
	case readmodel.SeverityMedium.Rank():
		return badge{"Medium", toneWarn}
	case readmodel.SeverityLow.Rank():
		return badge{"Low", toneNeutral}
	}
	if sev == "" {
		return badge{"Severity not given", toneNeutral}
	}
	return badge{sev, toneNeutral}
}

// rowBadges are a catalog row's statuses in words, the most urgent first.
// A row whose only news is a dismissed advisory is not a plain "Up to
// date": it says what was dismissed and until when, from now.
func rowBadges(r CatalogRow, now time.Time) []badge {
	var bs []badge
	if r.Security {
		bs = append(bs, badge{"Security update", toneDanger})
	}
	if r.Vulnerable {
		if r.VulnerableNoFix {
			bs = append(bs, badge{"Vulnerable, no fix yet", toneDanger})
		} else {
			bs = append(bs, badge{"Vulnerable", toneDanger})
		}
	}
	if r.UpdateAvailable {
		text := "Update available"
		if r.UpdateVersion != "" {
			text = "Update to " + r.UpdateVersion
		}
		bs = append(bs, badge{text, toneInfo})
	}
	if r.NeedsNewerCore {
		text := "Needs a newer core"
		if r.RequiredCore != "" {
			text = upperFirst(RequiresCoreText(r.RequiredCore))
		}
		bs = append(bs, badge{text, toneWarn})
	}
	switch {
	case r.SourceURL == "":
		bs = append(bs, badge{"No update source", toneNeutral})
	case r.LastError != "":
		bs = append(bs, badge{"Check failing", toneWarn})
	}
	if r.Stale {
		bs = append(bs, badge{"Stale", toneWarn})
	}
	switch {
	case r.SourceURL != "" && r.LastSuccessAt == nil && r.LastError == "":
		bs = append(bs, badge{"Not checked yet", toneNeutral})
	case r.SourceURL != "" && r.LastSuccessAt == nil:
		bs = append(bs, badge{"Never read successfully", toneWarn})
	}
	dismissed := dismissedText(r.Dismissed, r.DismissedUntil, now)
	switch {
	case len(bs) == 0 && dismissed != "":
		bs = append(bs, badge{"Up to date · " + dismissed, toneInfo})
	case len(bs) == 0:
		bs = append(bs, badge{"Up to date", toneOK})
	case dismissed != "":
		bs = append(bs, badge{upperFirst(dismissed), toneNeutral})
	}
	return bs
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

// sourceBadges are a source's states in words.
func sourceBadges(s SourceRow) []badge {
	var bs []badge
	if s.Failing {
		text := "Failing"
		if s.ConsecutiveFailures > 0 {
			text += ", " + countNoun(s.ConsecutiveFailures, "time", "times") + " in a row"
		}
		bs = append(bs, badge{text, toneDanger})
	}
	switch {
	case s.LastSuccessAt == nil && s.Failing:
		bs = append(bs, badge{"Never fetched successfully", toneWarn})
	case s.Expired:
		bs = append(bs, badge{"Document expired", toneWarn})
	case s.Stale && s.LastSuccessAt != nil:
		bs = append(bs, badge{"Stale", toneWarn})
	case s.Stale:
		// Never read, not failing: waiting (an offline source for its
		// import) for more than the stale age since it was installed.
		bs = append(bs, badge{"Stale: nothing read in the " + staleAgeText + " since it was installed", toneWarn})
	}
	if len(bs) == 0 {
		switch {
		case s.LastSuccessAt == nil && s.Offline:
			return []badge{{"Waiting for its first import", toneNeutral}}
		case s.LastSuccessAt == nil:
			return []badge{{"Not fetched yet", toneNeutral}}
		}
		bs = append(bs, badge{"Healthy", toneOK})
	}
	if s.Offline {
		bs = append(bs, badge{"Offline: imported, never fetched", toneNeutral})
	}
	return bs
}

// signatureBadge words a source's signature state.
func signatureBadge(state string) badge {
	switch readmodel.TrustState(state) {
	case readmodel.TrustVerified:
		return badge{"Verified", toneOK}
	case readmodel.TrustUnsigned, "":
		return badge{"Unsigned", toneNeutral}
	default:
		return badge{state, toneNeutral}
	}
}
