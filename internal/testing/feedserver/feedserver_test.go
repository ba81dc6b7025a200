package feedserver_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
)

func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestServesWhatWasSetWithETagsAnd304(t *testing.T) {
	t.Parallel()
	s := feedserver.New(t)
	if resp, _ := get(t, s.ArchiveURL()); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("nothing set: %s", resp.Status)
	}
	spec := osvgen.Spec{N: 50, Seed: 1, MalShare: 0.2}
	s.SetRecords(osvgen.Records(spec))
	want := maps.Collect(osvgen.Records(spec))

	resp, body := get(t, s.ArchiveURL())
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || !strings.HasPrefix(etag, `"`) || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("archive: %s, ETag %q, Last-Modified %q", resp.Status, etag, resp.Header.Get("Last-Modified"))
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil || len(zr.File) != spec.N {
		t.Fatalf("archive: %v, %d entries", err, len(zr.File))
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(b, want[strings.TrimSuffix(f.Name, ".json")]) {
			t.Fatalf("entry %s is not the record set", f.Name)
		}
	}
	if resp, _ := get(t, s.ArchiveURL(), "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("conditional request for the same archive: %s", resp.Status)
	}
	if s.Requests(feedserver.ArchivePath) != 3 || s.NotModified(feedserver.ArchivePath) != 1 {
		t.Errorf("counted %d requests, %d 304s", s.Requests(feedserver.ArchivePath), s.NotModified(feedserver.ArchivePath))
	}
	for id, rec := range want {
		if resp, b := get(t, s.URL+feedserver.RecordPath(id)); resp.StatusCode != 200 || !bytes.Equal(b, rec) {
			t.Fatalf("record %s: %s", id, resp.Status)
		}
		break
	}
	_, csv := get(t, s.URL+feedserver.ModifiedPath)
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != spec.N {
		t.Errorf("modified_id.csv has %d lines", len(lines))
	}
	s.ModifiedCSV(false)
	if resp, _ := get(t, s.URL+feedserver.ModifiedPath); resp.StatusCode != http.StatusNotFound {
		t.Errorf("modified_id.csv switched off: %s", resp.Status)
	}

	// Replaced records: a new archive, a new tag; the old tag is no longer 304.
	s.SetRecords(osvgen.Records(osvgen.Spec{N: 10, Seed: 2}))
	if resp, _ := get(t, s.ArchiveURL(), "If-None-Match", etag); resp.StatusCode != 200 || resp.Header.Get("ETag") == etag {
		t.Errorf("after a change: %s, ETag %s", resp.Status, resp.Header.Get("ETag"))
	}

	s.SetRaw(feedserver.ArchivePath, []byte("PK not a zip"))
	if _, b := get(t, s.ArchiveURL()); string(b) != "PK not a zip" {
		t.Errorf("raw bytes: %q", b)
	}
	s.SetRaw(feedserver.ArchivePath, nil)
	if _, b := get(t, s.ArchiveURL()); bytes.HasPrefix(b, []byte("PK not")) {
		t.Error("the raw override was not taken away")
	}
	s.Fail(feedserver.KEVPath, http.StatusBadGateway)
	if resp, _ := get(t, s.KEVURL()); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("failing KEV: %s", resp.Status)
	}
}

func TestKEVAndEPSS(t *testing.T) {
	t.Parallel()
	s := feedserver.New(t)
	released := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	s.SetKEV(osvgen.KEVCatalog{Released: released, Entries: osvgen.KEVEntries([]string{"CVE-2026-1"}, released, 1)})
	s.SetEPSS(osvgen.EPSSFile{Model: "v2025.03.14", Date: released, Scores: osvgen.EPSSScores([]string{"CVE-2026-1"}, 1)})
	resp, body := get(t, s.KEVURL())
	var kev struct{ Vulnerabilities []struct{ CveID string } }
	if err := json.Unmarshal(body, &kev); err != nil || len(kev.Vulnerabilities) != 1 || kev.Vulnerabilities[0].CveID != "CVE-2026-1" {
		t.Errorf("KEV: %v %s", err, body)
	}
	if r2, _ := get(t, s.KEVURL(), "If-Modified-Since", resp.Header.Get("Last-Modified")); r2.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %s", r2.Status)
	}
	if resp, body := get(t, s.EPSSURL()); resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		t.Errorf("EPSS: %s, % x", resp.Status, body[:min(4, len(body))])
	}
	if !strings.Contains(s.Setting(), "kev="+s.KEVURL()) || !strings.HasPrefix(s.Setting(), "osv="+s.ArchiveURL()) {
		t.Errorf("setting %s", s.Setting())
	}
}

