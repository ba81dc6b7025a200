package feed

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
)

func TestParseList(t *testing.T) {
	t.Parallel()
	feeds, err := ParseList(" osv=https://m.example.org/npm/all.zip , KEV=http://m.example.org/kev.json,epss=https://m.example.org/e.csv.gz,")
	if err != nil {
		t.Fatal(err)
	}
	if len(feeds) != 3 || feeds[0] != (Feed{readmodel.FeedOSV, "https://m.example.org/npm/all.zip"}) || feeds[1].Kind != readmodel.FeedKEV || feeds[2].Kind != readmodel.FeedEPSS {
		t.Fatalf("feeds %+v", feeds)
	}
	if feeds, err := ParseList(""); err != nil || feeds != nil {
		t.Errorf("empty: %v %v", feeds, err)
	}
	bad := map[string]string{
		"kev=https://a.example/k,kev=https://b.example/k":         "twice",
		"osv=https://a.example/all.zip,osv-api=https://b.example": "both configured",
		"nvd=https://a.example/":                                  "unknown kind",
		"kev":                                                     "KIND=URL",
		"kev=/relative/kev.json":                                  "absolute http or https",
		"epss=ftp://a.example/e.csv.gz":                           "absolute http or https",
	}
	for in, want := range bad {
		if _, err := ParseList(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
		}
	}
	if len(readmodel.AllFeedKinds()) != 4 || !readmodel.FeedOSVAPI.Valid() || readmodel.FeedKind("x").Valid() {
		t.Error("kinds")
	}
}

func TestReadModifiedIDs(t *testing.T) {
	t.Parallel()
	file := "2024-05-03T10:00:00Z,GHSA-cccc-cccc-cccc\r\n2024-05-02T10:00:00.5Z,MAL-2024-2\n2024-05-01T10:00:00Z,GHSA-aaaa-aaaa-aaaa\n2024-04-01T00:00:00Z,GHSA-old\n"
	since := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	ids, tooMany, err := ReadModifiedIDs(strings.NewReader(file), since, 10)
	if err != nil || tooMany {
		t.Fatal(err, tooMany)
	}
	if len(ids) != 2 || ids[0].ID != "GHSA-cccc-cccc-cccc" || ids[1].ID != "MAL-2024-2" || !ids[1].At.Equal(time.Date(2024, 5, 2, 10, 0, 0, 5e8, time.UTC)) {
		t.Fatalf("ids %+v", ids)
	}
	// The exporter sorts as strings: within one second, a trimmed
	// fraction sorts after the whole second; both lines are read.
	sameSecond := "2024-05-01T10:00:00Z,GHSA-whole\n2024-05-01T10:00:00.25Z,GHSA-frac\n2024-05-01T09:59:59Z,GHSA-old\n"
	ids, _, err = ReadModifiedIDs(strings.NewReader(sameSecond), time.Date(2024, 5, 1, 10, 0, 0, 1e8, time.UTC), 0)
	if err != nil || len(ids) != 1 || ids[0].ID != "GHSA-frac" {
		t.Fatalf("same second: %+v %v", ids, err)
	}
	ids, tooMany, err = ReadModifiedIDs(strings.NewReader(file), time.Time{}, 3)
	if err != nil || !tooMany || len(ids) != 3 {
		t.Fatalf("too many: %d %v %v", len(ids), tooMany, err)
	}
	bad := map[string]string{
		"2024-05-03T10:00:00Z,GHSA-a\nyesterday,GHSA-b\n":            "line 2",
		"2024-05-03T10:00:00Z,GHSA-a\n2024-05-04T10:00:00Z,GHSA-b\n": "not sorted",
		"2024-05-03T10:00:00Z,npm/GHSA-a\n":                          "index of all ecosystems",
		"2024-05-03T10:00:00Z\n":                                     "line 1",
		strings.Repeat("x", 5000) + "\n":                             "longer than",
	}
	for in, want := range bad {
		if _, _, err := ReadModifiedIDs(strings.NewReader(in), time.Time{}, 0); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want ErrSchema saying %q", in, err, want)
		}
	}
}

