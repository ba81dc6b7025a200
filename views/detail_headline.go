// The detail page's headline: what state the component is in and the next
// step, in one sentence ("Security update: update to 2.4.0 (high)"). It
// claims "up to date" only from a current evaluation of a source read
// within the stale age (readmodel.StaleAge); without one it says what is
// unknown and why.

package views

import (
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// headline is a component's state in words and what to do about it.
type headline struct {
	// Title is the state, Step the next step ("" when there is none).
	Title, Step string
	Tone        tone
}

// rest is what follows the title: ": " and the step, or nothing.
func (h headline) rest() string {
	if h.Step == "" {
		return ""
	}
	return ": " + h.Step
}

// detailHeadline heads a component's page, the most urgent state first, in
// the urgency order of the summary and the emails (readmodel.AttentionKinds:
// a malicious package, an advisory exploited in the wild, an advisory with
// no fix, a security update, a vulnerable version), then
// an update, a release that needs a newer core, then up to date.
func detailHeadline(p DetailProps) headline {
	name := nameOr(p.Name, p.Code)
	switch {
	case p.SourceURL == "":
		return headline{"Not tracked", "nobody publishes updates for this component, so upcheck cannot tell whether it is up to date", toneNeutral}
	case !factsKnown(p):
		return headline{"Unknown", strings.TrimPrefix(notEvaluatedText(p), "Unknown: "), toneWarn}
	case p.Malicious:
		if v := maliciousWayOut(p.Advisories); v != "" {
			return headline{upperFirst(readmodel.MalwareTitle), readmodel.NotAffectedText(v) +
				", and check what " + p.Installed + " could reach", toneDanger}
		}
		return headline{MaliciousTitle, "a published advisory says " + name + " is malware; uninstall it and check what it could reach", toneDanger}
	case p.KnownExploited:
		step := "attackers are using it"
		switch {
		case p.Security && !p.SecurityNeedsNewerCore && p.SecurityRelease != nil:
			step += "; update to " + p.SecurityRelease.Version
		case p.UpdateAvailable:
			step += "; update to " + p.UpdateVersion
		default:
			step += "; consider disabling " + name + " until a fix is published"
		}
		return headline{"Exploited in the wild", step, toneDanger}
	case p.VulnerableNoFix:
		return headline{"Vulnerable, no fix yet", "consider disabling " + name + " until a fix is published", toneDanger}
	case p.Security && fixStep(p) != "":
		return headline{"Security update", fixStep(p), toneDanger}
	case p.Security:
		return headline{"Security update", securityStep(p), toneDanger}
	case p.Vulnerable:
		step := "no installable release fixes it yet"
		if s := fixStep(p); s != "" {
			step = s
		} else if p.UpdateAvailable {
			step = "update to " + readmodel.VersionText(p.Installed, p.UpdateVersion)
		} else if fixed := firstFix(p.Advisories); fixed != "" {
			step = "the fix is announced for " + fixed + ", which is not an installable release yet"
		}
		return headline{"Vulnerable", step, toneDanger}
	case p.ProvenanceLost != "":
		return headline{"Trust downgrade", provenanceLostText(p.ProvenanceLost, p.Installed) +
			"; check who published it before you install it", toneWarn}
	case p.Deprecated != "":
		step := "no newer version is offered"
		if p.UpdateAvailable {
			step = "update to " + p.UpdateVersion
		}
		return headline{"Deprecated by its publisher", step, toneWarn}
	case p.UpdateAvailable:
		step := "update to " + p.UpdateVersion
		if p.BlockedRelease != nil {
			step += "; " + blockedText(p, *p.BlockedRelease)
		}
		return headline{"Update available", step, toneInfo}
	case p.NeedsNewerCore && p.BlockedRelease != nil:
		return headline{upperFirst(blockedText(p, *p.BlockedRelease)), "", toneWarn}
	case p.Stale && p.Offline():
		return headline{"No update known", "but the imported document has expired, so a newer release or advisory may be missing: import a newer one", toneWarn}
	case p.Stale:
		return headline{"No update known", "but the update source has not been read successfully for over " + staleAgeText + ", so a newer release or advisory may be missing", toneWarn}
	}
	return upToDateHeadline(p)
}

// upToDateHeadline heads the page of a component with no update offered
// and nothing wrong with its own version: up to date, or no update offered
// while a newer release is skipped, waits or is held, with the advisories
// dismissed and what its dependencies need beside it.
func upToDateHeadline(p DetailProps) headline {
	title, tone := "Up to date", toneOK
	if p.Skip != nil && p.Skip.Hides || p.Waiting != nil || p.Held != nil {
		// A newer release exists but is not offered: not "Up to date"
		// beside a newer "Latest published".
		title, tone = noUpdateOfferedText, toneInfo
	}
	if p.Skip != nil && p.Skip.Hides {
		title += " · " + p.Skip.Version + " skipped"
	}
	if n, until := dismissedAdvisories(p.Advisories); n > 0 {
		title, tone = title+" · "+dismissedText(n, until, p.Layout.now()), toneInfo
	}
	// Never a plain "Up to date" over a vulnerable or malicious package it
	// brings in (the catalog row says the same).
	if tree := readmodel.ComponentTreeText(p.DependencyCounts.Counted, p.DependencyCounts.Malicious); tree != "" {
		title, tone = title+" · "+tree, toneWarn
		if p.DependencyCounts.Malicious > 0 {
			tone = toneDanger
		}
	}
	if p.Waiting != nil {
		return headline{title, PolicyReleaseText(*p.Waiting), tone}
	}
	return headline{title, "", tone}
}

// dismissedAdvisories counts the advisories whose dismissal is in force
// and the soonest end among them (nil: none ends), as the catalog's row
// counts them (queries/catalog.sql).
func dismissedAdvisories(as []AdvisoryRow) (int, *time.Time) {
	n := 0
	var until *time.Time
	for _, a := range as {
		if !a.Dismissed {
			continue
		}
		n++
		if a.Dismissal != nil && a.Dismissal.ExpiresAt != nil && (until == nil || a.Dismissal.ExpiresAt.Before(*until)) {
			until = a.Dismissal.ExpiresAt
		}
	}
	return n, until
}

// securityStep is what to do about a security update: install it, or,
// when the installed core cannot run it, update the core first.
func securityStep(p DetailProps) string {
	rel := p.SecurityRelease
	switch {
	case rel == nil && p.UpdateAvailable:
		return "update to " + p.UpdateVersion
	case rel == nil:
		return "a newer release fixes a security problem"
	case !p.SecurityNeedsNewerCore && p.UpdateVersion != "":
		return withSeverity("update to "+p.UpdateVersion, rel.Severity)
	}
	s := withSeverity("the fix in "+rel.Version, rel.Severity) + " " + coreNeedText(p, rel.RequiresCore) + ": update the core first"
	if p.UpdateAvailable {
		s += "; " + p.UpdateVersion + " can be installed meanwhile"
	}
	return s
}

// blockedText is "update to 5.1.0 needs core 2.0.0 or newer (installed
// 1.9.0)".
func blockedText(p DetailProps, r ReleaseRow) string {
	return "update to " + r.Version + " " + coreNeedText(p, r.RequiresCore)
}

// coreNeedText words a release's requires_core with the installed core:
// "needs core 2.0.0 or newer (installed 1.9.0)".
func coreNeedText(p DetailProps, requires string) string {
	s := "needs a newer core"
	if requires != "" {
		s = RequiresCoreText(requires)
	}
	if p.CoreVersion != "" {
		s += " (installed " + p.CoreVersion + ")"
	}
	return s
}

// fixStep leads with the smallest release that clears the open advisories
// when it is not the offered update: "update to 14.1.1 — fixes GHSA-…;
// 16.5.0 (a new major version: 14 → 16) is the newest this site takes"
// (readmodel.FixText); "" otherwise.
func fixStep(p DetailProps) string {
	if !p.FixShown() {
		return ""
	}
	return readmodel.FixText(p.Installed, p.FixVersion, p.UpdateVersion, p.FixIDs)
}

// maliciousWayOut is the newest of the releases that clear each open
// malicious advisory (their ClearedBy), so a release none of them
// affects; "" when one of them affects every later release: then the
// only way out is to remove the package.
func maliciousWayOut(as []AdvisoryRow) string {
	var clearedBy []string
	for _, a := range as {
		if a.Dismissed || !a.Malicious {
			continue
		}
		clearedBy = append(clearedBy, a.ClearedBy)
	}
	return readmodel.NewestVersion(clearedBy)
}

// firstFix is the fixed version of the first open advisory that names one.
func firstFix(as []AdvisoryRow) string {
	for _, a := range as {
		if !a.Dismissed && !a.NoFix && a.FixedIn != "" {
			return a.FixedIn
		}
	}
	return ""
}

// noUpdateOfferedText stands for "Up to date" when a newer release exists
// that the policy or a skip holds back (the headline and the catalog's
// row alike).
const noUpdateOfferedText = "No update offered"