func query(t *testing.T, s *feedserver.Server, name, version, token string) (ids []string, next string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"queries": []any{map[string]any{
		"package": map[string]string{"name": name, "ecosystem": "npm"}, "version": version, "page_token": token}}})
	resp, err := http.Post(s.APIURL()+"/v1/querybatch", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Vulns         []struct{ ID, Modified string }
			NextPageToken string `json:"next_page_token"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Results) != 1 {
		t.Fatalf("querybatch: %s %v %+v", resp.Status, err, out)
	}
	for _, v := range out.Results[0].Vulns {
		ids = append(ids, v.ID)
	}
	return ids, out.Results[0].NextPageToken
}

func TestAPIMatchesPagesAndServesRecords(t *testing.T) {
	t.Parallel()
	s := feedserver.New(t)
	withdrawn := bytes.Replace(osvgen.Record("GHSA-wwww-wwww-wwww", "lodash", osvgen.KindVuln, "0", "5.0.0"),
		[]byte(`"summary"`), []byte(`"withdrawn": "2026-01-01T00:00:00Z", "summary"`), 1)
	recs := map[string][]byte{
		"GHSA-aaaa-aaaa-aaaa": osvgen.Record("GHSA-aaaa-aaaa-aaaa", "lodash", osvgen.KindVuln, "4.0.0", "4.17.21", "CVE-2021-23337"),
		"GHSA-bbbb-bbbb-bbbb": osvgen.Record("GHSA-bbbb-bbbb-bbbb", "lodash", osvgen.KindVuln, "0", "4.17.12", "CVE-2019-10744"),
		"MAL-2025-1":          osvgen.Record("MAL-2025-1", "lodash", osvgen.KindMalware, "", ""),
		"GHSA-cccc-cccc-cccc": osvgen.Record("GHSA-cccc-cccc-cccc", "other", osvgen.KindVuln, "0", ""),
		"GHSA-wwww-wwww-wwww": withdrawn,
		"GHSA-2222-3333-4444": []byte(`{"id": "GHSA-2222-3333-4444", "modified": "2026-01-02T00:00:00Z", "affected": [
			{"package": {"ecosystem": "npm", "name": "twolines"}, "ranges": [{"type": "ECOSYSTEM",
			 "events": [{"introduced": "0"}, {"fixed": "1.2.3"}, {"introduced": "2.0.0"}, {"fixed": "2.0.5"}]}]},
			{"package": {"ecosystem": "npm", "name": "nofix"}, "ranges": [{"type": "SEMVER",
			 "events": [{"introduced": "1.0.0"}, {"last_affected": "1.4.0"}]}]},
			{"package": {"ecosystem": "npm", "name": "listed"}, "versions": ["3.1.4"]}]}`),
	}
	s.SetRecords(maps.All(recs))
	ids, _ := query(t, s, "lodash", "4.17.15", "")
	if strings.Join(sorted(ids), " ") != "GHSA-aaaa-aaaa-aaaa MAL-2025-1" {
		t.Errorf("lodash 4.17.15: %v", ids)
	}
	if ids, _ := query(t, s, "lodash", "4.17.21", ""); strings.Join(ids, " ") != "MAL-2025-1" {
		t.Errorf("lodash 4.17.21: %v", ids)
	}
	for q, want := range map[[2]string]bool{
		{"twolines", "1.2.2"}: true, {"twolines", "1.2.3"}: false, {"twolines", "1.9.0"}: false,
		{"twolines", "2.0.4"}: true, {"twolines", "2.0.5"}: false, {"nofix", "0.9.0"}: false,
		{"nofix", "1.4.0"}: true, {"nofix", "1.4.1"}: false, {"listed", "3.1.4"}: true, {"listed", "3.1.5"}: false,
	} {
		if ids, _ := query(t, s, q[0], q[1], ""); (len(ids) == 1) != want {
			t.Errorf("%s %s: %v, want affected %v", q[0], q[1], ids, want)
		}
	}
	s.PageSize(1)
	var all []string
	for token, pages := "", 0; ; pages++ {
		ids, next := query(t, s, "lodash", "4.10.0", token)
		all = append(all, ids...)
		if next == "" || pages > 5 {
			break
		}
		token = next
	}
	if strings.Join(sorted(all), " ") != "GHSA-aaaa-aaaa-aaaa GHSA-bbbb-bbbb-bbbb MAL-2025-1" {
		t.Errorf("paged lodash 4.10.0: %v", all)
	}
	if resp, b := get(t, s.APIURL()+"/v1/vulns/MAL-2025-1"); resp.StatusCode != 200 || !bytes.Equal(b, recs["MAL-2025-1"]) {
		t.Errorf("vulns/MAL-2025-1: %s", resp.Status)
	}
	if resp, _ := get(t, s.APIURL()+"/v1/vulns/GHSA-none"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown id: %s", resp.Status)
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestHoldAndSlow(t *testing.T) {
	t.Parallel()
	s := feedserver.New(t)
	s.SetRecords(osvgen.Records(osvgen.Spec{N: 200, Seed: 4}))

	release, arrived := s.Hold(feedserver.ArchivePath)
	done := make(chan int, 1)
	go func() {
		resp, err := http.Get(s.ArchiveURL())
		if err != nil {
			done <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the held request did not arrive")
	}
	select {
	case <-done:
		t.Fatal("a held request was answered before its release")
	default:
	}
	release()
	if status := <-done; status != 200 {
		t.Errorf("released request: %d", status)
	}

	// Slow: the headers come at once, the body at the rate given; the
	// client that gives up midway got only part of it.
	s.Slow(feedserver.ArchivePath, 2000)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.ArchiveURL(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength < 50000 {
		t.Fatalf("archive of %d bytes: too small to see slowness", resp.ContentLength)
	}
	start := time.Now()
	n, _ := io.CopyN(io.Discard, resp.Body, 600)
	if n != 600 || time.Since(start) < 150*time.Millisecond {
		t.Errorf("600 bytes in %v at 2000 bytes/s", time.Since(start))
	}
	cancel()
	_, err = io.Copy(io.Discard, resp.Body)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("reading on after giving up: %v", err)
	}
	resp.Body.Close()
}

// Bytes that are no record are served as given, in the archive and alone,
// listed in modified_id.csv, and matched by nothing.
func TestMalformedRecordsAreServedAsGiven(t *testing.T) {
	t.Parallel()
	s := feedserver.New(t)
	bad := []byte(`{"id": "GHSA-bad0-bad0-bad0", "affected": [`)
	good := osvgen.Record("GHSA-9999-9999-9999", "left-pad", osvgen.KindVuln, "0", "")
	s.SetRecords(maps.All(map[string][]byte{"GHSA-bad0-bad0-bad0": bad, "GHSA-9999-9999-9999": good}))
	if _, b := get(t, s.URL+feedserver.RecordPath("GHSA-bad0-bad0-bad0")); !bytes.Equal(b, bad) {
		t.Errorf("bad record served as %q", b)
	}
	if _, csv := get(t, s.URL+feedserver.ModifiedPath); !strings.Contains(string(csv), ",GHSA-bad0-bad0-bad0\n") {
		t.Errorf("modified_id.csv:\n%s", csv)
	}
	if ids, _ := query(t, s, "left-pad", "1.3.0", ""); strings.Join(ids, " ") != "GHSA-9999-9999-9999" {
		t.Errorf("left-pad 1.3.0: %v", ids)
	}
}
