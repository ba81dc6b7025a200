package osv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/jsonpos"
	"github.com/upcheck/upcheck/internal/release"
)

// The wire form: pointers tell a field that is absent from one that is
// empty, which the checks need. Unknown fields are ignored, as OSV asks.
type wireRecord struct {
	ID               *string         `json:"id"`
	Modified         *string         `json:"modified"`
	Published        *string         `json:"published"`
	Withdrawn        *string         `json:"withdrawn"`
	Aliases          []string        `json:"aliases"`
	Related          []string        `json:"related"`
	Summary          string          `json:"summary"`
	Details          string          `json:"details"`
	Severity         []wireSeverity  `json:"severity"`
	Affected         []wireAffected  `json:"affected"`
	References       []wireReference `json:"references"`
	DatabaseSpecific json.RawMessage `json:"database_specific"`
}

type wireAffected struct {
	Package           *wirePackage    `json:"package"`
	Severity          []wireSeverity  `json:"severity"`
	Ranges            []wireRange     `json:"ranges"`
	Versions          []string        `json:"versions"`
	EcosystemSpecific json.RawMessage `json:"ecosystem_specific"`
	DatabaseSpecific  json.RawMessage `json:"database_specific"`
}

type wirePackage struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	PURL      string `json:"purl"`
}

type wireRange struct {
	Type   *string     `json:"type"`
	Events []wireEvent `json:"events"`
}

type wireEvent struct {
	Introduced   *string `json:"introduced"`
	Fixed        *string `json:"fixed"`
	LastAffected *string `json:"last_affected"`
	Limit        *string `json:"limit"`
}

type wireSeverity struct {
	Type  string `json:"type"`
	Score string `json:"score"`
}

type wireReference struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Parse reads one OSV record. It is strict where a wrong answer would
// follow (id and modified are required, every event has exactly one kind,
// every version of an orderable range is one) and lenient where OSV is
// or real records need it (unknown fields are ignored, database_specific
// is kept raw, an empty fixed, last_affected or limit event is dropped). Every error
// wraps ErrMalformed and names the JSON path of the problem, e.g.
// `affected[0].ranges[1].events[2]: "fixed" is not a SemVer version`.
func Parse(data []byte) (*Record, error) {
	if len(data) > MaxRecordBytes {
		return nil, malformed("", "the record is %d bytes long, more than the %d allowed", len(data), MaxRecordBytes)
	}
	var w wireRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrMalformed, jsonpos.Describe(data, err, "the record"))
	}
	if line, col, ok := jsonpos.Trailing(data, dec.InputOffset()); ok {
		return nil, fmt.Errorf("%w: unexpected text after the record at line %d, column %d", ErrMalformed, line, col)
	}
	return w.record()
}

func (w *wireRecord) record() (*Record, error) {
	r := &Record{DatabaseSpecific: raw(w.DatabaseSpecific)}
	if w.ID == nil || strings.TrimSpace(*w.ID) == "" {
		return nil, malformed("id", "is required and must not be empty")
	}
	if len(*w.ID) > maxIDLength {
		return nil, malformed("id", "is %d bytes long, more than the %d allowed", len(*w.ID), maxIDLength)
	}
	r.Summary, _ = truncate(w.Summary, MaxSummaryBytes)
	r.ID = *w.ID
	if w.Modified == nil {
		return nil, malformed("modified", "is required")
	}
	var err error
	if r.Modified, err = parseTime("modified", *w.Modified); err != nil {
		return nil, err
	}
	if w.Published != nil {
		if r.Published, err = parseTime("published", *w.Published); err != nil {
			return nil, err
		}
	}
	if w.Withdrawn != nil {
		if r.Withdrawn, err = parseTime("withdrawn", *w.Withdrawn); err != nil {
			return nil, err
		}
	}
	if r.Aliases, err = ids("aliases", w.Aliases); err != nil {
		return nil, err
	}
	if r.Related, err = ids("related", w.Related); err != nil {
		return nil, err
	}
	r.Details, r.DetailsTruncated = truncate(w.Details, MaxDetailsBytes)
	if r.Severity, err = severities("severity", w.Severity); err != nil {
		return nil, err
	}
	if len(w.References) > MaxReferences {
		return nil, malformed("references", "has %d entries, more than the %d allowed", len(w.References), MaxReferences)
	}
	for i, ref := range w.References {
		if len(ref.URL) > maxURLLength || len(ref.Type) > maxNameLength {
			return nil, malformed(fmt.Sprintf("references[%d]", i), "is longer than the %d bytes allowed", maxURLLength)
		}
		r.References = append(r.References, Reference(ref))
	}
	if len(w.Affected) > MaxAffected {
		return nil, malformed("affected", "has %d entries, more than the %d allowed", len(w.Affected), MaxAffected)
	}
	for i := range w.Affected {
		a, err := w.Affected[i].affected(fmt.Sprintf("affected[%d]", i))
		if err != nil {
			return nil, err
		}
		r.Affected = append(r.Affected, a)
	}
	return r, nil
}

