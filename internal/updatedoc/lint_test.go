package updatedoc

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// There is one set of rules: on every refused document of the Parse tests
// Lint's first problem is Parse's error, word for word, and on the valid
// ones Lint finds nothing.
func TestLintFirstProblemIsParseError(t *testing.T) {
	t.Parallel()
	for _, tt := range parseErrorCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.body))
			problems := Lint([]byte(tt.body))
			if err == nil || len(problems) == 0 {
				t.Fatalf("Parse error %v, Lint %v: want both to refuse", err, problems)
			}
			if problems[0].Message != err.Error() {
				t.Fatalf("Lint's first problem %q\nParse's error       %q", problems[0].Message, err)
			}
			if !errors.Is(problems[0].err, ErrInvalid) {
				t.Errorf("problem %q does not wrap ErrInvalid", problems[0].Message)
			}
		})
	}
	example, err := os.ReadFile("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{string(example), docWith(`{}`), blogWith(`{"releases": [{"version": "1.0.0"}]}`)} {
		if problems := Lint([]byte(body)); problems != nil {
			t.Errorf("Lint of a valid document = %v", problems)
		}
	}
}

// A document with several problems has each listed with its JSON path and
// where it is in the file, in the order the checker finds them.
func TestLintListsEveryProblem(t *testing.T) {
	t.Parallel()
	body := `{
  "format": 1,
  "publisher": "acme",
  "sequence": 7,
  "packages": {
    "blog": {
      "releases": [
        {"version": "1.0.0"},
        {"version": "1.1.0", "severity": "urgent"},
        {"version": "abc"}
      ],
      "advisories": [
        {"id": "A-1"}
      ]
    }
  }
}`
	want := []Problem{
		{Path: "packages.blog.releases[1].severity", Line: 9, Column: 42,
			Message: `update document: releases[1].severity "urgent" of package "blog" is not one of low, medium, high, critical`},
		{Path: "packages.blog.releases[2].version", Line: 10, Column: 21,
			Message: `update document: releases[2].version "abc" of package "blog" is not a semantic version`},
		// A missing member is placed at the object that lacks it.
		{Path: "packages.blog.advisories[0].affected", Line: 13, Column: 9,
			Message: `update document: advisories[0].affected of package "blog" is missing`},
	}
	checkProblems(t, Lint([]byte(body)), want)
}

// Member problems are listed too, each at the member's name: every
// misspelling, and every duplicate (after which nothing else is listed:
// which of two members counts is the question).
func TestLintMemberProblems(t *testing.T) {
	t.Parallel()
	misspelled := "{\"format\": 1, \"Publisher\": \"acme\", \"sequence\": 1,\n\"packages\": {\"blog\": {\"releases\": [{\"Version\": \"x\"}]}}}"
	checkProblems(t, Lint([]byte(misspelled)), []Problem{
		{Path: "Publisher", Line: 1, Column: 15,
			Message: `update document: top level: member "Publisher" must be spelled "publisher" (member names are case-sensitive)`},
		{Path: "packages.blog.releases[0].Version", Line: 2, Column: 37,
			Message: `update document: packages.blog.releases[0]: member "Version" must be spelled "version" (member names are case-sensitive)`},
		// The misspelled member's value is checked as the member it names.
		{Path: "packages.blog.releases[0].version", Line: 2, Column: 36,
			Message: `update document: releases[0].version "x" of package "blog" is not a semantic version`},
	})
	duplicates := `{"format": 1, "publisher": "a", "publisher": "b", "sequence": -1, "packages": {"blog": {}, "Blog": {}}}`
	checkProblems(t, Lint([]byte(duplicates)), []Problem{
		{Path: "publisher", Line: 1, Column: 33, Message: `update document: top level: duplicate member "publisher"`},
		{Path: "packages.Blog", Line: 1, Column: 92,
			Message: `update document: packages: duplicate member "Blog" (same name as "blog" ignoring case)`},
	})
}

// An advisory id longer than a dismissal can name is a problem at its
// path, placed at its value, and does not hide the next one.
func TestLintAdvisoryIDTooLong(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxAdvisoryID+1)
	body := "{\"format\": 1, \"publisher\": \"acme\", \"sequence\": 1, \"packages\": {\"blog\": {\"advisories\": [\n" +
		`{"id": "` + long + `", "affected": "<1.0.0"},` + "\n" + `{"id": "A-2", "affected": "nope"}]}}}`
	checkProblems(t, Lint([]byte(body)), []Problem{
		{Path: "packages.blog.advisories[0].id", Line: 2, Column: 8,
			Message: `update document: advisories[0].id of package "blog" has 201 bytes, more than the limit of 200`},
		{Path: "packages.blog.advisories[1].affected", Line: 3, Column: 27,
			Message: `update document: advisories[1].affected of package "blog": "nope" is not a valid range: improper constraint: "nope"`},
	})
}

// A value of the wrong JSON type stops the list, and has its real path
// (the decoder's message names the Go field path, without indices).
func TestLintTypeError(t *testing.T) {
	t.Parallel()
	body := blogWith(`{"releases": [{"version": "1.0.0"}, {"version": 2}], "advisories": [{"id": "A-1"}]}`)
	checkProblems(t, Lint([]byte(body)), []Problem{{Path: "packages.blog.releases[1].version", Line: 1, Column: 120,
		Message: `update document: packages.blog.releases[1].version at line 1, column 120 must be a string, not a JSON number`}})
	checkProblems(t, Lint([]byte(`{"format": 1,`)), []Problem{{Path: "", Line: 1, Column: 14,
		Message: `update document: malformed JSON at line 1, column 14: unexpected end of input`}})
	checkProblems(t, Lint(nil), []Problem{{Message: `update document: empty body`}})
}

func checkProblems(t *testing.T, got, want []Problem) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("problem %d missing: %+v", i, want[i])
		case i >= len(want):
			t.Errorf("unexpected problem %d: %+v", i, got[i])
		default:
			g := got[i]
			g.err = nil
			if g != want[i] {
				t.Errorf("problem %d =\n  %+v\nwant\n  %+v", i, g, want[i])
			}
			if !strings.HasPrefix(got[i].Message, "update document: ") || got[i].err == nil {
				t.Errorf("problem %d carries no error", i)
			}
		}
	}
}

// OSV's members are checked by the same collecting rules: every problem,
// each with its path.
func TestLintOSVMembers(t *testing.T) {
	t.Parallel()
	body := advisoryWith(`, "aliases": ["CVE-2021-1234", "CVE-21-1"], "cvss": "AV:N", "references": [{"type": "BLOG", "url": "javascript:x"}]`)
	var paths []string
	for _, p := range Lint([]byte(body)) {
		paths = append(paths, p.Path)
		if p.Line != 1 || p.Column == 0 {
			t.Errorf("problem %+v has no place", p)
		}
	}
	want := "packages.blog.advisories[0].aliases[1] packages.blog.advisories[0].cvss " +
		"packages.blog.advisories[0].references[0].type packages.blog.advisories[0].references[0].url"
	if got := strings.Join(paths, " "); got != want {
		t.Fatalf("paths = %s\nwant    %s", got, want)
	}
	_, err := Parse([]byte(body))
	if err == nil || !strings.Contains(err.Error(), `aliases[1] "CVE-21-1"`) {
		t.Fatalf("Parse: %v", err)
	}
}
