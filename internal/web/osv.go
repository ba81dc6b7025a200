package web

import (
	"strconv"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/views"
)

// advisoryOSV is what an advisory says in OSV's terms, for the detail
// page: the score is the one Parse computed from the vector, its rating
// CVSS's qualitative scale.
func advisoryOSV(a release.Advisory) views.AdvisoryOSV {
	o := views.AdvisoryOSV{Aliases: a.Aliases, CVSS: a.CVSS}
	if a.CVSS != "" {
		o.CVSSScore = strconv.FormatFloat(a.CVSSScore, 'f', 1, 64)
		o.CVSSRating = release.CVSSRating(a.CVSSScore)
	}
	if !a.Modified.IsZero() {
		o.Modified = a.Modified.UTC().Format("2006-01-02")
	}
	if !a.Withdrawn.IsZero() {
		o.Withdrawn = a.Withdrawn.UTC().Format("2006-01-02")
	}
	for _, r := range a.References {
		o.References = append(o.References, views.AdvisoryReference{Type: r.Type, URL: r.URL})
	}
	return o
}

// withdrawnRows are the withdrawn advisories as the detail page lists them.
func withdrawnRows(as []release.AdvisoryMatch) []views.AdvisoryRow {
	var rows []views.AdvisoryRow
	for _, a := range as {
		rows = append(rows, views.AdvisoryRow{ID: a.ID, Severity: a.Severity, Summary: a.Summary, URL: a.URL,
			Affected: a.Affected, FixedIn: a.FixedIn, NoFix: a.NoFix, ClearedBy: a.ClearedBy, OSV: advisoryOSV(a.Advisory), AdvisoryIntel: advisoryIntel(a)})
	}
	return rows
}
