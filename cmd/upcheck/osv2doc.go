package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// `upcheck publisher osv2doc --package NAME FILE…` turns OSV records
// (https://ossf.github.io/osv-schema/) into the advisories of package NAME
// of an update document, printed as a "packages" object:
// {"NAME": {"advisories": [...]}}. What cannot be said in format 1 is
// refused with the record and the reason, never guessed.

// docReference is a reference as format 1 writes it.
type docReference struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// docAdvisory is an advisory as format 1 writes it.
type docAdvisory struct {
	ID         string         `json:"id"`
	Aliases    []string       `json:"aliases,omitempty"`
	CVSS       string         `json:"cvss,omitempty"`
	Affected   string         `json:"affected"`
	FixedIn    string         `json:"fixed_in,omitempty"`
	Summary    string         `json:"summary,omitempty"`
	URL        string         `json:"url,omitempty"`
	Modified   string         `json:"modified,omitempty"`
	Withdrawn  string         `json:"withdrawn,omitempty"`
	References []docReference `json:"references,omitempty"`
}

func runOSV2Doc(args []string, stdout, stderr io.Writer) error {
	var pkg string
	rest, err := parseFlags("publisher osv2doc", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&pkg, "package", "", "the package (component code) of the document the advisories are for")
	})
	if err != nil {
		return err
	}
	if pkg == "" || len(rest) == 0 {
		fmt.Fprintln(stderr, "upcheck publisher osv2doc: want --package NAME and at least one OSV FILE")
		return errUsage
	}
	advisories := make([]docAdvisory, 0, len(rest))
	for _, path := range rest {
		body, err := readCapped(path, maxDocument)
		if err != nil {
			return err
		}
		a, err := osvToAdvisory(body, pkg, stderr)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		advisories = append(advisories, a)
	}
	packages := map[string]any{pkg: map[string]any{"advisories": advisories}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // ranges hold < and >
	enc.SetIndent("", "  ")
	if err := enc.Encode(packages); err != nil {
		return err
	}
	out := bytes.TrimSpace(buf.Bytes())
	// Print only what upcheck would read: the advisories placed in a
	// document must parse (this also catches a reference URL that the
	// document's URL rules refuse, and repeated ids).
	probe := fmt.Appendf(nil, `{"format": 1, "publisher": "osv2doc", "sequence": 0, "packages": %s}`, out)
	if _, err := updatedoc.Parse(probe); err != nil {
		return fmt.Errorf("the advisories would not make a valid document: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// osvToAdvisory converts one OSV record, read as the feeds read it
// (osv.Parse: the same caps, the same JSON paths in its errors); notes
// about what it leaves out go to stderr.
func osvToAdvisory(body []byte, pkg string, stderr io.Writer) (docAdvisory, error) {
	r, err := osv.Parse(body)
	if err != nil {
		return docAdvisory{}, fmt.Errorf("not an OSV record: %w", err)
	}
	a := docAdvisory{ID: r.ID, Modified: r.Modified.Format(time.RFC3339Nano), Summary: r.Summary}
	if r.IsWithdrawn() {
		a.Withdrawn = r.Withdrawn.Format(time.RFC3339Nano)
	}
	if a.Summary == "" {
		a.Summary = firstLine(r.Details, 200)
	}
	for _, alias := range r.Aliases {
		if alias != r.ID && !slices.Contains(a.Aliases, alias) {
			a.Aliases = append(a.Aliases, alias)
		}
	}
	for _, ref := range r.References {
		a.References = append(a.References, docReference(ref))
		if ref.Type == "ADVISORY" && a.URL == "" {
			a.URL = ref.URL
		}
	}
	affected, err := pickAffected(r, pkg)
	if err != nil {
		return docAdvisory{}, fmt.Errorf("%s: %w", r.ID, err)
	}
	a.CVSS = pickVector(r, affected, stderr)
	if a.Affected, a.FixedIn, err = convertRanges(affected); err != nil {
		return docAdvisory{}, fmt.Errorf("%s: %w", r.ID, err)
	}
	return a, nil
}

// pickAffected chooses the record's affected entries for package pkg:
// those whose package name is pkg (ignoring case), or the record's only
// entry when none is.
func pickAffected(r *osv.Record, pkg string) ([]osv.Affected, error) {
	var named []osv.Affected
	var names []string
	for _, af := range r.Affected {
		if !af.HasPackage {
			continue
		}
		names = append(names, af.Package.Name)
		if strings.EqualFold(af.Package.Name, pkg) {
			named = append(named, af)
		}
	}
	switch {
	case len(named) > 0:
		return named, nil
	case len(r.Affected) == 1:
		return r.Affected, nil
	case len(r.Affected) == 0:
		return nil, errors.New("the record lists no affected package")
	}
	return nil, fmt.Errorf("the record affects several packages (%s) and none is named %q: convert it with --package set to one of them",
		strings.Join(names, ", "), pkg)
}

// pickVector is the record's CVSS vector as the feeds choose it
// (osv.Record.CVSS: the record's own severity before its affected
// entries', the highest CVSS version first), when format 1 can hold it: a
// v2 vector or another scale is left out, with a note.
func pickVector(r *osv.Record, affected []osv.Affected, stderr io.Writer) string {
	if v, ok := r.CVSS(); ok && (strings.HasPrefix(v, "CVSS:3.") || strings.HasPrefix(v, "CVSS:4.")) {
		return v
	}
	all := slices.Clone(r.Severity)
	for _, af := range affected {
		all = append(all, af.Severity...)
	}
	for _, s := range all {
		fmt.Fprintf(stderr, "osv2doc: %s: severity %s %q left out: format 1 holds CVSS v3.0, v3.1 and v4.0 vectors only\n", r.ID, s.Type, s.Score)
	}
	return ""
}

// rangeEvent is one OSV event with its version parsed.
type rangeEvent struct {
	kind string // introduced, fixed, last_affected
	text string
	v    *semver.Version // nil: introduced "0", before every version
}

// convertRanges turns the SEMVER and ECOSYSTEM ranges of the entries into
// one range (their union, as OSV means it) and the fixed version: the
// newest "fixed" event, when the last interval ends with it. GIT ranges
// name commits, not versions, and are left out; a record with no other
// range, a "limit" event or a version that is not a strict semantic
// version is refused.
func convertRanges(affected []osv.Affected) (rng, fixedIn string, err error) {
	var parts []string
	var lastFixed *rangeEvent
	var sawGit bool
	for _, af := range affected {
		for _, r := range af.Ranges {
			switch r.Type {
			case osv.RangeGit:
				sawGit = true
				continue
			case osv.RangeSemver, osv.RangeEcosystem:
			default:
				return "", "", fmt.Errorf("a range of type %q cannot be read as versions", r.Type)
			}
			events, err := parseEvents(r)
			if err != nil {
				return "", "", err
			}
			ps, fixed := intervals(events)
			parts = append(parts, ps...)
			if fixed != nil && (lastFixed == nil || fixed.v.GreaterThan(lastFixed.v)) {
				lastFixed = fixed
			}
		}
	}
	if len(parts) == 0 {
		if sawGit {
			return "", "", errors.New("its only ranges are GIT ranges, which name commits, not versions: format 1 cannot express them")
		}
		return "", "", errors.New("it has no SEMVER or ECOSYSTEM range (a list of versions alone is not converted)")
	}
	rng = strings.Join(parts, " || ")
	parsed, err := release.ParseRange(rng)
	if err != nil {
		return "", "", fmt.Errorf("the ranges make %q: %w", rng, err)
	}
	if lastFixed != nil && !parsed.Contains(lastFixed.v) {
		fixedIn = lastFixed.text
	}
	return parsed.String(), fixedIn, nil
}

func parseEvents(r osv.Range) ([]rangeEvent, error) {
	var events []rangeEvent
	for _, e := range r.Events {
		// osv.Parse left exactly one kind set in each event.
		var ev rangeEvent
		switch {
		case e.Limit != "":
			return nil, fmt.Errorf("its %s range has a \"limit\" event, which format 1 cannot express", r.Type)
		case e.Introduced != "":
			ev = rangeEvent{kind: "introduced", text: e.Introduced}
		case e.Fixed != "":
			ev = rangeEvent{kind: "fixed", text: e.Fixed}
		case e.LastAffected != "":
			ev = rangeEvent{kind: "last_affected", text: e.LastAffected}
		default:
			continue
		}
		if !(ev.kind == "introduced" && ev.text == "0") {
			v, err := release.ParseVersion(ev.text)
			if err != nil {
				return nil, fmt.Errorf("%s version %q of its %s range is not a strict semantic version, which format 1 needs", ev.kind, ev.text, r.Type)
			}
			ev.v = v
		}
		events = append(events, ev)
	}
	// OSV's events are read in version order, whatever their order in the
	// record; "introduced: 0" comes first.
	slices.SortStableFunc(events, func(a, b rangeEvent) int {
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
	return events, nil
}

// intervals walks the sorted events as OSV's evaluation does: introduced
// opens an interval, fixed closes it before its version, last_affected
// after. It returns each interval in range syntax and the "fixed" event
// closing the last one (nil when the last interval is open or ends with
// last_affected).
func intervals(events []rangeEvent) (parts []string, fixed *rangeEvent) {
	open, from := false, ""
	for i := range events {
		e := &events[i]
		switch {
		case e.kind == "introduced" && !open:
			open, fixed = true, nil
			from = ""
			if e.v != nil {
				from = ">=" + e.text
			}
		case e.kind == "fixed" && open:
			open, fixed = false, e
			parts = append(parts, strings.TrimSpace(from+" <"+e.text))
		case e.kind == "last_affected" && open:
			open, fixed = false, nil
			parts = append(parts, strings.TrimSpace(from+" <="+e.text))
		}
	}
	if open {
		fixed = nil
		if from == "" {
			from = "*"
		}
		parts = append(parts, from)
	}
	return parts, fixed
}

// firstLine is the first line of s, cut at max runes.
func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
