package osv

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

type versionCase struct {
	version      string
	affected     bool
	fixed        string
	lastAffected string
	inVersions   bool
}

// realRecord is one real record from testdata (ORIGIN.md names where
// each came from) with what reading it by hand says about it.
type realRecord struct {
	file       string
	id         string
	aliases    []string
	malicious  bool
	word       string
	cvss       string
	packages   []Package
	pkg        string // the npm package the cases are for
	cases      []versionCase
	otherNames []string // npm names that must not match
	refs       int
	withdrawn  bool
}

var realRecords = []realRecord{
	{
		file: "GHSA-2fqv-h3r5-m4vf.json", refs: 5, id: "GHSA-2fqv-h3r5-m4vf", aliases: []string{"CVE-2017-1000006"},
		word: "moderate", cvss: "CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N",
		packages: []Package{{"npm", "plotly.js", ""}}, pkg: "plotly.js",
		cases: []versionCase{
			{version: "0.0.1", affected: true, fixed: "1.16.0"},
			{version: "1.15.9", affected: true, fixed: "1.16.0"},
			{version: "1.16.0-rc.1", affected: true, fixed: "1.16.0"}, // a prerelease sorts before its release
			{version: "1.16.0"},
			{version: "1.16.1"},
			{version: "2.0.0"},
		},
		otherNames: []string{"Plotly.js", "plotly"},
	},
	{
		file: "GHSA-333x-9vgq-v2j4.json", refs: 9, id: "GHSA-333x-9vgq-v2j4", aliases: []string{"CVE-2015-5688"},
		word: "high", packages: []Package{{"npm", "geddy", ""}}, pkg: "geddy",
		cases: []versionCase{
			{version: "13.0.7", affected: true, fixed: "13.0.8"},
			{version: "v13.0.7", affected: true, fixed: "13.0.8"},
			{version: "0.1.0", affected: true, fixed: "13.0.8"},
			{version: "13.0.8"},
			{version: "13.1.0"},
		},
	},
	{
		file: "GHSA-34r7-q49f-h37c.json", refs: 7, id: "GHSA-34r7-q49f-h37c", aliases: []string{"CVE-2015-8857"},
		word: "critical", cvss: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
		packages: []Package{{"npm", "uglify-js", ""}, {"RubyGems", "uglifier", ""}}, pkg: "uglify-js",
		cases: []versionCase{
			{version: "2.4.23", affected: true, fixed: "2.4.24"},
			{version: "2.4.24"},
			{version: "3.17.4"},
		},
		otherNames: []string{"uglifier"}, // named by the record, but for RubyGems
	},
	{
		file: "MAL-2024-11848.json", id: "MAL-2024-11848", malicious: true,
		packages: []Package{{"npm", "000webhost-admin", ""}}, pkg: "000webhost-admin",
		cases: []versionCase{
			{version: "999.9.9", affected: true, inVersions: true},
			{version: "v999.9.9", affected: true, inVersions: true},
			{version: "999.9.8"},
			{version: "1.0.0"},
		},
	},
	{
		file: "MAL-2022-9.json", refs: 1, id: "MAL-2022-9", aliases: []string{"GHSA-8p6v-2gf9-8hhm"}, malicious: true,
		packages: []Package{{"npm", "0-dns", ""}}, pkg: "0-dns",
		cases: []versionCase{
			{version: "0.0.0", affected: true},
			{version: "1.0.0", affected: true},
			{version: "99.0.0-alpha", affected: true},
		},
		otherNames: []string{"0-DNS", "dns"},
	},
	{
		file: "MAL-2024-9114.json", refs: 1, id: "MAL-2024-9114", aliases: []string{"GHSA-5p4q-j56h-pwjw"}, malicious: true,
		packages: []Package{{"npm", "04axvm", ""}}, pkg: "04axvm",
		cases: []versionCase{{version: "0.0.1", affected: true}, {version: "5.2.0", affected: true}},
	},
	{
		file: "MAL-2025-191025.json", refs: 4, id: "MAL-2025-191025", aliases: []string{"GHSA-q2q8-5wg4-g6jq"}, malicious: true,
		packages: []Package{{"npm", "02-echo", ""}}, pkg: "02-echo",
		cases: []versionCase{
			{version: "0.0.7", affected: true, inVersions: true},
			{version: "0.0.6"},
			{version: "0.0.8"},
		},
	},
	{
		// A malicious package of the old npm advisories, in the reviewed
		// database: CWE-506 but no malware type and no MAL id, so not
		// Malicious() (its MAL record is); {"fixed": ""} means no fix.
		file: "GHSA-226w-6hhj-69hp.json", refs: 1, id: "GHSA-226w-6hhj-69hp", aliases: []string{},
		word: "critical", cvss: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
		packages: []Package{{"npm", "cal_rd", ""}}, pkg: "cal_rd",
		cases: []versionCase{
			{version: "0.0.0", affected: true},
			{version: "0.1.1", affected: true},
			{version: "0.0.0-pre"}, // below introduced 0.0.0
		},
		otherNames: []string{"rc_cal"},
	},
	{
		file: "GHSA-2pqj-h3vj-pqgw.json", refs: 18, id: "GHSA-2pqj-h3vj-pqgw", aliases: []string{"CVE-2012-6708"}, word: "high",
		packages: []Package{{"npm", "jquery", ""}, {"Maven", "org.webjars.npm:jquery", ""}, {"NuGet", "jQuery", ""}}, pkg: "jquery",
		cases: []versionCase{
			{version: "1.8.3", affected: true, fixed: "1.9.0"},
			{version: "1.4.2", affected: true, fixed: "1.9.0"},
			{version: "1.9.0-rc1", affected: true, fixed: "1.9.0"},
			{version: "1.9.0"},
			{version: "3.7.1"},
		},
		otherNames: []string{"jQuery", "org.webjars.npm:jquery"},
	},
	{
		file: "GHSA-2958-5r4r-wvv6.json", refs: 4, id: "GHSA-2958-5r4r-wvv6", aliases: []string{"CVE-2017-16159"}, word: "high",
		packages: []Package{{"npm", "caolilinode", ""}}, pkg: "caolilinode",
		cases: []versionCase{
			{version: "0.0.0", affected: true},
			{version: "1.2.3", affected: true},
			{version: "0.0.0-alpha"}, // a prerelease of 0.0.0 sorts below it
		},
	},
	{
		file: "GHSA-46m8-42hm-wvvw.json", refs: 4, id: "GHSA-46m8-42hm-wvvw", aliases: []string{"CVE-2016-1000231"}, word: "high",
		packages: []Package{{"npm", "emojione", ""}}, pkg: "emojione",
		cases: []versionCase{
			{version: "1.3.0", affected: true, fixed: "1.3.1"},
			{version: "1.3.1"},
			{version: "4.5.0"},
		},
	},
	{
		file: "GHSA-4f9m-pxwh-68hg.json", refs: 4, id: "GHSA-4f9m-pxwh-68hg", aliases: []string{}, word: "moderate",
		cvss:     "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:N",
		packages: []Package{{"npm", "swagger-ui", ""}}, pkg: "swagger-ui",
		cases: []versionCase{
			{version: "3.20.8", affected: true, fixed: "3.20.9"},
			{version: "2.2.10", affected: true, fixed: "3.20.9"},
			{version: "3.20.9"},
			{version: "3.20.10"}, // numeric, not string, order
		},
		otherNames: []string{"swagger-ui-dist"},
	},
	{
		// A range whose fixed (1.0.7) is below its introduced (1.0.8):
		// sorted as the schema says, it affects 1.0.8 and everything
		// after; the versions list names 1.0.8 itself.
		file: "GHSA-28f8-hqmc-7ph8.json", refs: 1, id: "GHSA-28f8-hqmc-7ph8", aliases: []string{}, word: "critical",
		packages: []Package{{"npm", "ember-power-timepicker", ""}}, pkg: "ember-power-timepicker",
		cases: []versionCase{
			{version: "1.0.8", affected: true, inVersions: true},
			{version: "1.0.9", affected: true},
			{version: "1.0.7"},
			{version: "0.1.0"},
		},
	},
	{
		// Five affected entries of one package, out of order.
		file: "GHSA-9wv6-86v2-598j.json", refs: 7, id: "GHSA-9wv6-86v2-598j", aliases: []string{"CVE-2024-45296"}, word: "high",
		cvss:     "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H",
		packages: []Package{{"npm", "path-to-regexp", ""}}, pkg: "path-to-regexp",
		cases: []versionCase{
			{version: "0.1.7", affected: true, fixed: "0.1.10"},
			{version: "0.1.10"},
			{version: "1.8.0", affected: true, fixed: "1.9.0"},
			{version: "1.9.0"},
			{version: "3.2.0", affected: true, fixed: "3.3.0"},
			{version: "3.3.0"},
			{version: "6.2.2", affected: true, fixed: "6.3.0"},
			{version: "6.3.0"},
			{version: "7.1.0", affected: true, fixed: "8.0.0"},
			{version: "8.0.0"},
			{version: "8.2.0"},
		},
	},
	{
		file: "GHSA-cm22-4g7w-348p.json", refs: 5, id: "GHSA-cm22-4g7w-348p", aliases: []string{"CVE-2024-43800"}, word: "moderate",
		cvss:     "CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:P/VC:N/VI:N/VA:N/SC:L/SI:L/SA:L", // v4 over the v3 beside it
		packages: []Package{{"npm", "serve-static", ""}}, pkg: "serve-static",
		cases: []versionCase{
			{version: "1.15.0", affected: true, fixed: "1.16.0"},
			{version: "1.16.0"},
			{version: "2.0.0-beta.2"}, // between the two ranges
			{version: "2.0.0", affected: true, fixed: "2.1.0"},
			{version: "2.1.0"},
		},
	},
	{
		file: "GHSA-9cwx-2883-4wfx.json", refs: 8, id: "GHSA-9cwx-2883-4wfx", aliases: []string{"CVE-2024-45811"}, word: "moderate",
		cvss:     "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:L/VI:N/VA:N/SC:N/SI:N/SA:N",
		packages: []Package{{"npm", "vite", ""}}, pkg: "vite",
		cases: []versionCase{
			{version: "5.4.5", affected: true, fixed: "5.4.6"},
			{version: "5.4.6"},
			{version: "5.3.5", affected: true, fixed: "5.3.6"},
			{version: "5.2.13", affected: true, fixed: "5.2.14"},
			{version: "5.1.7", affected: true, fixed: "5.1.8"},
			{version: "5.1.8"},
			{version: "4.5.3", affected: true, fixed: "4.5.4"},
			{version: "4.0.0-beta.0"},
			{version: "3.2.10", affected: true, fixed: "3.2.11"},
			{version: "3.2.11"},
			{version: "6.0.0"},
		},
		otherNames: []string{"@vitejs/plugin-react"},
	},
	// The next five are real GHSA advisories as the OSV schema's own GHSA
	// converter writes them (its test expectations): SEMVER ranges, as in
	// the OSV archives.
	{
		// Events out of order: introduced 0, introduced 2.0.0, fixed
		// 2.0.1, fixed 1.3.2 — the schema sorts them before evaluating.
		file: "GHSA-fhjf-83wg-r2j9.json", refs: 2, id: "GHSA-fhjf-83wg-r2j9", aliases: []string{"CVE-2019-10746"},
		packages: []Package{{"npm", "mixin-deep", ""}}, pkg: "mixin-deep",
		cases: []versionCase{
			{version: "1.0.0", affected: true, fixed: "1.3.2"},
			{version: "1.3.1", affected: true, fixed: "1.3.2"},
			{version: "1.3.2"},
			{version: "1.99.0"},
			{version: "2.0.0", affected: true, fixed: "2.0.1"},
			{version: "2.0.1"},
		},
	},
	{
		file: "GHSA-pxmp-fwjc-4x7q.json", refs: 2, id: "GHSA-pxmp-fwjc-4x7q", aliases: []string{},
		packages: []Package{{"npm", "marky-markdown", ""}}, pkg: "marky-markdown",
		cases: []versionCase{{version: "0.0.0", affected: true}, {version: "11.3.2", affected: true}},
	},
	{
		file: "GHSA-f89g-whpf-6q9m.json", refs: 2, id: "GHSA-f89g-whpf-6q9m", aliases: []string{"CVE-2017-16008"},
		packages: []Package{{"npm", "i18next", ""}}, pkg: "i18next",
		cases: []versionCase{
			{version: "1.10.2", affected: true, fixed: "1.10.3"},
			{version: "1.10.3"},
			{version: "19.0.0"},
		},
	},
	{
		// Introduced at a prerelease, 2.1.1-0, the lowest of 2.1.1's.
		file: "GHSA-mhpp-875w-9cpv.json", refs: 2, id: "GHSA-mhpp-875w-9cpv", aliases: []string{"CVE-2016-10707"},
		packages: []Package{{"npm", "jquery", ""}}, pkg: "jquery",
		cases: []versionCase{
			{version: "2.1.0"},
			{version: "2.1.1-0", affected: true, fixed: "3.0.0"},
			{version: "2.1.1-beta.1", affected: true, fixed: "3.0.0"},
			{version: "2.2.4", affected: true, fixed: "3.0.0"},
			{version: "3.0.0-rc1", affected: true, fixed: "3.0.0"},
			{version: "3.0.0"},
		},
	},
	{
		file: "GHSA-35c4-f3rq-f9g3.json", refs: 2, id: "GHSA-35c4-f3rq-f9g3", aliases: []string{"CVE-2015-3227"}, withdrawn: true,
		packages: []Package{{"RubyGems", "activesupport", ""}}, pkg: "activesupport",
		otherNames: []string{"activesupport"}, // RubyGems, and withdrawn
	},
	{
		// Both a range from 0 and a versions list: the list is read first.
		file: "MAL-2025-1.json", refs: 3, id: "MAL-2025-1", aliases: []string{"GHSA-r8qm-c82c-c9r7", "SNYK-JS-029TESTNPM-8601494"}, malicious: true,
		packages: []Package{{"npm", "029testnpm", ""}}, pkg: "029testnpm",
		cases: []versionCase{
			{version: "1.0.0", affected: true, inVersions: true},
			{version: "2.0.0", affected: true},
		},
	},
	{
		file: "MAL-2023-13.json", refs: 1, id: "MAL-2023-13", aliases: []string{"GHSA-5hfp-r8fg-cjgr"}, malicious: true,
		packages: []Package{{"npm", "04xi_mfz", ""}}, pkg: "04xi_mfz",
		cases:      []versionCase{{version: "0.0.1", affected: true}},
		otherNames: []string{"04xi-mfz"},
	},
	{
		file: "MAL-2025-179413.json", id: "MAL-2025-179413", malicious: true,
		packages: []Package{{"npm", "-pem-misa", ""}}, pkg: "-pem-misa",
		cases:      []versionCase{{version: "1.0.0", affected: true}},
		otherNames: []string{"pem-misa"},
	},
	{
		// "malicious-packages-origins": null; malicious by its MAL id.
		file: "MAL-2025-6974.json", id: "MAL-2025-6974", malicious: true,
		packages: []Package{{"npm", "0-snap-score318", ""}}, pkg: "0-snap-score318",
		cases: []versionCase{{version: "3.1.8", affected: true}},
	},
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRealRecords(t *testing.T) {
	t.Parallel()
	for _, rr := range realRecords {
		t.Run(rr.id, func(t *testing.T) {
			t.Parallel()
			r, err := Parse(readTestdata(t, rr.file))
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != rr.id || !reflect.DeepEqual(r.Aliases, rr.aliases) {
				t.Errorf("id %q aliases %q, want %q %q", r.ID, r.Aliases, rr.id, rr.aliases)
			}
			if r.Modified.IsZero() || r.Published.IsZero() || r.IsWithdrawn() != rr.withdrawn {
				t.Errorf("modified %v published %v withdrawn %v", r.Modified, r.Published, r.Withdrawn)
			}
			if got := r.Malicious(); got != rr.malicious {
				t.Errorf("Malicious() = %v, want %v", got, rr.malicious)
			}
			if got := r.SeverityWord(); got != rr.word {
				t.Errorf("SeverityWord() = %q, want %q", got, rr.word)
			}
			if got, ok := r.CVSS(); got != rr.cvss || ok != (rr.cvss != "") {
				t.Errorf("CVSS() = %q, %v, want %q", got, ok, rr.cvss)
			}
			if got := r.Packages(); !reflect.DeepEqual(got, rr.packages) {
				t.Errorf("Packages() = %v, want %v", got, rr.packages)
			}
			if len(r.References) != rr.refs || rr.refs > 0 && (r.References[0].URL == "" || r.References[0].Type == "") {
				t.Errorf("references %v, want %d", r.References, rr.refs)
			}
			for _, c := range rr.cases {
				m, ok, err := r.Match("npm", rr.pkg, c.version)
				if err != nil {
					t.Fatalf("Match(%s): %v", c.version, err)
				}
				if ok != c.affected {
					t.Errorf("Match(%s) affected = %v, want %v", c.version, ok, c.affected)
					continue
				}
				if !ok {
					continue
				}
				if m.Fixed != c.fixed || m.LastAffected != c.lastAffected || m.InVersions != c.inVersions || m.Package.Name != rr.pkg {
					t.Errorf("Match(%s) = %+v, want fixed %q last_affected %q in versions %v", c.version, m, c.fixed, c.lastAffected, c.inVersions)
				}
			}
			for _, name := range rr.otherNames {
				if _, ok, _ := r.Match("npm", name, "1.0.0"); ok {
					t.Errorf("npm package %q matched a record for %q", name, rr.pkg)
				}
			}
			if _, ok, _ := r.Match("NPM", rr.pkg, "1.0.0"); ok {
				t.Errorf(`ecosystem "NPM" matched; OSV's name is "npm" exactly`)
			}
		})
	}
}

// TestSpecEvaluation runs the examples of the OSV schema's "Evaluation"
// and "Examples" sections (docs/schema.md, see testdata/ORIGIN.md), each
// with the versions its text says are and are not affected, plus the
// cases the pseudocode decides that the examples do not spell out (limit
// events, events out of order, several introduced/fixed pairs).
func TestSpecEvaluation(t *testing.T) {
	t.Parallel()
	ev := func(kind, v string) Event {
		switch kind {
		case "i":
			return Event{Introduced: v}
		case "f":
			return Event{Fixed: v}
		case "la":
			return Event{LastAffected: v}
		}
		return Event{Limit: v}
	}
	tests := []struct {
		name     string
		typ      string
		events   []Event
		affected []string
		not      []string
		fixed    map[string]string // version -> Fixed, when one is expected
		last     map[string]string
	}{
		{
			name: "unfixed: every possible version is affected", typ: RangeSemver,
			events:   []Event{ev("i", "0")},
			affected: []string{"0.0.0", "0.0.0-alpha", "1.0.0", "999.999.999"},
		},
		{
			name: "fixed: everything before 1.0.2", typ: RangeSemver,
			events:   []Event{ev("i", "0"), ev("f", "1.0.2")},
			affected: []string{"0.0.1", "1.0.1", "1.0.2-rc.1"},
			not:      []string{"1.0.2", "1.0.3", "2.0.0"},
			fixed:    map[string]string{"1.0.1": "1.0.2"},
		},
		{
			name: "multiple ranges: [1.0.0, 1.0.2) and [3.0.0, 3.2.5)", typ: RangeSemver,
			events:   []Event{ev("i", "1.0.0"), ev("f", "1.0.2"), ev("i", "3.0.0"), ev("f", "3.2.5")},
			affected: []string{"1.0.0", "1.0.1", "3.0.0", "3.2.4"},
			not:      []string{"0.9.9", "1.0.2", "2.5.0", "3.0.0-beta", "3.2.5", "4.0.0"},
			fixed:    map[string]string{"1.0.1": "1.0.2", "3.2.4": "3.2.5"},
		},
		{
			name: "multiple ranges written out of order are sorted first", typ: RangeSemver,
			events:   []Event{ev("f", "3.2.5"), ev("i", "3.0.0"), ev("f", "1.0.2"), ev("i", "1.0.0")},
			affected: []string{"1.0.1", "3.1.0"},
			not:      []string{"2.0.0", "3.2.5"},
			fixed:    map[string]string{"1.0.1": "1.0.2", "3.1.0": "3.2.5"},
		},
		{
			name: "last_affected: up to and including 2.1.214", typ: RangeEcosystem,
			events:   []Event{ev("i", "0"), ev("la", "2.1.214")},
			affected: []string{"0.1.0", "2.1.213", "2.1.214"},
			not:      []string{"2.1.215", "2.2.0"},
			last:     map[string]string{"2.1.214": "2.1.214", "1.0.0": "2.1.214"},
		},
		{
			name: "fixed 2.1.214: 2.1.214 is not affected", typ: RangeSemver,
			events:   []Event{ev("i", "0"), ev("f", "2.1.214")},
			affected: []string{"2.1.213"},
			not:      []string{"2.1.214", "2.1.215"},
		},
		{
			name: "limit: only versions below a limit can be affected", typ: RangeSemver,
			events:   []Event{ev("i", "1.0.0"), ev("l", "2.0.0")},
			affected: []string{"1.0.0", "1.9.9"},
			not:      []string{"0.9.0", "2.0.0", "2.0.1"},
		},
		{
			name: `limit "*" is infinity`, typ: RangeSemver,
			events:   []Event{ev("i", "1.0.0"), ev("l", "*")},
			affected: []string{"1.0.0", "99.0.0"},
			not:      []string{"0.1.0"},
		},
		{
			name: "several limits: below any one of them", typ: RangeSemver,
			events:   []Event{ev("i", "0"), ev("l", "1.0.0"), ev("l", "3.0.0")},
			affected: []string{"0.5.0", "2.0.0"},
			not:      []string{"3.0.0"},
		},
		{
			name: "introduced again after a fix", typ: RangeSemver,
			events:   []Event{ev("i", "0"), ev("f", "1.0.0"), ev("i", "2.0.0")},
			affected: []string{"0.1.0", "2.0.0", "5.0.0"},
			not:      []string{"1.0.0", "1.5.0"},
			fixed:    map[string]string{"0.1.0": "1.0.0", "5.0.0": ""},
		},
		{
			name: "build metadata does not order (SemVer 2.0)", typ: RangeSemver,
			events:   []Event{ev("i", "0"), ev("f", "1.0.0+build.5")},
			affected: []string{"0.9.0"},
			not:      []string{"1.0.0", "1.0.0+build.1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Record{ID: "TEST-1", Affected: []Affected{{
				Package: Package{Ecosystem: "npm", Name: "p"}, HasPackage: true,
				Ranges: []Range{{Type: tt.typ, Events: tt.events}},
			}}}
			for _, v := range tt.affected {
				m, ok, err := r.Match("npm", "p", v)
				if err != nil || !ok {
					t.Errorf("%s: affected = %v (%v), want true", v, ok, err)
				}
				if want, has := tt.fixed[v]; has && m.Fixed != want {
					t.Errorf("%s: Fixed = %q, want %q", v, m.Fixed, want)
				}
				if want, has := tt.last[v]; has && m.LastAffected != want {
					t.Errorf("%s: LastAffected = %q, want %q", v, m.LastAffected, want)
				}
			}
			for _, v := range tt.not {
				if _, ok, err := r.Match("npm", "p", v); err != nil || ok {
					t.Errorf("%s: affected = %v (%v), want false", v, ok, err)
				}
			}
		})
	}
}

