package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// osv2doc runs `upcheck publisher osv2doc --package pkg files…` on the
// real OSV records of testdata/osv (see its README) and returns stdout,
// stderr and the error.
func osv2doc(t *testing.T, pkg string, files ...string) (string, string, error) {
	t.Helper()
	args := []string{"publisher", "osv2doc", "--package", pkg}
	for _, f := range files {
		args = append(args, filepath.Join("testdata", "osv", f))
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// parseAsDocument places osv2doc's output as the packages of a document
// and parses it as upcheck would.
func parseAsDocument(t *testing.T, packages string) *updatedoc.Document {
	t.Helper()
	doc, err := updatedoc.Parse([]byte(`{"format": 1, "publisher": "p", "sequence": 1, "packages": ` + packages + `}`))
	if err != nil {
		t.Fatalf("the output does not parse as a document's packages: %v\n%s", err, packages)
	}
	return doc
}

func TestOSV2DocConvertsRealRecords(t *testing.T) {
	t.Parallel()
	out, stderr, err := osv2doc(t, "elliptic", "GHSA-r9p9-mrjm-926w.json", "GO-2024-2963.json", "PYSEC-2023-74.json",
		"multiple_ranges_in_package.osv.json", "withdrawn.osv.json", "npm_greater_than.osv.json")
	if err != nil {
		t.Fatalf("osv2doc: %v (stderr %q)", err, stderr)
	}
	doc := parseAsDocument(t, out)
	as := doc.Packages["elliptic"].Advisories
	if len(as) != 6 {
		t.Fatalf("%d advisories, want 6:\n%s", len(as), out)
	}
	want := []struct {
		id, affected, fixedIn, severity, cvss string
		score                                 float64
		aliases                               []string
	}{
		{"GHSA-r9p9-mrjm-926w", "<6.5.4", "6.5.4", "medium", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:N/A:N", 6.8, []string{"CVE-2020-28498"}},
		// Two intervals in one SEMVER range, "introduced: 0" first.
		{"GO-2024-2963", "<1.21.12 || >=1.22.0-0 <1.22.5", "1.22.5", "", "", 0, []string{"CVE-2024-24791"}},
		// The GIT range is left out, the ECOSYSTEM range kept.
		{"PYSEC-2023-74", ">=2.3.0 <2.31.0", "2.31.0", "", "", 0, []string{"CVE-2023-32681", "GHSA-j8r2-6x86-q33q"}},
		// Events out of order are read in version order.
		{"GHSA-9qj7-jvg4-qr2x", "<3.0.21 || >=4.0.1 <4.0.5", "4.0.5", "", "", 0, []string{"CVE-2013-2119"}},
		{"GHSA-35c4-f3rq-f9g3", ">=3.2.0 <3.2.22 || >=4.0.0 <4.1.11 || >=4.2.0 <4.2.2", "4.2.2", "", "", 0, []string{"CVE-2015-3227"}},
		{"GHSA-mhpp-875w-9cpv", ">=2.1.1-0 <3.0.0", "3.0.0", "", "", 0, []string{"CVE-2016-10707"}},
	}
	for i, w := range want {
		a := as[i]
		if a.ID != w.id || a.Affected != w.affected || a.FixedIn != w.fixedIn || a.Severity != w.severity ||
			a.CVSS != w.cvss || a.CVSSScore != w.score || !slices.Equal(a.Aliases, w.aliases) {
			t.Errorf("advisory %d = %+v\nwant %+v", i, a, w)
		}
	}
	if got := as[0]; len(got.References) != 7 || got.References[0] != (release.Reference{Type: "ADVISORY", URL: "https://nvd.nist.gov/vuln/detail/CVE-2020-28498"}) ||
		got.URL != "https://nvd.nist.gov/vuln/detail/CVE-2020-28498" || !got.Modified.Equal(time.Date(2021, 3, 8, 16, 2, 43, 0, time.UTC)) {
		t.Errorf("GHSA-r9p9-mrjm-926w: references %v, url %q, modified %v", got.References, got.URL, got.Modified)
	}
	if w := as[4].Withdrawn; !w.Equal(time.Date(2018, 10, 11, 17, 29, 49, 0, time.UTC)) {
		t.Errorf("GHSA-35c4-f3rq-f9g3 withdrawn = %v, want 2018-10-11T17:29:49Z", w)
	}
	// A withdrawn advisory affects nothing.
	ev, err := release.Evaluate(doc.Package("elliptic"), "elliptic", "3.2.5", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ev.Advisories {
		if a.ID == "GHSA-35c4-f3rq-f9g3" {
			t.Errorf("the withdrawn advisory affects 3.2.5: %+v", ev.Advisories)
		}
	}
	if len(ev.Withdrawn) != 1 {
		t.Errorf("Withdrawn = %+v, want GHSA-35c4-f3rq-f9g3", ev.Withdrawn)
	}
	if !strings.Contains(out, `"affected": "<6.5.4"`) {
		t.Errorf("the output escapes < and >:\n%s", out)
	}
}

func TestOSV2DocRefusesWhatFormat1CannotSay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ pkg, file, want string }{
		{"graylog", "CVE-2023-41045.json", "CVE-2023-41045: its only ranges are GIT ranges, which name commits, not versions"},
		{"gradio", "GHSA-9v2f-6vcg-3hgv.json", "GHSA-9v2f-6vcg-3hgv: it has no SEMVER or ECOSYSTEM range"},
		{"openssl", "CVE-2018-5407.json", `fixed version "1.0.2q-r0" of its ECOSYSTEM range is not a strict semantic version`},
	} {
		out, _, err := osv2doc(t, c.pkg, c.file)
		if err == nil || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("osv2doc %s: %v, output %q; want an error containing %q and no output", c.file, err, out, c.want)
		}
	}
}

func TestOSV2DocChoosesTheNamedPackageAndTheNewestVector(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	record := `{"id": "ACME-2026-1", "modified": "2026-01-02T03:04:05Z",
	  "severity": [{"type": "CVSS_V2", "score": "AV:N/AC:L/Au:N/C:P/I:P/A:P"},
	               {"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"},
	               {"type": "CVSS_V4", "score": "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"}],
	  "affected": [
	    {"package": {"ecosystem": "npm", "name": "other"}, "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}]},
	    {"package": {"ecosystem": "npm", "name": "Blog"}, "ranges": [{"type": "SEMVER", "events": [{"introduced": "1.0.0"}, {"last_affected": "1.4.2"}]}]}]}`
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"publisher", "osv2doc", "--package", "blog", path}, func(string) string { return "" },
		strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatalf("osv2doc: %v", err)
	}
	a := parseAsDocument(t, stdout.String()).Packages["blog"].Advisories[0]
	if a.Affected != ">=1.0.0 <=1.4.2" || a.FixedIn != "" || a.CVSSScore != 9.3 || a.Severity != "critical" {
		t.Errorf("advisory = %+v; want >=1.0.0 <=1.4.2, no fix, the v4.0 vector (9.3, critical)", a)
	}
	// With a package named in none of the entries, the choice is refused.
	err = run(context.Background(), []string{"publisher", "osv2doc", "--package", "shop", path}, func(string) string { return "" },
		strings.NewReader(""), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `affects several packages (other, Blog) and none is named "shop"`) {
		t.Errorf("osv2doc --package shop: %v", err)
	}
	// A record with only a v2 vector loses it, and says so.
	v2 := strings.Replace(record, `"CVSS_V3"`, `"CVSS_V2"`, 1)
	v2 = strings.Replace(v2, `"CVSS_V4"`, `"Ubuntu"`, 1)
	if err := os.WriteFile(path, []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if err := run(context.Background(), []string{"publisher", "osv2doc", "--package", "blog", path}, func(string) string { return "" },
		strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("osv2doc: %v", err)
	}
	if a := parseAsDocument(t, stdout.String()).Packages["blog"].Advisories[0]; a.CVSS != "" ||
		!strings.Contains(stderr.String(), "format 1 holds CVSS v3.0, v3.1 and v4.0 vectors only") {
		t.Errorf("v2 only: cvss %q, stderr %q", a.CVSS, stderr.String())
	}
}

