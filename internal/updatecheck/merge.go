package updatecheck

import (
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// The origins of an advisory (release.AdvisoryMatch.Origins).
const (
	originPublisher = "publisher"
	originOSV       = "osv"
)

// merge adds to ev what the feeds know of the component in: the
// advisories match finds for its package at its installed version, merged
// with the publisher's (one advisory, many origins: the publisher's words
// stand, OSV's CVSS, aliases and references are added).
func (k *knowledge) merge(ev *release.Evaluation, in store.ComponentInput) {
	for i := range ev.Advisories {
		ev.Advisories[i].Origins = []string{originPublisher}
	}
	ev.Advisories, ev.Withdrawn = k.match(in.Package, in.InstalledVersion, true, ev.Releases, ev.Advisories, ev.Withdrawn)
}

// match is the one matcher of an npm package's version against what the
// feeds know, for a component and for every package of the installed tree
// alike (docs/feeds.md "The whole tree"): the OSV records of the package
// that affect version, each merged into the advisory of advisories it
// shares an id or an alias with (combine) or added, then KEV's and EPSS's
// facts of every advisory's CVEs (annotate). Withdrawn records that would
// affect it go to withdrawn instead. With weigh, releases are weighed
// against each record's own rules (which release clears it); the tree
// weighs none.
func (k *knowledge) match(name, version string, weigh bool, releases []release.ReleaseStatus,
	advisories, withdrawn []release.AdvisoryMatch) ([]release.AdvisoryMatch, []release.AdvisoryMatch) {
	for _, r := range k.osv[name] {
		m, ok, isWithdrawn := matchRecord(r, name, version)
		if !ok {
			continue
		}
		a := advisoryOf(r, m)
		if weigh {
			// Which releases it affects, by the record's own rules (its
			// versions list, its range events): the release that clears
			// it may come before its fixed version, or be named by none.
			a.Weigh(releases, func(rs *release.ReleaseStatus) bool {
				_, affects, _ := matchRecord(r, name, rs.Version)
				return affects
			})
		}
		if isWithdrawn {
			if !slices.ContainsFunc(withdrawn, func(w release.AdvisoryMatch) bool { return sharesKey(&w, &a) }) {
				withdrawn = append(withdrawn, a)
			}
			continue
		}
		if i := slices.IndexFunc(advisories, func(b release.AdvisoryMatch) bool { return sharesKey(&b, &a) }); i >= 0 {
			combine(&advisories[i], &a)
			continue
		}
		advisories = append(advisories, a)
	}
	for i := range advisories {
		k.annotate(&advisories[i])
	}
	return advisories, withdrawn
}

// matchRecord evaluates r for the npm package name at version; withdrawn
// says the record was withdrawn but would match.
func matchRecord(r *osv.Record, name, version string) (m osv.Match, ok, withdrawn bool) {
	if r.IsWithdrawn() {
		live := *r
		live.Withdrawn = time.Time{}
		m, ok, err := live.Match(npmEcosystem, name, version)
		return m, ok && err == nil, true
	}
	m, ok, err := r.Match(npmEcosystem, name, version)
	return m, ok && err == nil, false
}

// advisoryOf is an OSV record as an advisory of the component.
func advisoryOf(r *osv.Record, m osv.Match) release.AdvisoryMatch {
	a := release.AdvisoryMatch{
		Advisory: release.Advisory{
			ID: r.ID, Summary: r.Summary, Aliases: slices.Clone(r.Aliases), Modified: r.Modified, Withdrawn: r.Withdrawn,
			Affected: affectedText(r.Affected[m.Affected]), FixedIn: m.Fixed,
		},
		NoFix:     m.Fixed == "",
		Origins:   []string{originOSV},
		Malicious: r.Malicious(),
	}
	if a.Summary == "" {
		a.Summary = firstLine(r.Details)
	}
	if vector, ok := r.CVSS(); ok {
		if score, err := release.CVSSBaseScore(vector); err == nil {
			a.CVSS, a.CVSSScore = vector, score
		}
	}
	a.Severity = r.SeverityWord()
	if a.Severity == "" && a.CVSS != "" {
		a.Severity = release.CVSSRating(a.CVSSScore)
	}
	if a.Malicious && a.Severity == "" {
		a.Severity = "critical"
	}
	for _, ref := range r.References {
		a.References = append(a.References, release.Reference{Type: ref.Type, URL: ref.URL})
	}
	return a
}

// combine merges b, an OSV record's advisory, into a, the advisory it
// shares an id or an alias with: a's words (id, severity, summary,
// affected range, fix) stand where it has them; b's CVSS, aliases and
// references are added.
func combine(a, b *release.AdvisoryMatch) {
	for _, o := range b.Origins {
		if !slices.Contains(a.Origins, o) {
			a.Origins = append(a.Origins, o)
		}
	}
	keys := advisoryKeys(a.ID, a.Aliases)
	for _, alias := range append([]string{b.ID}, b.Aliases...) {
		if !slices.Contains(keys, strings.ToUpper(alias)) {
			a.Aliases = append(a.Aliases, alias)
			keys = append(keys, strings.ToUpper(alias))
		}
	}
	if a.CVSS == "" {
		a.CVSS, a.CVSSScore = b.CVSS, b.CVSSScore
	}
	if a.Severity == "" {
		a.Severity = b.Severity
	}
	if a.Summary == "" {
		a.Summary = b.Summary
	}
	if a.Affected == "" {
		a.Affected, a.FixedIn, a.NoFix = b.Affected, b.FixedIn, b.NoFix
	}
	for _, ref := range b.References {
		if !slices.Contains(a.References, ref) {
			a.References = append(a.References, ref)
		}
	}
	a.Malicious = a.Malicious || b.Malicious
	a.AffectAlso(b)
}

// sharesKey reports whether a and b name one advisory: an id or an alias
// in common, whatever the case.
func sharesKey(a, b *release.AdvisoryMatch) bool {
	keys := advisoryKeys(a.ID, a.Aliases)
	for _, k := range advisoryKeys(b.ID, b.Aliases) {
		if slices.Contains(keys, k) {
			return true
		}
	}
	return false
}

// annotate adds KEV's and EPSS's facts of a's CVEs: known exploited when
// KEV lists one of them, and the highest EPSS score among them.
func (k *knowledge) annotate(a *release.AdvisoryMatch) {
	a.KnownExploited, a.KEV, a.EPSS = false, nil, nil
	for _, key := range advisoryKeys(a.ID, a.Aliases) {
		if !strings.HasPrefix(key, "CVE-") {
			continue
		}
		if e, ok := k.kev[key]; ok && a.KEV == nil {
			a.KnownExploited = true
			a.KEV = &release.KEVFacts{CVE: key, DateAdded: e.DateAdded.Format(time.DateOnly),
				RequiredAction: e.RequiredAction, Ransomware: e.Ransomware}
			if e.DueDate != nil {
				a.KEV.DueDate = e.DueDate.Format(time.DateOnly)
			}
		}
		if s, ok := k.epss[key]; ok && (a.EPSS == nil || float64(s.Score) > a.EPSS.Score) {
			a.EPSS = &release.EPSSFacts{CVE: key, Score: float64(s.Score), Percentile: float64(s.Percentile)}
		}
	}
}

// affectedText writes an affected entry's ranges in the range syntax of
// the update document (docs/update-document.md), so that the pages word
// it as they word a publisher's: ">=1.0.0 <1.2.3 || >=2.0.0 <2.0.5". A
// versions list is written as its versions; an entry whose ranges this
// build does not order is "".
func affectedText(a osv.Affected) string {
	var alts []string
	for _, rg := range a.Ranges {
		if rg.Type != "SEMVER" && rg.Type != "ECOSYSTEM" {
			continue
		}
		alts = append(alts, rangeText(rg.Events)...)
	}
	const maxListed = 20
	for i, v := range a.Versions {
		if i == maxListed {
			break
		}
		if _, err := npmver.Parse(v); err == nil {
			alts = append(alts, v)
		}
	}
	return strings.Join(alts, " || ")
}

// rangeText writes one range's events as intervals, in version order.
func rangeText(events []osv.Event) []string {
	type point struct {
		v    *semver.Version // nil: "0", below every version
		kind string
	}
	var pts []point
	for _, e := range events {
		kind, text := "introduced", e.Introduced
		switch {
		case e.Fixed != "":
			kind, text = "fixed", e.Fixed
		case e.LastAffected != "":
			kind, text = "last_affected", e.LastAffected
		case e.Limit != "":
			kind, text = "limit", e.Limit
		}
		if text == "0" {
			pts = append(pts, point{kind: kind})
			continue
		}
		v, err := npmver.Parse(text)
		if err != nil {
			return nil
		}
		pts = append(pts, point{v: v, kind: kind})
	}
	slices.SortStableFunc(pts, func(a, b point) int {
		switch {
		case a.v == nil && b.v == nil:
			return 0
		case a.v == nil:
			return -1
		case b.v == nil:
			return 1
		}
		return a.v.Compare(b.v)
	})
	var out []string
	open, from := false, ""
	for _, p := range pts {
		switch p.kind {
		case "introduced":
			if !open {
				open, from = true, ""
				if p.v != nil {
					from = ">=" + p.v.Original()
				}
			}
		case "fixed", "limit", "last_affected":
			if !open {
				continue
			}
			op := "<"
			if p.kind == "last_affected" {
				op = "<="
			}
			out = append(out, strings.TrimSpace(from+" "+op+p.v.Original()))
			open = false
		}
	}
	if open {
		if from == "" {
			from = "*"
		}
		out = append(out, from)
	}
	return out
}

// firstLine is the first line of s, at most 200 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}