func TestMatchRules(t *testing.T) {
	t.Parallel()
	withRanges := func(a Affected) *Record {
		a.Package, a.HasPackage = Package{Ecosystem: "npm", Name: "@scope/pkg"}, true
		return &Record{ID: "TEST-2", Affected: []Affected{a}}
	}
	t.Run("GIT ranges are ignored", func(t *testing.T) {
		t.Parallel()
		r := withRanges(Affected{Ranges: []Range{{Type: RangeGit, Events: []Event{{Introduced: "0"}}}}})
		if _, ok, err := r.Match("npm", "@scope/pkg", "1.0.0"); ok || err != nil {
			t.Errorf("a GIT range matched: %v %v", ok, err)
		}
	})
	t.Run("an entry with neither ranges nor versions matches nothing", func(t *testing.T) {
		t.Parallel()
		if _, ok, _ := withRanges(Affected{}).Match("npm", "@scope/pkg", "1.0.0"); ok {
			t.Error("an empty entry matched")
		}
	})
	t.Run("versions match exactly", func(t *testing.T) {
		t.Parallel()
		r := withRanges(Affected{Versions: []string{"1.0.0", "2.0.0-beta.1"}})
		for v, want := range map[string]bool{"1.0.0": true, "2.0.0-beta.1": true, "1.0.1": false, "2.0.0": false} {
			if _, ok, _ := r.Match("npm", "@scope/pkg", v); ok != want {
				t.Errorf("%s: %v, want %v", v, ok, want)
			}
		}
	})
	t.Run("a withdrawn record matches nothing", func(t *testing.T) {
		t.Parallel()
		r := withRanges(Affected{Ranges: []Range{{Type: RangeSemver, Events: []Event{{Introduced: "0"}}}}})
		if ok, _ := r.Affects("npm", "@scope/pkg", "1.0.0"); !ok {
			t.Fatal("the record should match before it is withdrawn")
		}
		r.Withdrawn = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		if ok, _ := r.Affects("npm", "@scope/pkg", "1.0.0"); ok || !r.IsWithdrawn() {
			t.Error("a withdrawn record matched")
		}
	})
	t.Run("an installed version that cannot be ordered is an error", func(t *testing.T) {
		t.Parallel()
		r := withRanges(Affected{Ranges: []Range{{Type: RangeSemver, Events: []Event{{Introduced: "0"}}}}})
		for _, v := range []string{"latest", "1.2", "", "1.0.0.0"} {
			if _, _, err := r.Match("npm", "@scope/pkg", v); !errors.Is(err, ErrVersion) {
				t.Errorf("%q: err = %v, want ErrVersion", v, err)
			}
		}
	})
	t.Run("the first matching entry is reported", func(t *testing.T) {
		t.Parallel()
		p := Package{Ecosystem: "npm", Name: "x"}
		r := &Record{ID: "TEST-3", Affected: []Affected{
			{Package: p, HasPackage: true, Ranges: []Range{{Type: RangeSemver, Events: []Event{{Introduced: "1.0.0"}, {Fixed: "1.2.0"}}}}},
			{Package: p, HasPackage: true, Ranges: []Range{{Type: RangeSemver, Events: []Event{{Introduced: "2.0.0"}, {Fixed: "2.3.1"}}}}},
		}}
		m, ok, err := r.Match("npm", "x", "2.1.0")
		if err != nil || !ok || m.Affected != 1 || m.Fixed != "2.3.1" {
			t.Errorf("Match = %+v %v %v, want entry 1 fixed 2.3.1", m, ok, err)
		}
		if got := r.Packages(); len(got) != 1 {
			t.Errorf("Packages() = %v, want one distinct package", got)
		}
	})
}

