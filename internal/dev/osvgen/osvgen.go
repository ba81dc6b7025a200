// Package osvgen makes OSV records of npm packages in the shapes of real
// ones (GHSA advisories with CVE aliases, CVSS vectors, ECOSYSTEM or SEMVER
// ranges and references; MAL records of the malicious-packages project
// with their origins), and writes the files the advisory feeds publish: an
// ecosystem archive (a zip of ID.json entries), its modified_id.csv, a
// known-exploited catalogue and a daily exploit-probability CSV.
//
// Everything is deterministic from a seed, so a bench, a crash test and
// the demo can make the same records twice, and the same archive bytes.
// Records are made one at a time: an archive of 200,000 records is written
// without holding them.
package osvgen

import (
	"encoding/json"
	"fmt"
	"iter"
	"math/bits"
	"math/rand/v2"
	"strings"
	"time"
)

// Kinds of records Record makes.
const (
	KindVuln    = "vuln"    // a GHSA advisory with a CVE alias
	KindMalware = "malware" // a MAL record of the malicious-packages project
)

// Spec says which records Records makes.
type Spec struct {
	N        int      // how many records
	Seed     int64    // the same seed makes the same records
	Packages []string // package names every one of which some record covers; the others are made up
	MalShare float64  // the share of MAL records, 0 to 1
}

// epoch is the newest modified time a generated record can have.
var epoch = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// osvRecord is an OSV record with its fields in the order real ones have.
type osvRecord struct {
	SchemaVersion    string         `json:"schema_version"`
	ID               string         `json:"id"`
	Modified         string         `json:"modified"`
	Published        string         `json:"published"`
	Withdrawn        string         `json:"withdrawn,omitempty"`
	Aliases          []string       `json:"aliases,omitempty"`
	Summary          string         `json:"summary"`
	Details          string         `json:"details"`
	Severity         []severity     `json:"severity,omitempty"`
	Affected         []affected     `json:"affected"`
	References       []reference    `json:"references,omitempty"`
	Credits          []credit       `json:"credits,omitempty"`
	DatabaseSpecific map[string]any `json:"database_specific"`
}

type severity struct {
	Type  string `json:"type"`
	Score string `json:"score"`
}

type affected struct {
	Package          pkg            `json:"package"`
	Ranges           []osvRange     `json:"ranges,omitempty"`
	Versions         []string       `json:"versions,omitempty"`
	DatabaseSpecific map[string]any `json:"database_specific,omitempty"`
}

type pkg struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Purl      string `json:"purl,omitempty"`
}

type osvRange struct {
	Type   string           `json:"type"`
	Events []map[string]any `json:"events"`
}

type reference struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type credit struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Contact []string `json:"contact,omitempty"`
}

// Records makes s.N records, yielding each id with its JSON bytes. The
// same Spec yields the same bytes.
func Records(s Spec) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for i := range s.N {
			r := generate(s, i)
			if !yield(r.ID, marshal(r)) {
				return
			}
		}
	}
}

// CVEs is the CVE aliases of the records Records(s) makes, in their order:
// what a test lists in a known-exploited catalogue or scores in an EPSS file.
func CVEs(s Spec) []string {
	var out []string
	for i := range s.N {
		for _, a := range generate(s, i).Aliases {
			if strings.HasPrefix(a, "CVE-") {
				out = append(out, a)
			}
		}
	}
	return out
}

// Record is one record for a test: kind KindVuln (a GHSA advisory, with
// aliases as given) or KindMalware (a MAL record); introduced "" means "0"
// (every version); fixed "" means no fix. Its modified time is fixed, so
// the same arguments make the same bytes.
func Record(id, pkgName, kind, introduced, fixed string, aliases ...string) []byte {
	rng := rand.New(rand.NewPCG(uint64(len(id)), hash(id+pkgName)))
	if introduced == "" {
		introduced = "0"
	}
	var r osvRecord
	if kind == KindMalware {
		r = malRecord(rng, id, pkgName, events(introduced, fixed))
	} else {
		r = ghsaRecord(rng, id, pkgName, "")
		r.Affected[0].Ranges = []osvRange{{Type: "SEMVER", Events: events(introduced, fixed)}}
	}
	r.Aliases = append([]string{}, aliases...)
	return marshal(r)
}

