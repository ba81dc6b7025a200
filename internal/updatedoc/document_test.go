package updatedoc

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// docWith returns a valid document whose packages object is packagesJSON.
func docWith(packagesJSON string) string {
	return `{"format": 1, "publisher": "acme", "sequence": 7, "packages": ` + packagesJSON + `}`
}

// docWithMember returns a valid document without packages and with one
// more top-level member.
func docWithMember(member string) string {
	return `{"format": 1, "publisher": "acme", "sequence": 7, "packages": {}, ` + member + `}`
}

// blogWith returns a valid document with one package "blog" whose body is
// packageJSON.
func blogWith(packageJSON string) string {
	return docWith(`{"blog": ` + packageJSON + `}`)
}

func TestParseAcceptsTheDesignExample(t *testing.T) {
	t.Parallel()
	body := `{
	  "format": 1,
	  "publisher": "acme",
	  "sequence": 1042,
	  "expires": "2026-12-31T00:00:00Z",
	  "future_field": {"anything": [1, 2, {"x": null}]},
	  "packages": {
	    "blog": {
	      "releases": [
	        {"version": "2.4.0", "released": "2026-11-20T10:00:00Z",
	         "requires_core": " >=1.8.0 ", "security": true, "severity": "high",
	         "summary": "Fixes stored XSS in comments", "url": "https://acme.example/2.4.0",
	         "download_size": 12345}
	      ],
	      "advisories": [
	        {"id": "ACME-2026-007", "severity": "critical", "affected": "<2.4.0",
	         "fixed_in": "2.4.0", "summary": "Stored XSS", "url": "https://acme.example/a/7"}
	      ]
	    },
	    "empty": {}
	  }
	}` + "\n\n"
	doc, err := Parse([]byte(body))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if doc.Format != 1 || doc.Publisher != "acme" || doc.Sequence != 1042 {
		t.Errorf("header = %d %q %d, want 1 acme 1042", doc.Format, doc.Publisher, doc.Sequence)
	}
	if want := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC); !doc.Expires.Equal(want) {
		t.Errorf("Expires = %v, want %v", doc.Expires, want)
	}
	blog := doc.Packages["blog"]
	if blog == nil || len(blog.Releases) != 1 || len(blog.Advisories) != 1 {
		t.Fatalf("blog = %+v, want one release and one advisory", blog)
	}
	r := blog.Releases[0]
	if r.Version != "2.4.0" || !r.Security || r.Severity != "high" || r.RequiresCore != ">=1.8.0" ||
		r.Summary != "Fixes stored XSS in comments" || r.URL != "https://acme.example/2.4.0" ||
		!r.Released.Equal(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("release = %+v", r)
	}
	a := blog.Advisories[0]
	if a.ID != "ACME-2026-007" || a.Severity != "critical" || a.Affected != "<2.4.0" || a.FixedIn != "2.4.0" {
		t.Errorf("advisory = %+v", a)
	}
	if empty := doc.Packages["empty"]; empty == nil || len(empty.Releases) != 0 || len(empty.Advisories) != 0 {
		t.Errorf("empty package = %+v, want present and empty", empty)
	}
}