func TestCVSSPrefersTheNewestVersion(t *testing.T) {
	t.Parallel()
	v3 := "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"
	v4 := "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"
	r := &Record{Severity: []Severity{{SeverityCVSSv3, v3}, {SeverityCVSSv4, v4}}}
	if got, ok := r.CVSS(); !ok || got != v4 {
		t.Errorf("CVSS() = %q, want the v4 vector", got)
	}
	r = &Record{Affected: []Affected{{Severity: []Severity{{"Ubuntu", "high"}, {SeverityCVSSv3, v3}}}}}
	if got, ok := r.CVSS(); !ok || got != v3 {
		t.Errorf("CVSS() from affected[].severity = %q, want the v3 vector", got)
	}
	r = &Record{Severity: []Severity{{SeverityCVSSv3, "not a vector"}}}
	if got, ok := r.CVSS(); ok {
		t.Errorf("CVSS() = %q for a score that is no vector", got)
	}
}

func TestMaliciousByGitHubType(t *testing.T) {
	t.Parallel()
	r := &Record{ID: "GHSA-xxxx-xxxx-xxxx", DatabaseSpecific: []byte(`{"type":"malware","severity":"CRITICAL"}`)}
	if !r.Malicious() || r.SeverityWord() != "critical" {
		t.Errorf("Malicious() = %v, SeverityWord() = %q", r.Malicious(), r.SeverityWord())
	}
	r = &Record{ID: "GHSA-xxxx-xxxx-xxxx", DatabaseSpecific: []byte(`{"type":"reviewed","cwe_ids":["CWE-506"]}`)}
	if r.Malicious() {
		t.Error("a reviewed advisory with CWE-506 counted as malware")
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	data := readTestdata(t, "MAL-2022-9.json")
	if Hash(data) != sha256.Sum256(data) {
		t.Error("Hash is not the SHA-256 of the bytes")
	}
	if Hash(data) == Hash(bytes.TrimSpace(data)) {
		t.Error("Hash ignored a byte of difference")
	}
}

func TestDetailsAreCapped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxDetailsBytes) // two bytes each
	r, err := Parse([]byte(`{"id":"X-1","modified":"2024-01-01T00:00:00Z","details":"` + long + `","summary":"` + long + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Details) > MaxDetailsBytes || len(r.Details) < MaxDetailsBytes-1 || !r.DetailsTruncated || !strings.HasPrefix(long, r.Details) {
		t.Errorf("details %d bytes, truncated %v", len(r.Details), r.DetailsTruncated)
	}
	if len(r.Summary) != MaxSummaryBytes || !strings.HasPrefix(long, r.Summary) {
		t.Errorf("summary %d bytes", len(r.Summary))
	}
}

