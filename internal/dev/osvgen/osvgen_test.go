package osvgen

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/osv"
)

// parse reads a generated record as the feeds do (osv.Parse): a record
// osvgen makes is one the feeds keep.
func parse(t *testing.T, body []byte) *osv.Record {
	t.Helper()
	r, err := osv.Parse(body)
	if err != nil {
		t.Fatalf("the feeds would skip the record: %v\n%s", err, body)
	}
	return r
}

// origins reports whether r's database_specific names its
// malicious-packages-origins.
func origins(r *osv.Record) bool {
	var ds map[string]json.RawMessage
	_ = json.Unmarshal(r.DatabaseSpecific, &ds)
	_, ok := ds["malicious-packages-origins"]
	return ok
}

func TestRecordsAreDeterministicUniqueAndShapedAsRealOnes(t *testing.T) {
	t.Parallel()
	s := Spec{N: 2000, Seed: 7, Packages: []string{"@demo/seo", "left-pad"}, MalShare: 0.3}
	first := maps.Collect(Records(s))
	if len(first) != s.N {
		t.Fatalf("%d distinct ids for %d records", len(first), s.N)
	}
	again := maps.Collect(Records(s))
	mal, covered := 0, map[string]bool{}
	for id, body := range first {
		if !bytes.Equal(body, again[id]) {
			t.Fatalf("%s differs between two runs with the same seed", id)
		}
		r := parse(t, body)
		if r.ID != id || r.Modified.IsZero() || len(r.Affected) == 0 {
			t.Fatalf("%s: %+v", id, r)
		}
		a := r.Affected[0]
		covered[a.Package.Name] = true
		if a.Package.Ecosystem != "npm" || (len(a.Ranges) == 0 && len(a.Versions) == 0) {
			t.Fatalf("%s affects %+v", id, a)
		}
		switch {
		case strings.HasPrefix(id, "MAL-"):
			mal++
			if !origins(r) {
				t.Errorf("%s has no malicious-packages-origins", id)
			}
			if len(a.Ranges) > 0 && a.Ranges[0].Events[0].Introduced != "0" {
				t.Errorf("%s: a MAL range that does not start at 0: %+v", id, a.Ranges)
			}
		case strings.HasPrefix(id, "GHSA-"):
			if len(r.Aliases) != 1 || !strings.HasPrefix(r.Aliases[0], "CVE-") ||
				len(r.Severity) != 1 || !strings.HasPrefix(r.Severity[0].Score, "CVSS:3.1/") {
				t.Errorf("%s: aliases %v, severity %+v", id, r.Aliases, r.Severity)
			}
			if ty := a.Ranges[0].Type; ty != "ECOSYSTEM" && ty != "SEMVER" {
				t.Errorf("%s: range type %s", id, ty)
			}
		default:
			t.Errorf("id %s is neither GHSA nor MAL", id)
		}
	}
	if mal < 450 || mal > 750 {
		t.Errorf("%d MAL records of %d, for a share of 0.3", mal, s.N)
	}
	if !covered["@demo/seo"] || !covered["left-pad"] {
		t.Errorf("the given packages are not all covered: %v %v", covered["@demo/seo"], covered["left-pad"])
	}
	if cves := CVEs(s); len(cves) != s.N-mal {
		t.Errorf("CVEs gives %d, the records have %d", len(cves), s.N-mal)
	}
}

func TestRecordForATest(t *testing.T) {
	t.Parallel()
	r := parse(t, Record("GHSA-aaaa-bbbb-cccc", "lodash", KindVuln, "4.0.0", "4.17.21", "CVE-2021-23337"))
	if r.ID != "GHSA-aaaa-bbbb-cccc" || r.Affected[0].Package.Name != "lodash" || r.Aliases[0] != "CVE-2021-23337" ||
		r.Affected[0].Ranges[0].Events[0].Introduced != "4.0.0" || r.Affected[0].Ranges[0].Events[1].Fixed != "4.17.21" {
		t.Errorf("%+v", r)
	}
	r = parse(t, Record("MAL-2025-1", "evil-pkg", KindMalware, "", ""))
	if !origins(r) || r.ID != "MAL-2025-1" {
		t.Errorf("%+v", r)
	}
}