// osv2doc reads a record as the feeds do (osv.Parse, osv.Record.CVSS): the
// record's own vector before its affected entries' (here a v3.1 over an
// entry's v4.0), and a record the feeds would refuse (no "modified") is
// refused with the feed's words and JSON path.
func TestOSV2DocReadsRecordsAsTheFeedsDo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	record := `{"id": "ACME-2026-2", "modified": "2026-01-02T03:04:05Z",
	  "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N"}],
	  "affected": [{"package": {"ecosystem": "npm", "name": "blog"},
	    "severity": [{"type": "CVSS_V4", "score": "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"}],
	    "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.0.1"}]}]}]}`
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := osv.Parse([]byte(record))
	if err != nil {
		t.Fatal(err)
	}
	feedVector, _ := r.CVSS()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"publisher", "osv2doc", "--package", "blog", path}, func(string) string { return "" },
		strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("osv2doc: %v", err)
	}
	if a := parseAsDocument(t, stdout.String()).Packages["blog"].Advisories[0]; a.CVSS != feedVector || a.Affected != "<1.0.1" {
		t.Errorf("advisory = %+v; want the feed's vector %q, <1.0.1", a, feedVector)
	}
	noModified := strings.Replace(record, `"modified": "2026-01-02T03:04:05Z",`, "", 1)
	if err := os.WriteFile(path, []byte(noModified), 0o600); err != nil {
		t.Fatal(err)
	}
	_, feedErr := osv.Parse([]byte(noModified))
	stdout.Reset()
	err = run(context.Background(), []string{"publisher", "osv2doc", "--package", "blog", path}, func(string) string { return "" },
		strings.NewReader(""), &stdout, &stderr)
	if feedErr == nil || err == nil || !strings.Contains(err.Error(), feedErr.Error()) || stdout.Len() != 0 {
		t.Errorf("no modified: osv2doc %v, output %q; want the feed's %v", err, stdout.String(), feedErr)
	}
}