// TestEveryRecordHasAnOrigin keeps testdata honest: each file is named in
// ORIGIN.md and read by a test.
func TestEveryRecordHasAnOrigin(t *testing.T) {
	t.Parallel()
	origin := string(readTestdata(t, "ORIGIN.md"))
	tested := map[string]bool{"MAL-0000-ghsa-malware-e0ab4aef1fc278a5.json": true}
	for _, rr := range realRecords {
		tested[rr.file] = true
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) < 24 {
		t.Fatalf("%d records in testdata (%v), want at least 24", len(files), err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.Contains(origin, "| "+name+" |") {
			t.Errorf("%s is not in ORIGIN.md", name)
		}
		if !tested[name] {
			t.Errorf("%s is read by no test", name)
		}
	}
}

func TestMatchNpmVersionIsCheckedEvenForAVersionsList(t *testing.T) {
	t.Parallel()
	r, err := Parse(readTestdata(t, "MAL-2024-11848.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Match("npm", "000webhost-admin", "999.9"); !errors.Is(err, ErrVersion) {
		t.Errorf("err = %v, want ErrVersion", err)
	}
	if _, _, err := r.Match("npm", "another-package", "999.9"); err != nil {
		t.Errorf("a package the record does not name: err = %v", err)
	}
}

// BenchmarkMatch is one component against one record of five ranges, the
// unit of an evaluation of many components against an archive.
func BenchmarkMatch(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "GHSA-9wv6-86v2-598j.json"))
	if err != nil {
		b.Fatal(err)
	}
	r, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok, _ := r.Match("npm", "path-to-regexp", "6.2.2"); !ok {
			b.Fatal("no match")
		}
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "GHSA-9cwx-2883-4wfx.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