func TestArchiveAndModifiedIDs(t *testing.T) {
	t.Parallel()
	s := Spec{N: 300, Seed: 3, MalShare: 0.5}
	var buf bytes.Buffer
	if err := WriteArchive(&buf, Records(s)); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Collect(Records(s))
	if len(zr.File) != s.N {
		t.Fatalf("%d entries", len(zr.File))
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		body, _ := io.ReadAll(rc)
		rc.Close()
		if f.Method != zip.Deflate || !bytes.Equal(body, want[strings.TrimSuffix(f.Name, ".json")]) {
			t.Fatalf("entry %s (method %d) is not its record", f.Name, f.Method)
		}
	}
	list, err := Modifieds(Records(s))
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	if err := ModifiedIDs(&csv, list); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&csv)
	var prev time.Time
	lines := 0
	for sc.Scan() {
		tm, id, ok := strings.Cut(sc.Text(), ",")
		at, err := time.Parse(time.RFC3339Nano, tm)
		if !ok || err != nil || want[id] == nil {
			t.Fatalf("line %q", sc.Text())
		}
		if lines > 0 && at.After(prev) {
			t.Fatalf("line %q is newer than the one before: not newest first", sc.Text())
		}
		prev = at
		lines++
	}
	if lines != s.N {
		t.Errorf("%d lines", lines)
	}
}

func TestKEVAndEPSS(t *testing.T) {
	t.Parallel()
	released := time.Date(2026, 11, 20, 16, 2, 30, 0, time.UTC)
	var kev bytes.Buffer
	if err := WriteKEV(&kev, KEVCatalog{Released: released, Entries: KEVEntries([]string{"CVE-2026-1", "CVE-2026-2"}, released, 1)}); err != nil {
		t.Fatal(err)
	}
	var k struct {
		CatalogVersion  string
		Count           int
		Vulnerabilities []map[string]any
	}
	if err := json.Unmarshal(kev.Bytes(), &k); err != nil || k.Count != 2 || k.CatalogVersion != "2026.11.20" || len(k.Vulnerabilities) != 2 {
		t.Fatalf("%v %+v", err, k)
	}
	for _, field := range []string{"cveID", "vendorProject", "product", "vulnerabilityName", "dateAdded", "shortDescription",
		"requiredAction", "dueDate", "knownRansomwareCampaignUse", "notes", "cwes"} {
		if _, ok := k.Vulnerabilities[0][field]; !ok {
			t.Errorf("no %s in a KEV entry", field)
		}
	}
	var epss bytes.Buffer
	if err := WriteEPSS(&epss, EPSSFile{Model: "v2025.03.14", Date: released, Scores: EPSSScores([]string{"CVE-2026-1"}, 1)}); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&epss)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(zr)
	lines := strings.Split(string(text), "\n")
	if lines[0] != "#model_version:v2025.03.14,score_date:2026-11-20T00:00:00+0000" || lines[1] != "cve,epss,percentile" ||
		!strings.HasPrefix(lines[2], "CVE-2026-1,0.") || len(lines) != 4 {
		t.Errorf("EPSS file:\n%s", text)
	}
}

func TestBadInputs(t *testing.T) {
	t.Parallel()
	var bomb bytes.Buffer
	if err := WriteZipBomb(&bomb, "GHSA-bomb-bomb-bomb.json", 256<<20); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(bomb.Bytes()), int64(bomb.Len()))
	if err != nil || len(zr.File) != 1 || zr.File[0].UncompressedSize64 != 256<<20 || bomb.Len() > 2<<20 {
		t.Fatalf("bomb of %d bytes: %v, %+v", bomb.Len(), err, zr.File)
	}
	long := LongRecord("GHSA-long-long-long", "left-pad", 10<<20)
	var r struct {
		ID string `json:"id"` // more than osv.MaxRecordBytes: the feeds skip it, which is what it is for
	}
	if err := json.Unmarshal(long, &r); err != nil || r.ID != "GHSA-long-long-long" || len(long) < 10<<20 || len(long) > 11<<20 {
		t.Errorf("long record of %d bytes: %v", len(long), err)
	}
}