func TestSiblingURL(t *testing.T) {
	t.Parallel()
	for _, c := range [][3]string{
		{"https://m.example.org/osv/npm/all.zip", "modified_id.csv", "https://m.example.org/osv/npm/modified_id.csv"},
		{"https://m.example.org/osv/npm/all.zip?token=t", "GHSA-aaaa-bbbb-cccc.json", "https://m.example.org/osv/npm/GHSA-aaaa-bbbb-cccc.json?token=t"},
		{"http://127.0.0.1:8080/all.zip", "modified_id.csv", "http://127.0.0.1:8080/modified_id.csv"},
	} {
		got, err := SiblingURL(c[0], c[1])
		if err != nil || got != c[2] {
			t.Errorf("SiblingURL(%q, %q) = %q %v, want %q", c[0], c[1], got, err, c[2])
		}
	}
	for _, name := range []string{"", "..", "a/b.json"} {
		if _, err := SiblingURL("https://m.example.org/all.zip", name); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	if _, err := SiblingURL("file:///all.zip", "x.json"); err == nil {
		t.Error("file URL accepted")
	}
}

func TestReadKEVRealCatalogue(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/kev.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cat, skipped, err := ReadKEV(f, 4<<20)
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	if cat.Version != "2025.02.25" || !cat.Released.Equal(time.Date(2025, 2, 25, 20, 33, 53, 367600000, time.UTC)) || len(cat.Entries) != 5 {
		t.Fatalf("catalogue %q %v %d entries", cat.Version, cat.Released, len(cat.Entries))
	}
	e := cat.Entries[2]
	if e.CVE != "CVE-2025-0111" || e.Vendor != "Palo Alto Networks" || !strings.Contains(e.Description, "\u201cnobody\u201d") ||
		!e.DateAdded.Equal(time.Date(2025, 2, 20, 0, 0, 0, 0, time.UTC)) || !e.DueDate.Equal(time.Date(2025, 3, 13, 0, 0, 0, 0, time.UTC)) ||
		e.Ransomware != "Unknown" || !strings.HasPrefix(e.RequiredAction, "Apply mitigations") || !strings.Contains(e.Notes, "CVE-2025-0111") {
		t.Errorf("entry %+v", e)
	}
	if cat.Entries[4].Vendor != "SimpleHelp" {
		t.Errorf("vendor %q not trimmed", cat.Entries[4].Vendor)
	}
	if _, _, err := ReadKEV(bytes.NewReader(mustRead(t, "testdata/kev.json")), 1000); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("capped: %v", err)
	}
}

