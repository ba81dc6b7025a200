package updatedoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/upcheck/upcheck/internal/release"
)

// FuzzParse feeds Parse arbitrary bytes. Parse must never panic and must
// refuse with Lint's first problem exactly when Lint finds any; what it
// accepts must evaluate without panicking or failing for every package and a
// spread of installed versions, obey the evaluation's own invariants, and
// survive a round trip through its JSON form.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		body, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	for _, s := range []string{
		``,
		`null`,
		`{"format": 1}`,
		`{"format": 2}`,
		`{"format": 1, "publisher": "p", "sequence": 0, "packages": {}}`,
		`{"format": 1, "publisher": "p", "sequence": 0, "packages": {"a": {"releases": [{"version": "1.0.0-rc.1", "requires_core": "1.x || >=3.0.0-0"}], "advisories": [{"id": "x", "affected": "~1.0.0", "fixed_in": "2.0.0"}]}}}`,
		`{"format": 1, "publisher": "p", "sequence": 0, "packages": {"a": {}, "a": {}}}`,
		`{"format": 1, "publisher": "p", "sequence": 0, "packages": {}} {}`,
		`{"format":1,"publisher":"p","sequence":9223372036854775807,"expires":"9999-12-31T23:59:59.999999999+23:59","packages":{}}`,
	} {
		f.Add([]byte(s))
	}

	installs := []string{"0.0.0", "0.0.0-0", "1.0.0", "1.9.0", "2.3.0-beta.1", "2.4.0", "18446744073709551615.0.0"}
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := Parse(body)
		problems := Lint(body)
		if (err == nil) != (problems == nil) {
			t.Fatalf("Parse error %v but Lint %v: one set of rules must agree", err, problems)
		}
		if err != nil {
			if doc != nil {
				t.Fatal("Parse returned a document with an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse error %q does not wrap ErrInvalid", err)
			}
			if problems[0].Message != err.Error() {
				t.Fatalf("Lint's first problem %q is not Parse's error %q", problems[0].Message, err)
			}
			for _, p := range problems {
				if !errors.Is(p.err, ErrInvalid) || p.Line < 0 || p.Column < 0 || (p.Line == 0) != (p.Column == 0) {
					t.Fatalf("problem %+v", p)
				}
			}
			return
		}

		if hasCaseCollision(body) {
			t.Fatal("Parse accepted an object with two members whose names are equal ignoring case")
		}

		for code, pkg := range doc.Packages {
			versions := slices.Clone(installs)
			for i, r := range pkg.Releases {
				if i == 5 {
					break
				}
				versions = append(versions, r.Version)
			}
			for _, installed := range versions {
				for _, core := range []string{"1.0.0", "2.0.0-rc.1"} {
					checkEvaluation(t, doc, code, installed, core)
					checkEvaluation(t, doc, release.CoreCode, installed, core)
				}
			}
		}

		// What Parse accepted, re-encoded, is accepted again and means the
		// same: validation does not depend on spelling Parse threw away.
		again, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("marshal a parsed document: %v", err)
		}
		doc2, err := Parse(again)
		if err != nil {
			t.Fatalf("re-parsing a parsed document: %v\n%s", err, again)
		}
		again2, err := json.Marshal(doc2)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(again2) {
			t.Fatalf("round trip changed the document:\n%s\n%s", again, again2)
		}
	})
}

// hasCaseCollision reports whether some object in body has two members
// whose names strings.EqualFold calls equal. It compares every pair, apart
// from the member check's folding, so that the two check each other.
func hasCaseCollision(body []byte) bool {
	type frame struct {
		object, wantName bool
		names            []string
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false // the end: Parse has already refused anything else
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].wantName = stack[len(stack)-1].object
			}
			continue
		}
		if top != nil && top.wantName {
			name, _ := tok.(string)
			for _, earlier := range top.names {
				if strings.EqualFold(earlier, name) {
					return true
				}
			}
			top.names = append(top.names, name)
			top.wantName = false
			continue
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{object: d == '{', wantName: d == '{'})
			continue
		}
		if top != nil {
			top.wantName = top.object
		}
	}
}

