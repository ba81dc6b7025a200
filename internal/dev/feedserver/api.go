package feedserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// maxQueryBody caps a querybatch request's body.
const maxQueryBody = 4 << 20

// PageSize makes the API answer at most n vulnerabilities per query, with
// a next_page_token for the rest; 0 (the default) answers all at once.
func (s *Server) PageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

type batchRequest struct {
	Queries []struct {
		Package struct {
			Name      string `json:"name"`
			Ecosystem string `json:"ecosystem"`
		} `json:"package"`
		Version   string `json:"version"`
		PageToken string `json:"page_token"`
	} `json:"queries"`
}

type batchVuln struct {
	ID       string `json:"id"`
	Modified string `json:"modified"`
}

type batchResult struct {
	Vulns         []batchVuln `json:"vulns,omitempty"`
	NextPageToken string      `json:"next_page_token,omitempty"`
}

// api answers the OSV-compatible API from recs: querybatch gives, for each
// query, the ids and modified times of the records that affect the
// package at that version; vulns/{id} gives a record.
func (s *Server) api(w http.ResponseWriter, r *http.Request, recs *recordSet, pageSize int) {
	rest := strings.TrimPrefix(r.URL.Path, APIPath)
	switch {
	case rest == "/v1/querybatch" && r.Method == http.MethodPost:
		s.queryBatch(w, r, recs, pageSize)
	case strings.HasPrefix(rest, "/v1/vulns/") && r.Method == http.MethodGet:
		c := recs.byID[strings.TrimPrefix(rest, "/v1/vulns/")]
		if c == nil {
			apiError(w, http.StatusNotFound, 5, "Bug not found.")
			return
		}
		s.serveContent(w, r, c)
	default:
		apiError(w, http.StatusNotFound, 5, "Not found.")
	}
}

func (s *Server) queryBatch(w http.ResponseWriter, r *http.Request, recs *recordSet, pageSize int) {
	var req batchRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxQueryBody)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, 3, "Invalid request body: "+err.Error())
		return
	}
	results := make([]batchResult, 0, len(req.Queries))
	for _, q := range req.Queries {
		v, err := semver.NewVersion(q.Version)
		if err != nil || q.Package.Name == "" {
			apiError(w, http.StatusBadRequest, 3, "Invalid query: a package name and a version are needed.")
			return
		}
		start := 0
		if q.PageToken != "" {
			if start, err = strconv.Atoi(q.PageToken); err != nil || start < 0 {
				apiError(w, http.StatusBadRequest, 3, "Invalid page token.")
				return
			}
		}
		var res batchResult
		found := 0
		for _, rec := range recs.index {
			if rec.withdrawn || !slices.ContainsFunc(rec.affected, func(a affectedPkg) bool {
				return a.Package.Name == q.Package.Name && (q.Package.Ecosystem == "" || a.Package.Ecosystem == q.Package.Ecosystem) &&
					affects(a, v, q.Version)
			}) {
				continue
			}
			found++
			if found <= start {
				continue
			}
			if pageSize > 0 && len(res.Vulns) == pageSize {
				res.NextPageToken = strconv.Itoa(start + pageSize)
				break
			}
			res.Vulns = append(res.Vulns, batchVuln{ID: rec.id, Modified: rec.modified.UTC().Format(time.RFC3339Nano)})
		}
		results = append(results, res)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"results": results}) //nolint:errcheck // a client that hung up is the test's to notice
}

// affects is a simple reading of OSV's rules, enough for a test server:
// the version is listed, or a SEMVER or ECOSYSTEM range's events, in the
// order given, leave it introduced and not fixed (or not past the last
// affected version).
func affects(a affectedPkg, v *semver.Version, raw string) bool {
	if slices.Contains(a.Versions, raw) {
		return true
	}
	cmp := func(other string) int {
		o, err := semver.NewVersion(other)
		if err != nil {
			return -1 // an event that is no version moves nothing the right way: treat v as before it
		}
		return v.Compare(o)
	}
	for _, rg := range a.Ranges {
		if rg.Type != "SEMVER" && rg.Type != "ECOSYSTEM" {
			continue
		}
		in := false
		for _, e := range rg.Events {
			switch {
			case e.Introduced != "":
				if e.Introduced == "0" || cmp(e.Introduced) >= 0 {
					in = true
				}
			case e.Fixed != "":
				if cmp(e.Fixed) >= 0 {
					in = false
				}
			case e.LastAffected != "":
				if cmp(e.LastAffected) > 0 {
					in = false
				}
			}
		}
		if in {
			return true
		}
	}
	return false
}

func apiError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"code": code, "message": message}) //nolint:errcheck // as above
}