// A file of another schema is refused in clear words; a bad entry is
// skipped and listed with its JSON path, the others stand.
func TestReadKEVBadInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"status":"OK","data":[{"cve":"CVE-2021-44228","epss":"0.94"}]}`: "no vulnerabilities array",
		`{"vulnerabilities":{"cveID":"CVE-2021-44228"}}`:                  "no vulnerabilities array",
		`[{"cveID":"CVE-2021-44228"}]`:                                    "not the KEV catalogue's schema",
		`cve,epss,percentile`:                                             "not the KEV catalogue's schema",
	} {
		if _, _, err := ReadKEV(strings.NewReader(in), 1<<20); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.30q: %v, want ErrSchema saying %q", in, err, want)
		}
	}
	in := `{"catalogVersion":"x","vulnerabilities":[
	  {"cveID":"CVE-2021-44228","dateAdded":"2021-12-10","dueDate":"2021-12-24","knownRansomwareCampaignUse":"Known"},
	  {"cveID":"CVE-21-1","dateAdded":"2021-12-10","dueDate":"2021-12-24"},
	  {"cveID":"CVE-2022-0001","dateAdded":"10/12/2021","dueDate":"2021-12-24"},
	  {"cveID":"CVE-2022-0002","dateAdded":"2021-12-10"},
	  {"cveID":12,"dateAdded":"2021-12-10","dueDate":"2021-12-24"},
	  {"cveID":"CVE-2021-44228","dateAdded":"2021-12-10","dueDate":"2021-12-24"}]}`
	cat, skipped, err := ReadKEV(strings.NewReader(in), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Entries) != 1 || cat.Entries[0].Ransomware != "Known" {
		t.Errorf("entries %+v", cat.Entries)
	}
	want := []string{"vulnerabilities[1].cveID", "vulnerabilities[2].dateAdded", "vulnerabilities[3].dueDate", "vulnerabilities[4]", "vulnerabilities[5].cveID"}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %+v", skipped)
	}
	for i, w := range want {
		if skipped[i].Path != w || skipped[i].Reason == "" {
			t.Errorf("skipped[%d] = %+v, want path %s", i, skipped[i], w)
		}
	}
	if skipped[1].ID != "CVE-2022-0001" || !strings.Contains(skipped[3].Reason, "cveID is a number") || !strings.Contains(skipped[4].Reason, "already listed at vulnerabilities[0]") {
		t.Errorf("skipped %+v", skipped)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// The real file reads the same gzipped (as served) and plain (unzipped by
// hand), header and all.
func TestReadEPSSRealFile(t *testing.T) {
	t.Parallel()
	plain := mustRead(t, "testdata/epss.csv")
	for name, in := range map[string][]byte{"gzip": gz(plain), "plain": plain} {
		var scores []EPSSScore
		hdr, skipped, err := ReadEPSS(bytes.NewReader(in), 1<<20, func(s EPSSScore) error { scores = append(scores, s); return nil })
		if err != nil || len(skipped) != 0 {
			t.Fatalf("%s: %v %v", name, err, skipped)
		}
		if hdr.Model != "v2023.03.01" || !hdr.ScoreDate.Equal(time.Date(2024, 7, 25, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: header %+v", name, hdr)
		}
		if len(scores) != 15 || scores[4] != (EPSSScore{"CVE-1999-0005", 0.91963, 0.98972}) {
			t.Errorf("%s: %d scores, [4] = %+v", name, len(scores), scores[4])
		}
	}
	hdr, _, err := ReadEPSS(strings.NewReader("#model_version:v2026.06.15,score_date:2026-08-20T12:03:07Z\npercentile,cve,epss\n0.87734,CVE-1999-0001,0.03351\n"), 1<<20,
		func(s EPSSScore) error {
			if s != (EPSSScore{"CVE-1999-0001", 0.03351, 0.87734}) {
				t.Errorf("reordered columns: %+v", s)
			}
			return nil
		})
	if err != nil || !hdr.ScoreDate.Equal(time.Date(2026, 8, 20, 12, 3, 7, 0, time.UTC)) {
		t.Errorf("RFC 3339 score_date: %+v %v", hdr, err)
	}
}

// Missing columns are ErrSchema; bad rows are skipped with their line
// number; the decompressed bytes are capped, whatever the compressed size.
func TestReadEPSSBadInput(t *testing.T) {
	t.Parallel()
	none := func(EPSSScore) error { return nil }
	for in, want := range map[string]string{
		"#model_version:v1,score_date:2024-07-25\ncve,score\nCVE-1999-0001,0.1\n": "lacks the epss, percentile column(s)",
		"#model_version:v1,score_date:yesterday\ncve,epss,percentile\n":           "score_date",
		"": "no cve,epss,percentile header",
	} {
		if _, _, err := ReadEPSS(strings.NewReader(in), 1<<20, none); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.30q: %v, want ErrSchema saying %q", in, err, want)
		}
	}
	in := "cve,epss,percentile\nCVE-1999-0001,0.1,0.5\nGHSA-xxxx,0.1,0.5\nCVE-1999-0002,1.5,0.5\nCVE-1999-0003,0.1\nCVE-1999-0004,NaN,0.1\nCVE-1999-0005,0.2,-0.1\nCVE-1999-0006,0.3,0.9\n"
	var got []string
	_, skipped, err := ReadEPSS(strings.NewReader(in), 1<<20, func(s EPSSScore) error { got = append(got, s.CVE); return nil })
	if err != nil || len(got) != 2 || got[1] != "CVE-1999-0006" {
		t.Fatalf("%v %v", got, err)
	}
	wantLines := []string{"line 3", "line 4", "line 5", "line 6", "line 7"}
	if len(skipped) != len(wantLines) {
		t.Fatalf("skipped %+v", skipped)
	}
	for i, w := range wantLines {
		if skipped[i].Path != w {
			t.Errorf("skipped[%d] = %+v, want %s", i, skipped[i], w)
		}
	}
	if skipped[1].ID != "CVE-1999-0002" || !strings.Contains(skipped[1].Reason, "outside [0, 1]") {
		t.Errorf("skipped[1] = %+v", skipped[1])
	}
	huge := gz(append([]byte("cve,epss,percentile\n"), bytes.Repeat([]byte("CVE-1999-0001,0.1,0.5\n"), 500_000)...))
	if len(huge) > 1<<20 {
		t.Fatalf("compressed %d", len(huge))
	}
	if _, _, err := ReadEPSS(bytes.NewReader(huge), 1<<20, none); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("capped: %v", err)
	}
	stop := errors.New("stop")
	if _, _, err := ReadEPSS(strings.NewReader(in), 1<<20, func(EPSSScore) error { return stop }); !errors.Is(err, stop) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("callback error: %v", err)
	}
}
