package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/upcheck/upcheck/internal/fetch"
)

// osvServer answers querybatch as an OSV-compatible API does: package
// "pkg-N" has one advisory "GHSA-N"; package "paged" has three, one per
// page; every batch's size is recorded.
type osvServer struct {
	mu      sync.Mutex
	batches []int
	hits    atomic.Int64
}

func (s *osvServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/querybatch":
	case r.Method == http.MethodGet && r.URL.Path == "/v1/vulns/GHSA-1":
		_, _ = io.WriteString(w, `{"id":"GHSA-1","modified":"2024-05-01T10:00:00Z"}`)
		return
	case r.Method == http.MethodGet && r.URL.Path == "/v1/vulns/GHSA-huge":
		_, _ = io.WriteString(w, `{"id":"GHSA-huge","details":"`+strings.Repeat("x", 2000)+`"}`)
		return
	default:
		http.NotFound(w, r)
		return
	}
	var req struct {
		Queries []struct {
			Package   struct{ Name, Ecosystem string } `json:"package"`
			Version   string                           `json:"version"`
			PageToken string                           `json:"page_token"`
		} `json:"queries"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Queries) > MaxBatch {
		http.Error(w, "bad batch", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.batches = append(s.batches, len(req.Queries))
	s.mu.Unlock()
	type result struct {
		Vulns []map[string]string `json:"vulns,omitempty"`
		Next  string              `json:"next_page_token,omitempty"`
	}
	var out struct {
		Results []result `json:"results"`
	}
	for _, q := range req.Queries {
		if q.Package.Ecosystem != "npm" {
			http.Error(w, "ecosystem", http.StatusBadRequest)
			return
		}
		var res result
		switch {
		case q.Package.Name == "paged":
			page := map[string]string{"": "1", "t1": "2", "t2": "3"}[q.PageToken]
			res.Vulns = []map[string]string{{"id": "GHSA-paged-" + page, "modified": "2024-05-0" + page + "T00:00:00Z"}}
			if page != "3" {
				res.Next = "t" + page
			}
		case q.Package.Name == "clean":
		default:
			n := strings.TrimPrefix(q.Package.Name, "pkg-")
			res.Vulns = []map[string]string{{"id": "GHSA-" + n, "modified": "2024-05-01T10:00:00Z"}}
		}
		out.Results = append(out.Results, res)
	}
	_ = json.NewEncoder(w).Encode(out)
}

// 2,500 queries go in batches of at most 1000; a paged result is followed
// to its last page; each query gets its own advisories, in order.
func TestAPIQueryBatch(t *testing.T) {
	t.Parallel()
	s := &osvServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	api := NewAPI(newFetcher(t, fetch.Config{AllowPrivate: true}), srv.URL+"/")

	qs := make([]Query, 2500)
	for i := range qs {
		qs[i] = Query{Name: fmt.Sprintf("pkg-%d", i), Version: "1.0.0"}
	}
	qs[10] = Query{Name: "paged", Version: "1.0.0"}
	qs[1500] = Query{Name: "clean"}
	res, err := api.QueryBatch(t.Context(), qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2500 || len(res[0]) != 1 || res[0][0].ID != "GHSA-0" || res[0][0].Modified.IsZero() || res[2499][0].ID != "GHSA-2499" {
		t.Fatalf("results: %d, [0] %+v", len(res), res[0])
	}
	if len(res[1500]) != 0 {
		t.Errorf("clean package: %+v", res[1500])
	}
	if len(res[10]) != 3 || res[10][2].ID != "GHSA-paged-3" {
		t.Errorf("paged: %+v", res[10])
	}
	s.mu.Lock()
	batches := fmt.Sprint(s.batches)
	s.mu.Unlock()
	// The first chunk's paged query is asked again twice, alone.
	if batches != "[1000 1 1 1000 500]" {
		t.Errorf("batches %s, want [1000 1 1 1000 500]", batches)
	}

	rec, err := api.Vuln(t.Context(), "GHSA-1")
	if err != nil || !strings.Contains(string(rec), `"id":"GHSA-1"`) {
		t.Errorf("vuln: %q %v", rec, err)
	}
	api.MaxRecord = 1000
	if _, err := api.Vuln(t.Context(), "GHSA-huge"); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("huge record: %v", err)
	}
	if _, err := api.Vuln(t.Context(), "GHSA-missing"); !errors.Is(err, fetch.ErrStatus) {
		t.Errorf("missing record: %v", err)
	}
	if _, err := api.Vuln(t.Context(), "../admin"); err == nil {
		t.Error("an id with a slash was requested")
	}
}

// The API on a private address is refused unless allowed, before the
// server sees anything; an answer of the wrong shape is ErrSchema.
func TestAPIGuardAndSchema(t *testing.T) {
	t.Parallel()
	s := &osvServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	guarded := NewAPI(newFetcher(t, fetch.Config{}), srv.URL)
	if _, err := guarded.QueryBatch(t.Context(), []Query{{Name: "pkg-1"}}); !errors.Is(err, fetch.ErrPrivateAddress) {
		t.Errorf("querybatch: %v, want fetch.ErrPrivateAddress", err)
	}
	if _, err := guarded.Vuln(t.Context(), "GHSA-1"); !errors.Is(err, fetch.ErrPrivateAddress) {
		t.Errorf("vuln: %v, want fetch.ErrPrivateAddress", err)
	}
	if _, err := NewAPI(newFetcher(t, fetch.Config{AllowPrivate: true}), srv.URL).QueryBatch(t.Context(), []Query{{Name: " "}}); err == nil || !strings.Contains(err.Error(), "no package name") {
		t.Errorf("empty name: %v", err)
	}
	if s.hits.Load() != 0 {
		t.Errorf("the server saw %d requests", s.hits.Load())
	}

	for name, answer := range map[string]string{
		"fewer results": `{"results":[]}`,
		"not json":      `<html>`,
		"no id":         `{"results":[{"vulns":[{"modified":"2024-05-01T00:00:00Z"}]}]}`,
		"token loop":    `{"results":[{"next_page_token":"same"}]}`,
	} {
		wrong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, answer) }))
		api := NewAPI(newFetcher(t, fetch.Config{AllowPrivate: true}), wrong.URL)
		if _, err := api.QueryBatch(t.Context(), []Query{{Name: "pkg-1"}}); !errors.Is(err, ErrSchema) {
			t.Errorf("%s: %v, want ErrSchema", name, err)
		}
		wrong.Close()
	}
}