func (w *wireAffected) affected(path string) (Affected, error) {
	a := Affected{EcosystemSpecific: raw(w.EcosystemSpecific), DatabaseSpecific: raw(w.DatabaseSpecific)}
	if w.Package != nil {
		if w.Package.Ecosystem == "" || w.Package.Name == "" {
			return a, malformed(path+".package", "must have an ecosystem and a name")
		}
		if max(len(w.Package.Ecosystem), len(w.Package.Name), len(w.Package.PURL)) > maxNameLength {
			return a, malformed(path+".package", "has a name longer than the %d bytes allowed", maxNameLength)
		}
		a.Package, a.HasPackage = Package(*w.Package), true
	}
	var err error
	if a.Severity, err = severities(path+".severity", w.Severity); err != nil {
		return a, err
	}
	if len(w.Versions) > MaxVersions {
		return a, malformed(path+".versions", "has %d entries, more than the %d allowed", len(w.Versions), MaxVersions)
	}
	for i, v := range w.Versions {
		if v == "" || len(v) > maxVersionLength {
			return a, malformed(fmt.Sprintf("%s.versions[%d]", path, i), "must be a version of 1 to %d characters", maxVersionLength)
		}
	}
	a.Versions = w.Versions
	if len(w.Ranges) > MaxRanges {
		return a, malformed(path+".ranges", "has %d entries, more than the %d allowed", len(w.Ranges), MaxRanges)
	}
	for i := range w.Ranges {
		rg, err := w.Ranges[i].rangeOf(fmt.Sprintf("%s.ranges[%d]", path, i), a.Package.Ecosystem)
		if err != nil {
			return a, err
		}
		a.Ranges = append(a.Ranges, rg)
	}
	return a, nil
}

func (w *wireRange) rangeOf(path, ecosystem string) (Range, error) {
	if w.Type == nil || *w.Type == "" {
		return Range{}, malformed(path+".type", "is required")
	}
	rg := Range{Type: *w.Type}
	if len(w.Events) == 0 {
		return rg, malformed(path+".events", "must list at least one event")
	}
	if len(w.Events) > MaxEvents {
		return rg, malformed(path+".events", "has %d entries, more than the %d allowed", len(w.Events), MaxEvents)
	}
	introduced := false
	for i, we := range w.Events {
		epath := fmt.Sprintf("%s.events[%d]", path, i)
		kind, value, n := we.only()
		if n != 1 {
			return rg, malformed(epath, "must have exactly one of introduced, fixed, last_affected and limit, not %d", n)
		}
		if value == "" && kind != "introduced" {
			// GitHub's conversion writes {"fixed": ""} for "no patched
			// version" (GHSA-226w-6hhj-69hp); dropping the event reads it
			// as it means, and errs towards affected, never away from it.
			continue
		}
		if value == "" || len(value) > maxVersionLength {
			return rg, malformed(epath, "%q must be a version of 1 to %d characters", kind, maxVersionLength)
		}
		if err := checkVersion(rg.Type, ecosystem, kind, value); err != nil {
			return rg, malformed(epath, "%q %v", kind, err)
		}
		introduced = introduced || kind == "introduced"
		rg.Events = append(rg.Events, we.event())
	}
	if !introduced {
		return rg, malformed(path+".events", "must have an introduced event")
	}
	if orderable(rg.Type, ecosystem) {
		rg.sorted = points(rg.Events)
	}
	return rg, nil
}

