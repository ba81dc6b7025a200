package demo

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/release"
)

func serveFeed(t *testing.T, f *Feeds, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, req)
	return rec
}

// The demo's feeds are an OSV archive whose records affect the demo site's
// installed npm versions as their stories say, a KEV catalogue naming the
// exploited CVE and EPSS scores for the CVEs; each is served with an ETag
// and answers 304 to it.
func TestDemoFeedsTellTheirStoriesOfTheInstalledPackages(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	f, err := NewFeeds(now)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPublisher(now)
	if err != nil {
		t.Fatal(err)
	}
	installed := map[string]string{}
	for _, c := range p.NpmManifest("http://127.0.0.1:1").Components {
		if name, ok := strings.CutPrefix(c.Source, npm.Source("")); ok {
			installed[name] = c.Version
		}
	}
	arch := serveFeed(t, f, FeedsArchivePath)
	body := arch.Body.Bytes()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("archive: %v", err)
	}
	affects := map[string]bool{}
	for _, e := range zr.File {
		rc, _ := e.Open()
		raw, _ := io.ReadAll(rc)
		rc.Close()
		var r struct {
			ID, Withdrawn string
			Aliases       []string
			Affected      []struct {
				Package  struct{ Ecosystem, Name string }
				Ranges   []struct{ Events []map[string]string }
				Versions []string
			}
		}
		if err := json.Unmarshal(raw, &r); err != nil || e.Name != r.ID+".json" || len(r.Affected) != 1 {
			t.Fatalf("%s: %v %+v", e.Name, err, r)
		}
		if got := serveFeed(t, f, FeedsPath+"osv/"+r.ID+".json").Body.Bytes(); !bytes.Equal(got, raw) {
			t.Errorf("%s served alone differs from its archive entry", r.ID)
		}
		a := r.Affected[0]
		v := mustVersion(t, installed[a.Package.Name])
		hit := false
		for _, l := range a.Versions {
			hit = hit || l == v.String()
		}
		for _, rg := range a.Ranges {
			in, fixed := rg.Events[0]["introduced"], rg.Events[1]["fixed"]
			hit = hit || ((in == "0" || !v.LessThan(mustVersion(t, in))) && v.LessThan(mustVersion(t, fixed)))
		}
		affects[r.ID] = hit && r.Withdrawn == "" && a.Package.Ecosystem == "npm"
	}
	for id, want := range map[string]bool{DemoExploitedAdvisory: true, DemoSearchAdvisory: true, DemoMaliciousRecord: true, DemoWithdrawnAdvisory: false} {
		if affects[id] != want {
			t.Errorf("%s affects the installed version: %v, want %v", id, affects[id], want)
		}
	}
	if len(affects) != 4 {
		t.Errorf("%d records", len(affects))
	}

	csv := serveFeed(t, f, FeedsPath+"osv/modified_id.csv").Body.String()
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 4 || !strings.HasSuffix(lines[0], ","+DemoExploitedAdvisory) {
		t.Errorf("modified_id.csv:\n%s", csv)
	}
	var kev struct {
		Vulnerabilities []struct{ CveID, DateAdded, DueDate string }
	}
	if err := json.Unmarshal(serveFeed(t, f, FeedsKEVPath).Body.Bytes(), &kev); err != nil || len(kev.Vulnerabilities) != 1 ||
		kev.Vulnerabilities[0].CveID != DemoExploitedCVE || kev.Vulnerabilities[0].DateAdded != "2026-11-21" || kev.Vulnerabilities[0].DueDate != "2026-12-12" {
		t.Errorf("KEV: %v %+v", err, kev)
	}
	zr2, err := gzip.NewReader(serveFeed(t, f, FeedsEPSSPath).Body)
	if err != nil {
		t.Fatal(err)
	}
	epss, _ := io.ReadAll(zr2)
	for _, cve := range []string{DemoExploitedCVE, DemoSearchCVE, "CVE-2026-99007"} {
		if !strings.Contains(string(epss), "\n"+cve+",") {
			t.Errorf("EPSS has no score for %s:\n%s", cve, epss)
		}
	}
	if again := serveFeed(t, f, FeedsArchivePath, "If-None-Match", arch.Header().Get("ETag")); again.Code != http.StatusNotModified {
		t.Errorf("conditional request: %d", again.Code)
	}
	if got, want := FeedsSetting("http://127.0.0.1:9"), "osv=http://127.0.0.1:9/feeds/osv/all.zip,kev=http://127.0.0.1:9/feeds/kev.json,epss=http://127.0.0.1:9/feeds/epss.csv.gz"; got != want {
		t.Errorf("FeedsSetting: %s", got)
	}
}

// mustVersion reads a version the demo wrote, which must read.
func mustVersion(t *testing.T, s string) *semver.Version {
	t.Helper()
	v, err := release.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