// events are a range's events: introduced, then fixed when there is one.
func events(introduced, fixed string) []map[string]any {
	ev := []map[string]any{{"introduced": introduced}}
	if fixed != "" {
		ev = append(ev, map[string]any{"fixed": fixed})
	}
	return ev
}

func marshal(r osvRecord) []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("osvgen: a generated record does not marshal: %v", err)) // our own types: cannot happen
	}
	return append(b, '\n')
}

func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// generate makes record i of s, from a generator of its own (so any record
// can be made without the ones before it).
func generate(s Spec, i int) osvRecord {
	rng := rand.New(rand.NewPCG(uint64(s.Seed), uint64(i)))
	var name string
	switch {
	case i < len(s.Packages):
		name = s.Packages[i]
	case len(s.Packages) > 0 && rng.IntN(10) == 0:
		name = s.Packages[rng.IntN(len(s.Packages))]
	default:
		name = madeUpName(rng)
	}
	if rng.Float64() < s.MalShare {
		return malRecord(rng, fmt.Sprintf("MAL-%d-%d", 2022+i%4, i+1), name, nil)
	}
	// GHSA ids: a bijection of i (an odd multiplier prime to 20) in the
	// GHSA alphabet, so that no two records share one.
	const ids = 4096000000000000 // 20^12
	hi, lo := bits.Mul64(uint64(i), 2862933555777941)
	n := (bits.Rem64(hi, lo, ids) + uint64(s.Seed)%ids) % ids
	return ghsaRecord(rng, ghsaID(n), name, fmt.Sprintf("CVE-%d-%d", 2019+i%8, 10000+i))
}

const ghsaAlphabet = "23456789cfghjmpqrvwx"

func ghsaID(n uint64) string {
	var b [12]byte
	for k := range b {
		b[k] = ghsaAlphabet[n%20]
		n /= 20
	}
	return "GHSA-" + string(b[0:4]) + "-" + string(b[4:8]) + "-" + string(b[8:12])
}

// times are a record's published and modified times, before epoch.
func times(rng *rand.Rand) (published, modified time.Time) {
	modified = epoch.Add(-time.Duration(rng.Int64N(int64(4 * 365 * 24 * time.Hour)))).Truncate(time.Second)
	published = modified.Add(-time.Duration(rng.Int64N(int64(400 * 24 * time.Hour)))).Truncate(time.Second)
	return published, modified
}

// ghsaRecord is a reviewed GHSA advisory of an npm package, as GitHub's
// advisory database exports it; cve "" means no CVE alias.
func ghsaRecord(rng *rand.Rand, id, name, cve string) osvRecord {
	published, modified := times(rng)
	w := weaknesses[rng.IntN(len(weaknesses))]
	intro, fixed := versionPair(rng)
	rangeType := "ECOSYSTEM" // what GitHub's database writes for npm; some exporters write SEMVER
	if rng.IntN(4) == 0 {
		rangeType = "SEMVER"
	}
	ev := events(intro, fixed)
	var lastAffected string
	if rng.IntN(8) == 0 { // no fix: the last affected version is known
		lastAffected = fixed
		ev = []map[string]any{{"introduced": intro}, {"last_affected": fixed}}
	}
	var aliases []string
	if cve != "" {
		aliases = []string{cve}
	}
	r := osvRecord{
		SchemaVersion: "1.4.0", ID: id,
		Modified: modified.Format(time.RFC3339), Published: published.Format(time.RFC3339),
		Aliases:  aliases,
		Summary:  fmt.Sprintf("%s %s", name, w.summary),
		Details:  details(rng, name, w, fixed, lastAffected),
		Severity: []severity{{Type: "CVSS_V3", Score: w.vector}},
		Affected: []affected{{
			Package:          pkg{Ecosystem: "npm", Name: name},
			Ranges:           []osvRange{{Type: rangeType, Events: ev}},
			DatabaseSpecific: map[string]any{"source": "https://github.com/github/advisory-database/blob/main/advisories/github-reviewed/" + published.Format("2006/01") + "/" + id + "/" + id + ".json"},
		}},
		References: []reference{
			{Type: "ADVISORY", URL: "https://advisories.example/" + id},
			{Type: "PACKAGE", URL: "https://github.com/" + strings.TrimPrefix(strings.ReplaceAll(name, "@", ""), "/") + "/" + lastPart(name)},
		},
		DatabaseSpecific: map[string]any{
			"cwe_ids": []string{w.cwe}, "severity": w.severity, "github_reviewed": true,
			"github_reviewed_at": published.Add(2 * time.Hour).Format(time.RFC3339),
		},
	}
	if cve != "" {
		r.References = append([]reference{{Type: "ADVISORY", URL: "https://nvd.nist.gov/vuln/detail/" + cve}}, r.References...)
		r.DatabaseSpecific["nvd_published_at"] = published.Add(-26 * time.Hour).Format(time.RFC3339)
	}
	switch rng.IntN(10) {
	case 0: // a second package of the same code, as lodash and lodash-es
		twin := r.Affected[0]
		twin.Package.Name = name + "-es"
		r.Affected = append(r.Affected, twin)
	case 1: // two release lines, each fixed in its own release
		if lastAffected == "" && intro != "0" && intro != "0.0.0" {
			r.Affected[0].Ranges[0].Events = append(events("0", olderLine(intro)), ev...)
		}
	}
	if fixed != "" && lastAffected == "" {
		r.References = append(r.References, reference{Type: "WEB", URL: "https://github.com/" + strings.ReplaceAll(name, "@", "") + "/releases/tag/v" + fixed})
	}
	return r
}