func (w wireEvent) only() (kind, value string, n int) {
	for _, f := range []struct {
		kind  string
		value *string
	}{{"introduced", w.Introduced}, {"fixed", w.Fixed}, {"last_affected", w.LastAffected}, {"limit", w.Limit}} {
		if f.value != nil {
			kind, value, n = f.kind, *f.value, n+1
		}
	}
	return kind, value, n
}

func (w wireEvent) event() Event {
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return Event{Introduced: deref(w.Introduced), Fixed: deref(w.Fixed), LastAffected: deref(w.LastAffected), Limit: deref(w.Limit)}
}

// checkVersion says whether value can be ordered in a range of the type:
// SEMVER ranges hold SemVer 2.0 versions (no leading "v"), ECOSYSTEM ranges
// of npm hold npm's versions, which are SemVer too; "0" is the introduced
// version before all others and a limit containing "*" is infinity. Other
// ecosystems' ECOSYSTEM versions and GIT commits are kept unchecked: this
// package does not order them.
func checkVersion(rangeType, ecosystem, kind, value string) error {
	switch {
	case rangeType == RangeSemver, rangeType == RangeEcosystem && ecosystem == EcosystemNPM:
	default:
		return nil
	}
	if kind == "introduced" && value == "0" || kind == "limit" && strings.Contains(value, "*") {
		return nil
	}
	if _, err := release.ParseVersion(value); err != nil {
		return fmt.Errorf("is not a SemVer version: %q", value)
	}
	return nil
}

func severities(path string, in []wireSeverity) ([]Severity, error) {
	if len(in) > MaxSeverities {
		return nil, malformed(path, "has %d entries, more than the %d allowed", len(in), MaxSeverities)
	}
	var out []Severity
	for i, s := range in {
		if s.Type == "" || s.Score == "" {
			return nil, malformed(fmt.Sprintf("%s[%d]", path, i), "must have a type and a score")
		}
		if len(s.Type) > maxNameLength || len(s.Score) > maxNameLength {
			return nil, malformed(fmt.Sprintf("%s[%d]", path, i), "is longer than the %d bytes allowed", maxNameLength)
		}
		out = append(out, Severity(s))
	}
	return out, nil
}

func ids(path string, in []string) ([]string, error) {
	if len(in) > MaxAliases {
		return nil, malformed(path, "has %d entries, more than the %d allowed", len(in), MaxAliases)
	}
	for i, id := range in {
		if strings.TrimSpace(id) == "" || len(id) > maxIDLength {
			return nil, malformed(fmt.Sprintf("%s[%d]", path, i), "must be an id of 1 to %d bytes", maxIDLength)
		}
	}
	return in, nil
}

// parseTime reads an RFC 3339 time. OSV asks for UTC with a "Z"; any
// offset is accepted and converted, as a reader should. A time before
// 1970 is no record's (and year 1 would read as "absent").
func parseTime(path, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 {
		return time.Time{}, malformed(path, "must be an RFC 3339 time, not %q", s)
	}
	return t.UTC(), nil
}

func truncate(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// raw keeps a JSON value as read; an absent or null one is nil.
func raw(m json.RawMessage) json.RawMessage {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return m
}

func malformed(path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path == "" {
		return fmt.Errorf("%w: %s", ErrMalformed, msg)
	}
	return fmt.Errorf("%w: %s: %s", ErrMalformed, path, msg)
}