// checkEvaluation evaluates and checks what must hold for any document.
func checkEvaluation(t *testing.T, doc *Document, code, installed, core string) {
	t.Helper()
	ev, err := Evaluate(doc, code, installed, core)
	if err != nil {
		t.Fatalf("Evaluate(%q, %q, %q) on a parsed document: %v", code, installed, core, err)
	}
	inst := mustVersion(t, installed)
	if ev.UpdateAvailable != (ev.Update != nil) {
		t.Fatalf("UpdateAvailable %v with Update %v", ev.UpdateAvailable, ev.Update)
	}
	if ev.NeedsNewerCore != (ev.BlockedUpdate != nil) {
		t.Fatalf("NeedsNewerCore %v with BlockedUpdate %v", ev.NeedsNewerCore, ev.BlockedUpdate)
	}
	if pkg := doc.Packages[code]; pkg != nil && len(ev.Releases) != len(pkg.Releases) {
		t.Fatalf("%d release statuses for %d releases", len(ev.Releases), len(pkg.Releases))
	}
	if ev.SecurityNeedsNewerCore && !ev.Security {
		t.Fatal("SecurityNeedsNewerCore without Security")
	}
	if ev.Update != nil {
		u := mustVersion(t, ev.Update.Version)
		if !u.GreaterThan(inst) {
			t.Fatalf("update %s is not greater than installed %s", u, inst)
		}
		if ev.Latest == nil || mustVersion(t, ev.Latest.Version).LessThan(u) {
			t.Fatalf("latest %v is older than update %s", ev.Latest, u)
		}
		if ev.BlockedUpdate != nil && !mustVersion(t, ev.BlockedUpdate.Version).GreaterThan(u) {
			t.Fatalf("blocked update %s is not newer than update %s", ev.BlockedUpdate.Version, u)
		}
	}
	if code == release.CoreCode && ev.NeedsNewerCore {
		t.Fatal("the core needs a newer core")
	}
	for _, a := range ev.Advisories {
		if a.NoFix != (a.FixedIn == "" && a.ClearedBy == "") {
			t.Fatalf("NoFix %v with fixed_in %q, cleared by %q", a.NoFix, a.FixedIn, a.ClearedBy)
		}
	}
}

// simpleRange matches a single comparison with a full version, the forms
// whose meaning needs no interpretation: a plain comparison in the version
// order, pre-releases included.
var simpleRange = regexp.MustCompile(`^(<|<=|>|>=)([^ ,|<>=~^]+)$`)

// partialRange matches a single comparison with a partial version of one
// or two numbers ("<=2.4", "!=2", "2.4.x"), small enough not to overflow.
var partialRange = regexp.MustCompile(`^(<|<=|>|>=|=|!=)?(0|[1-9][0-9]{0,8})(?:\.(0|[1-9][0-9]{0,8}))?(?:\.[xX*])?$`)

// Where Range deliberately departs from the library's Check on releases:
// versions that start with a wildcard ("*", ">=x", "^*"), which the library
// reads as 0.0.0 in places, and tilde on 0.0.0, which the library reads as
// every version and npm as 0.0.x.
var (
	leadingWildcard = regexp.MustCompile(`(^|[^0-9A-Za-z.+-])v?[xX*]`)
	tildeZero       = regexp.MustCompile(`~>?\s*v?0+\.0+\.0+([^0-9]|$)`)
)