// malRecord is a record of the malicious-packages project, with the
// origins that reported it: of the range with events ev, or when ev is nil
// of every version (introduced "0") or of one listed version.
func malRecord(rng *rand.Rand, id, name string, ev []map[string]any) osvRecord {
	published, modified := times(rng)
	source, reason := malSources[rng.IntN(len(malSources))], malReasons[rng.IntN(len(malReasons))]
	sum := fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
	origin := map[string]any{
		"import_time":   modified.Add(19 * time.Minute).Format(time.RFC3339Nano),
		"modified_time": modified.Format(time.RFC3339), "sha256": sum, "source": source,
	}
	a := affected{Package: pkg{Ecosystem: "npm", Name: name}}
	detail := fmt.Sprintf("'%s' (npm)", name)
	if ev == nil && rng.IntN(3) == 0 {
		v := fmt.Sprintf("%d.%d.%d", rng.IntN(5), rng.IntN(10), rng.IntN(10))
		a.Versions = []string{v}
		origin["versions"] = []string{v}
		detail = fmt.Sprintf("'%s' @ %s (npm)", name, v)
	} else {
		if ev == nil {
			ev = events("0", "")
		}
		a.Ranges = []osvRange{{Type: "SEMVER", Events: ev}}
		origin["ranges"] = a.Ranges
	}
	return osvRecord{
		SchemaVersion: "1.5.0", ID: id,
		Modified: modified.Format(time.RFC3339), Published: published.Format(time.RFC3339),
		Summary: fmt.Sprintf("Malicious code in %s (npm)", name),
		Details: fmt.Sprintf("\n---\n_-= Per source details. Do not edit below this line.=-_\n\n## Source: %s (%s)\n"+
			"The package %s was identified as malicious.\n\nIt is considered malicious because:\n\n- %s\n", source, sum, detail, reason),
		Affected:         []affected{a},
		Credits:          []credit{{Name: "OpenSSF: Package Analysis", Type: "FINDER", Contact: []string{"https://github.com/ossf/package-analysis"}}},
		DatabaseSpecific: map[string]any{"malicious-packages-origins": []any{origin}},
	}
}

// olderLine is a fix of the release line before introduced ("x.y.0"):
// "x.(y-1).9", or "(x-1).9.9" when y is 0, or "0.0.1" below 1.0.0.
func olderLine(introduced string) string {
	var major, minor int
	fmt.Sscanf(introduced, "%d.%d.", &major, &minor) //nolint:errcheck // versionPair made it
	switch {
	case minor > 0:
		return fmt.Sprintf("%d.%d.9", major, minor-1)
	case major > 0:
		return fmt.Sprintf("%d.9.9", major-1)
	}
	return "0.0.1"
}

func lastPart(name string) string { return name[strings.LastIndex(name, "/")+1:] }