func TestParseOptionalFields(t *testing.T) {
	t.Parallel()
	doc, err := Parse([]byte(docWith(`{"blog": {"releases": [{"version": "1.0.0"}]}}`)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !doc.Expires.IsZero() {
		t.Errorf("Expires = %v, want zero when absent", doc.Expires)
	}
	r := doc.Packages["blog"].Releases[0]
	if !r.Released.IsZero() || r.RequiresCore != "" || r.Security || r.Severity != "" {
		t.Errorf("release = %+v, want only a version", r)
	}
}

// Only names equal ignoring case collide: unknown members with other
// names, and package codes that differ in more than case, are fine.
func TestParseMemberNamesThatDoNotCollide(t *testing.T) {
	t.Parallel()
	body := docWith(`{
	  "cafe": {"releases": [{"version": "1.0.0", "versions": ["x"], "version_": 1, "Summary2": ""}]},
	  "café": {},
	  "x": {"a": {"b": 1}, "b": {"a": 1}}
	}`)
	doc, err := Parse([]byte(body))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(doc.Packages) != 3 || doc.Packages["cafe"].Releases[0].Version != "1.0.0" {
		t.Errorf("packages = %+v", doc.Packages)
	}
}

// An "@" after the host (in the path, query or fragment) is not user
// information, and the scheme's case does not matter.
func TestParseAcceptsURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https://acme.example/blog/2.4.0",
		"http://acme.example:8080/notes",
		"HTTPS://acme.example/people/@acme",
		"https://acme.example/?from=a@b.example",
		"https://acme.example/#@evil.example",
		"https://[2001:db8::1]/notes",
	} {
		body := blogWith(`{"releases": [{"version": "1.0.0", "url": "` + u + `"}],
		  "advisories": [{"id": "A-1", "affected": "<1.0.0", "url": "` + u + `"}]}`)
		doc, err := Parse([]byte(body))
		if err != nil {
			t.Errorf("Parse with url %q: %v", u, err)
			continue
		}
		if got := doc.Packages["blog"].Releases[0].URL; got != u {
			t.Errorf("URL = %q, want %q", got, u)
		}
	}
}

// parseErrorCase is a document Parse refuses and part of the error's text.
type parseErrorCase struct {
	name string
	body string
	want string
}