// FuzzRange checks that ParseRange and Contains never panic, that a single
// comparison agrees with comparing versions directly, that a comparison
// with a partial version follows the prefix rule of the guide, and that
// Range accepts what the library accepts and agrees with it on releases
// except where it means to differ.
func FuzzRange(f *testing.F) {
	for _, seed := range [][2]string{
		{"<2.4.0", "2.3.0-beta.1"},
		{"<2.4.0", "2.4.0-beta.1"},
		{">=1.8.0", "1.8.0-rc.1"},
		{">1.8.0", "1.8.0+build"},
		{"<=2.0.0-rc.2", "2.0.0-rc.10"},
		{">=1.0.0, <2.4.0", "2.0.0-alpha"},
		{">=1.0.0 <2.4.0 || 3.x", "3.1.0-rc.1"},
		{"1.2.x", "1.3.0-beta.1"},
		{"~1.2.3", "1.2.4"},
		{"^0.0.3", "0.0.3"},
		{"1.2.0 - 1.4.0", "1.4.0"},
		{"!=1.2.3", "1.2.3-0"},
		{"*", "0.0.0-0"},
		{"", "1.0.0"},
		{">=18446744073709551615.0.0", "18446744073709551615.0.0"},
		{"<=2.4", "2.4.7"},
		{">2.4", "2.5.0-0"},
		{"!=2.4", "2.4.7-rc.1"},
		{"<2.4", "2.4.0-beta.1"},
		{"=2", "2.0.0-beta.1"},
		{"<=2", "3.0.0-0"},
		{">= 1.2 , <=v1.4.x || ~>0.0", "1.4.9"},
		{"1.2 - 2", "2.9.9"},
		{"<=2.4-beta", "2.4.0"},
		{">*", "1.0.0"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, rangeText, versionText string) {
		r, rangeErr := release.ParseRange(rangeText)
		v, versionErr := release.ParseVersion(versionText)
		if rangeErr != nil && !errors.Is(rangeErr, ErrInvalid) {
			t.Fatalf("ParseRange error %q does not wrap ErrInvalid", rangeErr)
		}
		if versionErr != nil && !errors.Is(versionErr, ErrInvalid) {
			t.Fatalf("ParseVersion error %q does not wrap ErrInvalid", versionErr)
		}
		text := strings.TrimSpace(rangeText)
		lib, libErr := semver.NewConstraint(text)
		if rangeErr != nil && libErr == nil && text != "" &&
			!strings.Contains(rangeErr.Error(), "holds no version") &&
			!strings.Contains(rangeErr.Error(), "has a pre-release or build metadata") {
			t.Fatalf("the library accepts %q, release.ParseRange refuses it: %v", rangeText, rangeErr)
		}
		if versionErr != nil {
			return
		}
		got := r.Contains(v) // also the zero release.Range when rangeErr != nil
		if rangeErr != nil {
			if got {
				t.Fatalf("a release.Range that failed to parse holds %s", v)
			}
			return
		}

		if v.Prerelease() == "" && !leadingWildcard.MatchString(text) && !tildeZero.MatchString(text) {
			lib.IncludePrerelease = true
			if want := lib.Check(v); got != want {
				t.Fatalf("%q.Contains(%q) = %v, the library says %v", rangeText, versionText, got, want)
			}
		}
		if m := partialRange.FindStringSubmatch(rangeText); m != nil {
			checkPartial(t, m, v, got)
		}

		m := simpleRange.FindStringSubmatch(rangeText)
		if m == nil {
			return
		}
		bound, err := release.ParseVersion(m[2])
		if err != nil {
			return // a partial or loose version: not a simple comparison
		}
		c := v.Compare(bound)
		var want bool
		switch m[1] {
		case "<":
			want = c < 0
		case "<=":
			want = c <= 0
		case ">":
			want = c > 0
		case ">=":
			want = c >= 0
		}
		if got != want {
			t.Fatalf("%q.Contains(%q) = %v, but %s compares %d with %s", rangeText, versionText, got, v, c, bound)
		}
	})
}

// checkPartial checks a comparison with a partial version (m from
// partialRange) by the rule as the guide states it, without the bounds
// Range computes: the series is every version with the prefix except the
// pre-releases of its first release.
func checkPartial(t *testing.T, m []string, v *semver.Version, got bool) {
	t.Helper()
	major, err := strconv.ParseUint(m[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var minor uint64
	prefix := v.Major() == major
	if m[3] != "" {
		if minor, err = strconv.ParseUint(m[3], 10, 64); err != nil {
			t.Fatal(err)
		}
		prefix = prefix && v.Minor() == minor
	}
	below := v.LessThan(semver.New(major, minor, 0, "", ""))
	inSeries := prefix && !below
	var want bool
	switch m[1] {
	case "", "=":
		want = inSeries
	case "!=":
		want = !inSeries
	case "<":
		want = below
	case "<=":
		want = below || inSeries
	case ">":
		want = !below && !inSeries
	case ">=":
		want = !below
	}
	if got != want {
		t.Fatalf("%q.Contains(%q) = %v, want %v (prefix %v, below the series %v)", m[0], v, got, want, prefix, below)
	}
}

// mustVersion reads a version an evaluation produced, which must read.
func mustVersion(t *testing.T, s string) *semver.Version {
	t.Helper()
	v, err := release.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
