package osv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

func TestParseMalformed(t *testing.T) {
	t.Parallel()
	const head = `"id":"GHSA-aaaa-bbbb-cccc","modified":"2024-01-02T03:04:05Z"`
	rec := func(affected string) string {
		return `{` + head + `,"affected":[{"package":{"ecosystem":"npm","name":"p"},"ranges":[` + affected + `]}]}`
	}
	tests := []struct {
		name, input, want string
	}{
		{"not JSON", `{"id":`, "unexpected end of input"},
		{"not an object", `[1,2]`, "the record at line 1, column 1 must be"},
		{"trailing text", `{` + head + `} {}`, "unexpected text after the record at line 1"},
		{"no id", `{"modified":"2024-01-02T03:04:05Z"}`, "id: is required"},
		{"empty id", `{"id":" ","modified":"2024-01-02T03:04:05Z"}`, "id: is required and must not be empty"},
		{"no modified", `{"id":"X-1"}`, "modified: is required"},
		{"bad modified", `{"id":"X-1","modified":"yesterday"}`, `modified: must be an RFC 3339 time, not "yesterday"`},
		{"modified in year 1", `{"id":"X-1","modified":"0001-01-01T00:00:00Z"}`, `modified: must be an RFC 3339 time, not "0001-01-01T00:00:00Z"`},
		{"bad withdrawn", `{` + head + `,"withdrawn":"2024-13-01T00:00:00Z"}`, "withdrawn: must be an RFC 3339 time"},
		{"id of the wrong type", `{"id":12,"modified":"2024-01-02T03:04:05Z"}`, "id at line 1, column 7 must be a string"},
		{"empty alias", `{` + head + `,"aliases":["CVE-1",""]}`, "aliases[1]: must be an id of 1 to 200 bytes"},
		{"long related", `{` + head + `,"related":["` + strings.Repeat("X", 300) + `"]}`, "related[0]: must be an id"},
		{"long id", `{"id":"` + strings.Repeat("X", 300) + `","modified":"2024-01-02T03:04:05Z"}`, "id: is 300 bytes long"},
		// Every id a record may carry can be dismissed: the limit is the
		// dismissal's (readmodel.MaxAdvisoryID).
		{"id one byte past the dismissal's limit", `{"id":"` + strings.Repeat("X", readmodel.MaxAdvisoryID+1) + `","modified":"2024-01-02T03:04:05Z"}`,
			fmt.Sprintf("id: is %d bytes long, more than the %d allowed", readmodel.MaxAdvisoryID+1, readmodel.MaxAdvisoryID)},
		{"alias past the dismissal's limit", `{` + head + `,"aliases":["` + strings.Repeat("A", readmodel.MaxAdvisoryID+1) + `"]}`, "aliases[0]: must be an id of 1 to 200 bytes"},
		{"long url", `{` + head + `,"references":[{"type":"WEB","url":"` + strings.Repeat("u", 9000) + `"}]}`, "references[0]: is longer than"},
		{"long package name", `{` + head + `,"affected":[{"package":{"ecosystem":"npm","name":"` + strings.Repeat("n", 2000) + `"}}]}`, "affected[0].package: has a name longer than"},
		{"package without a name", `{` + head + `,"affected":[{"package":{"ecosystem":"npm"}}]}`, "affected[0].package: must have an ecosystem and a name"},
		{"range without a type", rec(`{"events":[{"introduced":"0"}]}`), "affected[0].ranges[0].type: is required"},
		{"range without events", rec(`{"type":"SEMVER","events":[]}`), "affected[0].ranges[0].events: must list at least one event"},
		{"range without introduced", rec(`{"type":"SEMVER","events":[{"fixed":"1.0.0"}]}`), "affected[0].ranges[0].events: must have an introduced event"},
		{
			"fixed not SemVer", rec(`{"type":"SEMVER","events":[{"introduced":"0"}]},{"type":"SEMVER","events":[{"introduced":"0"},{"limit":"*"},{"fixed":"v1.2.3"}]}`),
			`affected[0].ranges[1].events[2]: "fixed" is not a SemVer version: "v1.2.3"`,
		},
		{"introduced partial", rec(`{"type":"ECOSYSTEM","events":[{"introduced":"1.2"}]}`), `affected[0].ranges[0].events[0]: "introduced" is not a SemVer version`},
		{"two kinds in one event", rec(`{"type":"SEMVER","events":[{"introduced":"1.0.0","fixed":"1.0.2"}]}`), "affected[0].ranges[0].events[0]: must have exactly one of introduced, fixed, last_affected and limit, not 2"},
		{"an event of no kind", rec(`{"type":"SEMVER","events":[{"introduced":"0"},{}]}`), "affected[0].ranges[0].events[1]: must have exactly one"},
		{"a version of the wrong type", rec(`{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":5}]}`), "affected[0].ranges[0].events[1].fixed at line 1, column"},
		{"empty version", rec(`{"type":"SEMVER","events":[{"introduced":""}]}`), `affected[0].ranges[0].events[0]: "introduced" must be a version`},
		{"empty listed version", `{` + head + `,"affected":[{"package":{"ecosystem":"npm","name":"p"},"versions":["1.0.0",""]}]}`, "affected[0].versions[1]: must be a version"},
		{"severity without a score", `{` + head + `,"severity":[{"type":"CVSS_V3"}]}`, "severity[0]: must have a type and a score"},
		{"too many aliases", `{` + head + `,"aliases":[` + strings.TrimSuffix(strings.Repeat(`"A",`, MaxAliases+1), ",") + `]}`, fmt.Sprintf("aliases: has %d entries, more than the %d allowed", MaxAliases+1, MaxAliases)},
		{"too many events", rec(`{"type":"SEMVER","events":[` + strings.TrimSuffix(strings.Repeat(`{"introduced":"0"},`, MaxEvents+1), ",") + `]}`), "affected[0].ranges[0].events: has"},
		{"too long", `{"id":"X-1","modified":"2024-01-02T03:04:05Z","details":"` + strings.Repeat("x", MaxRecordBytes) + `"}`, "bytes long, more than the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse([]byte(tt.input))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Parse = %v, %v; want ErrMalformed", r, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// TestParseRealMalformed: the malicious-packages database keeps each
// source's report before it is given a MAL id, with "id": "" — not a
// record to store.
func TestParseRealMalformed(t *testing.T) {
	t.Parallel()
	_, err := Parse(readTestdata(t, "MAL-0000-ghsa-malware-e0ab4aef1fc278a5.json"))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "id: is required") {
		t.Errorf("err = %v, want ErrMalformed naming id", err)
	}
}

func TestParseLenient(t *testing.T) {
	t.Parallel()
	r, err := Parse([]byte(`{
		"id": "X-1", "modified": "2024-01-02T03:04:05+02:00", "unknown": {"a": [1]},
		"database_specific": null,
		"affected": [
			{"package": {"ecosystem": "PyPI", "name": "q"}, "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "1.0.post1"}]}]},
			{"ranges": [{"type": "GIT", "repo": "r", "events": [{"introduced": "abc123"}]}]}
		]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Modified.Hour() != 1 || r.Modified.Location().String() != "UTC" {
		t.Errorf("modified %v, want converted to UTC", r.Modified)
	}
	if r.DatabaseSpecific != nil || len(r.Affected) != 2 || r.Affected[1].HasPackage {
		t.Errorf("record %+v", r)
	}
	if len(r.Packages()) != 1 {
		t.Errorf("Packages() = %v, want only the entry with a package", r.Packages())
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"id":"X","modified":"2024-01-01T00:00:00Z","affected":[{"package":{"ecosystem":"npm","name":"p"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"limit":"*"},{"last_affected":"1.0.0"}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		if r.ID == "" || r.Modified.IsZero() {
			t.Fatalf("accepted a record without id or modified: %+v", r)
		}
		r.Malicious()
		r.CVSS()
		r.SeverityWord()
		for _, p := range r.Packages() {
			for _, v := range []string{"0.0.0", "1.0.0", "1.0.0-rc.1", "99.0.0"} {
				if _, _, err := r.Match(p.Ecosystem, p.Name, v); err != nil && !errors.Is(err, ErrVersion) {
					t.Fatalf("Match: %v", err)
				}
			}
		}
	})
}