// parseErrorCases are the refused documents of TestParseErrors; the Lint
// tests check that Lint's first problem is Parse's error on each.
func parseErrorCases() []parseErrorCase {
	manyPackages := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"p%d": {}`, i)
		}
		b.WriteString("}")
		return docWith(b.String())
	}
	manyEntries := func(field string, n int, entry func(int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = entry(i)
		}
		return blogWith(`{"` + field + `": [` + strings.Join(parts, ",") + `]}`)
	}

	return []parseErrorCase{
		{"empty body", ``, `update document: empty body`},
		{"malformed", `{"format": 1,`, `malformed JSON at line 1, column 14`},
		{"malformed on a later line", "{\n\"format\": 1,\n\"publisher\": acme}", `malformed JSON at line 3, column 14`},
		{"not an object", `[1]`, `the document at line 1, column 1 must be an object, not a JSON array`},
		{"null document", `null`, `format is missing`},
		{"format missing", `{"publisher": "acme", "sequence": 1, "packages": {}}`, `format is missing`},
		{"format null", `{"format": null, "publisher": "acme", "sequence": 1, "packages": {}}`, `format is missing`},
		{"format 2", `{"format": 2, "packages": []}`, `unsupported format 2`},
		{"format 0", `{"format": 0}`, `unsupported format 0`},
		{"format as string", `{"format": "1"}`, `format "1" is not an integer`},
		{"format fractional", `{"format": 1.0}`, `format 1.0 is not an integer`},
		{"trailing data", docWith(`{}`) + ` x`, `unexpected data after the JSON value at line 1, column 67`},
		{"second value", docWith(`{}`) + "\n{}", `unexpected data after the JSON value at line 2, column 1`},
		{"publisher missing", `{"format": 1, "sequence": 1, "packages": {}}`, `publisher is missing`},
		{"publisher blank", `{"format": 1, "publisher": " ", "sequence": 1, "packages": {}}`, `publisher is missing`},
		{"publisher not a string", `{"format": 1, "publisher": 5, "sequence": 1, "packages": {}}`,
			`publisher at line 1, column 28 must be a string, not a JSON number`},
		{"sequence missing", `{"format": 1, "publisher": "acme", "packages": {}}`, `sequence is missing`},
		{"sequence negative", `{"format": 1, "publisher": "acme", "sequence": -1, "packages": {}}`, `sequence -1 is negative`},
		{"sequence fractional", `{"format": 1, "publisher": "acme", "sequence": 1.5, "packages": {}}`,
			`sequence at line 1, column 48 must be an integer, not a JSON number 1.5`},
		{"sequence too large", `{"format": 1, "publisher": "acme", "sequence": 99999999999999999999, "packages": {}}`,
			`sequence at line 1, column 48 must be an integer`},
		{"expires not RFC 3339", `{"format": 1, "publisher": "acme", "sequence": 1, "expires": "2026-12-31", "packages": {}}`,
			`expires "2026-12-31" is not an RFC 3339 time`},
		{"packages missing", `{"format": 1, "publisher": "acme", "sequence": 1}`, `packages is missing`},
		{"packages an array", docWith(`[]`), `packages at line 1, column 63 must be an object, not a JSON array`},
		{"package null", docWith(`{"blog": null}`), `package "blog" is null`},
		{"package empty code", docWith(`{"": {}}`), `a package has an empty code`},
		{"duplicate package", docWith(`{"blog": {}, "blog": {"releases": []}}`), `update document: packages: duplicate member "blog"`},
		{"duplicate top-level member", `{"format": 1, "publisher": "a", "publisher": "b", "sequence": 1, "packages": {}}`,
			`update document: top level: duplicate member "publisher"`},
		{"duplicate member deep inside", blogWith(`{"releases": [{"version": "1.0.0", "version": "2.0.0"}]}`),
			`update document: packages.blog.releases[0]: duplicate member "version"`},
		// The json package matches names ignoring case and keeps the last, so
		// each of these would be read as the second value.
		{"duplicate version by case", blogWith(`{"releases": [{"version": "2.4.0", "Version": "9.9.9"}]}`),
			`update document: packages.blog.releases[0]: duplicate member "Version" (same name as "version" ignoring case)`},
		{"duplicate security by case", blogWith(`{"releases": [{"version": "2.4.0", "security": false, "SECURITY": true}]}`),
			`update document: packages.blog.releases[0]: duplicate member "SECURITY" (same name as "security" ignoring case)`},
		{"duplicate security by Unicode folding", blogWith(`{"releases": [{"version": "2.4.0", "security": false, "\u017fecurity": true}]}`),
			`update document: packages.blog.releases[0]: duplicate member "ſecurity" (same name as "security" ignoring case)`},
		{"duplicate packages by case", `{"format": 1, "publisher": "a", "sequence": 1, "packages": {}, "Packages": {"blog": {}}}`,
			`update document: top level: duplicate member "Packages" (same name as "packages" ignoring case)`},
		{"duplicate format", `{"format": 1, "format": 2}`, `update document: top level: duplicate member "format"`},
		{"duplicate format by case", `{"format": 1, "Format": 2}`,
			`update document: top level: duplicate member "Format" (same name as "format" ignoring case)`},
		{"duplicate package code by case", docWith(`{"blog": {}, "Blog": {}}`),
			`update document: packages: duplicate member "Blog" (same name as "blog" ignoring case)`},
		{"duplicate advisory member by case", blogWith(`{"advisories": [{"id": "A-1", "affected": "<1.0.0"}, {"id": "A-2", "affected": "<1.0.0", "Affected": "<0.1.0"}]}`),
			`update document: packages.blog.advisories[1]: duplicate member "Affected" (same name as "affected" ignoring case)`},
		{"duplicate member in an unknown field", docWithMember(`"x": [{"a": 1, "A": 2}]`),
			`update document: x[0]: duplicate member "A" (same name as "a" ignoring case)`},
		{"duplicate member under a quoted code", docWith(`{"my blog": {"releases": [{"version": "1.0.0", "VERSION": "2.0.0"}]}}`),
			`update document: packages["my blog"].releases[0]: duplicate member "VERSION"`},
		// Member names are exact: a name that differs from the format's only
		// by case is not read as that member.
		{"version spelled by case", blogWith(`{"releases": [{"Version": "9.9.9"}]}`),
			`update document: packages.blog.releases[0]: member "Version" must be spelled "version" (member names are case-sensitive)`},
		{"security spelled by Unicode folding", blogWith(`{"releases": [{"version": "1.0.0", "\u017fecurity": true}]}`),
			`update document: packages.blog.releases[0]: member "ſecurity" must be spelled "security"`},
		{"packages spelled by case", `{"format": 1, "publisher": "a", "sequence": 1, "Packages": {}}`,
			`update document: top level: member "Packages" must be spelled "packages"`},
		{"format spelled by case", `{"Format": 1, "publisher": "a", "sequence": 1, "packages": {}}`,
			`update document: top level: member "Format" must be spelled "format"`},
		{"fixed_in spelled by case", blogWith(`{"advisories": [{"id": "A-1", "affected": "<1.0.0", "FIXED_IN": "1.0.0"}]}`),
			`update document: packages.blog.advisories[0]: member "FIXED_IN" must be spelled "fixed_in"`},
		{"misspelling in another format", `{"format": 2, "Packages": {}}`, `unsupported format 2`},
		{"nesting too deep", docWithMember(`"x": ` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001)),
			`exceeded max depth`},
		{"release version missing", blogWith(`{"releases": [{"summary": "x"}]}`), `releases[0].version of package "blog" is missing`},
		{"release version not semver", blogWith(`{"releases": [{"version": "1.0.0"}, {"version": "1.1.0"}, {"version": "abc"}]}`),
			`releases[2].version "abc" of package "blog" is not a semantic version`},
		{"release version with v", blogWith(`{"releases": [{"version": "v1.2.3"}]}`),
			`releases[0].version "v1.2.3" of package "blog" is not a semantic version`},
		{"release version partial", blogWith(`{"releases": [{"version": "1.2"}]}`),
			`releases[0].version "1.2" of package "blog" is not a semantic version`},
		{"release version a number", blogWith(`{"releases": [{"version": 1.2}]}`),
			`packages.blog.releases[0].version at line 1, column 98 must be a string, not a JSON number`},
		{"release version repeated", blogWith(`{"releases": [{"version": "1.0.0"}, {"version": "1.0.0+build.2"}]}`),
			`releases[1].version "1.0.0+build.2" of package "blog" repeats releases[0].version "1.0.0"`},
		{"requires_core bad", blogWith(`{"releases": [{"version": "1.0.0", "requires_core": ">>1.8"}]}`),
			`releases[0].requires_core of package "blog": ">>1.8" is not a valid range`},
		{"requires_core empty", blogWith(`{"releases": [{"version": "1.0.0", "requires_core": ""}]}`),
			`releases[0].requires_core of package "blog": range "" is empty`},
		{"released bad", blogWith(`{"releases": [{"version": "1.0.0", "released": "yesterday"}]}`),
			`releases[0].released "yesterday" of package "blog" is not an RFC 3339 time`},
		{"release severity unknown", blogWith(`{"releases": [{"version": "1.0.0", "severity": "urgent"}]}`),
			`releases[0].severity "urgent" of package "blog" is not one of low, medium, high, critical`},
		{"release security not a bool", blogWith(`{"releases": [{"version": "1.0.0", "security": "yes"}]}`),
			`packages.blog.releases[0].security at line 1, column 119 must be true or false, not a JSON string`},
		{"release url javascript", blogWith(`{"releases": [{"version": "1.0.0", "url": "javascript:alert(1)"}]}`),
			`releases[0].url "javascript:alert(1)" of package "blog": not an absolute http or https URL`},
		{"release url relative", blogWith(`{"releases": [{"version": "1.0.0", "url": "/blog/1.0.0"}]}`),
			`releases[0].url "/blog/1.0.0" of package "blog": not an absolute http or https URL`},
		{"release url with user information", blogWith(`{"releases": [{"version": "1.0.0", "url": "https://acme.example@evil.example/blog"}]}`),
			`update document: releases[0].url "https://acme.example@evil.example/blog" of package "blog": user information before "@" is not allowed (the link goes to evil.example)`},
		{"release url with a password", blogWith(`{"releases": [{"version": "1.0.0", "url": "http://user:secret@acme.example/"}]}`),
			`releases[0].url "http://user:secret@acme.example/" of package "blog": user information before "@" is not allowed (the link goes to acme.example)`},
		{"release url with empty user information", blogWith(`{"releases": [{"version": "1.0.0", "url": "https://@evil.example/"}]}`),
			`releases[0].url "https://@evil.example/" of package "blog": user information before "@" is not allowed`},
		{"release url ftp", blogWith(`{"releases": [{"version": "1.0.0", "url": "ftp://acme.example/blog"}]}`),
			`releases[0].url "ftp://acme.example/blog" of package "blog": not an absolute http or https URL`},
		{"release url without host", blogWith(`{"releases": [{"version": "1.0.0", "url": "https:///blog"}]}`),
			`releases[0].url "https:///blog" of package "blog": not an absolute http or https URL`},
		{"release url unparseable", blogWith(`{"releases": [{"version": "1.0.0", "url": "https://acme.example\\@evil.example/"}]}`),
			`of package "blog": not a valid URL`},
		{"advisory id missing", blogWith(`{"advisories": [{"affected": "<1.0.0"}]}`), `advisories[0].id of package "blog" is missing`},
		{"advisory id blank", blogWith(`{"advisories": [{"id": " ", "affected": "<1.0.0"}]}`), `advisories[0].id of package "blog" is missing`},
		{"advisory id too long", blogWith(`{"advisories": [{"id": "` + strings.Repeat("A", MaxAdvisoryID+1) + `", "affected": "<1.0.0"}]}`),
			`advisories[0].id of package "blog" has 201 bytes, more than the limit of 200`},
		{"advisory id repeated", blogWith(`{"advisories": [{"id": "A-1", "affected": "<1.0.0"}, {"id": "A-1", "affected": "<2.0.0"}]}`),
			`advisories[1].id "A-1" of package "blog" repeats advisories[0].id`},
		{"affected missing", blogWith(`{"advisories": [{"id": "A-1"}]}`), `advisories[0].affected of package "blog" is missing`},
		{"affected bad", blogWith(`{"advisories": [{"id": "A-1", "affected": "before 2.4"}]}`),
			`advisories[0].affected of package "blog": "before 2.4" is not a valid range`},
		{"affected empty alternative", blogWith(`{"advisories": [{"id": "A-1", "affected": "<1.0.0 ||"}]}`),
			`advisories[0].affected of package "blog": "<1.0.0 ||" is not a valid range`},
		{"fixed_in bad", blogWith(`{"advisories": [{"id": "A-1", "affected": "<2.4.0", "fixed_in": "2.4"}]}`),
			`advisories[0].fixed_in "2.4" of package "blog" is not a semantic version`},
		{"fixed_in affected", blogWith(`{"advisories": [{"id": "A-1", "affected": "<=2.4.0", "fixed_in": "2.4.0"}]}`),
			`advisories[0].fixed_in "2.4.0" of package "blog" is inside its affected range "<=2.4.0"`},
		{"fixed_in inside a partial range", blogWith(`{"advisories": [{"id": "A-1", "affected": "<=2.4", "fixed_in": "2.4.9"}]}`),
			`advisories[0].fixed_in "2.4.9" of package "blog" is inside its affected range "<=2.4"`},
		{"affected partial with a pre-release", blogWith(`{"advisories": [{"id": "A-1", "affected": "<=2.4-beta"}]}`),
			`advisories[0].affected of package "blog": "<=2.4-beta" is not a valid range: partial version "2.4-beta" has a pre-release or build metadata`},
		{"requires_core holding nothing", blogWith(`{"releases": [{"version": "1.0.0", "requires_core": ">*"}]}`),
			`releases[0].requires_core of package "blog": ">*" is not a valid range: ">*" holds no version`},
		{"advisory severity unknown", blogWith(`{"advisories": [{"id": "A-1", "affected": "<1.0.0", "severity": "Critical"}]}`),
			`advisories[0].severity "Critical" of package "blog" is not one of low, medium, high, critical`},
		{"advisory url data", blogWith(`{"advisories": [{"id": "A-1", "affected": "<1.0.0", "url": "data:text/html,x"}]}`),
			`advisories[0].url "data:text/html,x" of package "blog": not an absolute http or https URL`},
		{"advisory url with user information", blogWith(`{"advisories": [{"id": "A-1", "affected": "<1.0.0", "url": "https://acme.example@evil.example/a/1"}]}`),
			`update document: advisories[0].url "https://acme.example@evil.example/a/1" of package "blog": user information before "@" is not allowed (the link goes to evil.example)`},
		{"errors reported in code order", docWith(`{"b": {"releases": [{"version": "x"}]}, "a": {"releases": [{"version": "y"}]}}`),
			`releases[0].version "y" of package "a" is not a semantic version`},
		{"too many packages", manyPackages(MaxPackages + 1), `10001 packages, more than the limit of 10000`},
		{"too many releases", manyEntries("releases", MaxReleasesPerPackage+1, func(i int) string {
			return fmt.Sprintf(`{"version": "1.0.%d"}`, i)
		}), `package "blog" has 1001 releases, more than the limit of 1000`},
		{"too many advisories", manyEntries("advisories", MaxAdvisoriesPerPackage+1, func(i int) string {
			return fmt.Sprintf(`{"id": "A-%d", "affected": "<1.0.0"}`, i)
		}), `package "blog" has 1001 advisories, more than the limit of 1000`},
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range parseErrorCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := Parse([]byte(tt.body))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want error containing %q", doc, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %q does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
			if doc != nil {
				t.Errorf("Parse returned a document with an error")
			}
		})
	}
}

// The limits are "more than", not "at least": a document exactly at a limit
// is valid.
func TestParseAtTheLimits(t *testing.T) {
	t.Parallel()
	parts := make([]string, MaxReleasesPerPackage)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"version": "1.0.%d"}`, i)
	}
	doc, err := Parse([]byte(blogWith(`{"releases": [` + strings.Join(parts, ",") + `]}`)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if n := len(doc.Packages["blog"].Releases); n != MaxReleasesPerPackage {
		t.Errorf("got %d releases, want %d", n, MaxReleasesPerPackage)
	}
	id := strings.Repeat("é", MaxAdvisoryID/2) // 2 bytes each: the limit counts bytes
	doc, err = Parse([]byte(blogWith(`{"advisories": [{"id": "` + id + `", "affected": "<1.0.0"}]}`)))
	if err != nil {
		t.Fatalf("Parse of an advisory id of %d bytes: %v", len(id), err)
	}
	if got := doc.Packages["blog"].Advisories[0].ID; got != id {
		t.Errorf("advisory id %q, want %q", got, id)
	}
}

func TestCheckSequence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		stored, incoming    int64
		haveStored, refused bool
	}{
		{"nothing stored", 1000, 1, false, false},
		{"grows", 1042, 1043, true, false},
		{"same document again", 1042, 1042, true, false},
		{"rollback", 1042, 1041, true, true},
		{"rollback to zero", 5, 0, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckSequence(tt.stored, tt.incoming, tt.haveStored)
			if !tt.refused {
				if err != nil {
					t.Fatalf("CheckSequence = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrRollback) {
				t.Fatalf("CheckSequence = %v, want ErrRollback", err)
			}
			for _, n := range []int64{tt.stored, tt.incoming} {
				if !strings.Contains(err.Error(), fmt.Sprint(n)) {
					t.Errorf("error %q does not name %d", err, n)
				}
			}
		})
	}
}
