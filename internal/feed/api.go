package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
)

// Bounds of the OSV-compatible API.
const (
	// MaxBatch is how many queries one querybatch carries: the API takes
	// at most 1000.
	MaxBatch = 1000
	// maxPages bounds the page tokens followed for one batch, so a server
	// answering tokens forever cannot hold a sync.
	maxPages = 100
	// DefaultMaxAnswer caps one querybatch answer: ids and dates only.
	DefaultMaxAnswer = 32 << 20
	// Ecosystem is the OSV ecosystem queried.
	Ecosystem = "npm"
)

// API queries an OSV-compatible API, for sites without the archive.
type API struct {
	f    *fetch.Fetcher
	base string
	// MaxAnswer caps a querybatch answer (DefaultMaxAnswer).
	MaxAnswer int64
	// MaxRecord caps one record fetched by Vuln (DefaultLimits().MaxRecord).
	MaxRecord int64
	// Timeout bounds each request (the fetcher's own when zero).
	Timeout time.Duration
}

// NewAPI returns an API client for base, the URL under which /v1/querybatch
// and /v1/vulns/{id} are served.
func NewAPI(f *fetch.Fetcher, base string) *API {
	return &API{f: f, base: strings.TrimRight(base, "/"), MaxAnswer: DefaultMaxAnswer, MaxRecord: DefaultLimits().MaxRecord}
}

// Query is one installed package of the npm ecosystem; an empty Version
// asks for every advisory of the package.
type Query struct{ Name, Version string }

// VulnRef is an advisory the API lists for a query: its id and when it
// last changed (zero when the API did not say).
type VulnRef struct {
	ID       string
	Modified time.Time
}

type batchQuery struct {
	Package   batchPackage `json:"package"`
	Version   string       `json:"version,omitempty"`
	PageToken string       `json:"page_token,omitempty"`
}

type batchPackage struct {
	Name      string `json:"name"`
	Ecosystem string `json:"ecosystem"`
}

type batchAnswer struct {
	Results []struct {
		Vulns []struct {
			ID       string `json:"id"`
			Modified string `json:"modified"`
		} `json:"vulns"`
		NextPageToken string `json:"next_page_token"`
	} `json:"results"`
}

// QueryBatch asks which advisories affect each query: the result has one
// list per query, in order, each without duplicates. Queries go in chunks
// of MaxBatch; a result with a next_page_token is asked again with it, up
// to a bound. An answer of the wrong shape is [ErrSchema]; fetch's errors
// pass through wrapped.
func (a *API) QueryBatch(ctx context.Context, qs []Query) ([][]VulnRef, error) {
	for i, q := range qs {
		if strings.TrimSpace(q.Name) == "" {
			return nil, fmt.Errorf("osv api: query %d has no package name", i)
		}
	}
	out := make([][]VulnRef, len(qs))
	seen := make([]map[string]bool, len(qs))
	for start := 0; start < len(qs); start += MaxBatch {
		end := min(start+MaxBatch, len(qs))
		pending := make([]int, 0, end-start)
		tokens := make([]string, len(qs))
		for i := start; i < end; i++ {
			pending = append(pending, i)
		}
		for page := 0; len(pending) > 0; page++ {
			if page == maxPages {
				return nil, fmt.Errorf("%w: osv api: still paging after %d pages: refusing to follow more", ErrSchema, maxPages)
			}
			next, err := a.batch(ctx, qs, pending, tokens, out, seen)
			if err != nil {
				return nil, err
			}
			pending = next
		}
	}
	return out, nil
}

// batch sends the queries at indexes pending (with their page tokens),
// adds what comes back to out, and returns the indexes to ask again.
func (a *API) batch(ctx context.Context, qs []Query, pending []int, tokens []string, out [][]VulnRef, seen []map[string]bool) ([]int, error) {
	body := struct {
		Queries []batchQuery `json:"queries"`
	}{Queries: make([]batchQuery, len(pending))}
	for k, i := range pending {
		body.Queries[k] = batchQuery{Package: batchPackage{Name: qs[i].Name, Ecosystem: Ecosystem}, Version: qs[i].Version, PageToken: tokens[i]}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("osv api: %w", err)
	}
	raw, err := a.f.PostJSON(ctx, a.base+"/v1/querybatch", b, a.MaxAnswer, a.Timeout)
	if err != nil {
		return nil, fmt.Errorf("osv api querybatch: %w", err)
	}
	var ans batchAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("%w: osv api querybatch: the answer is not the querybatch format: %v", ErrSchema, err)
	}
	if len(ans.Results) != len(pending) {
		return nil, fmt.Errorf("%w: osv api querybatch: %d results for %d queries", ErrSchema, len(ans.Results), len(pending))
	}
	var next []int
	for k, res := range ans.Results {
		i := pending[k]
		for _, v := range res.Vulns {
			if v.ID == "" {
				return nil, fmt.Errorf("%w: osv api querybatch: results[%d] lists an advisory without an id", ErrSchema, k)
			}
			if seen[i] == nil {
				seen[i] = map[string]bool{}
			}
			if seen[i][v.ID] {
				continue
			}
			seen[i][v.ID] = true
			ref := VulnRef{ID: v.ID}
			if t, err := time.Parse(time.RFC3339Nano, v.Modified); err == nil {
				ref.Modified = t.UTC()
			}
			out[i] = append(out[i], ref)
		}
		if res.NextPageToken != "" {
			if res.NextPageToken == tokens[i] {
				return nil, fmt.Errorf("%w: osv api querybatch: the same page token came back twice", ErrSchema)
			}
			tokens[i] = res.NextPageToken
			next = append(next, i)
		}
	}
	return next, nil
}

// Vuln fetches one record, GET {base}/v1/vulns/{id}, capped at MaxRecord.
func (a *API) Vuln(ctx context.Context, id string) ([]byte, error) {
	if id == "" || strings.ContainsAny(id, "/\\?#") || id == "." || id == ".." {
		return nil, fmt.Errorf("osv api: %q is not an advisory id", id)
	}
	resp, err := a.f.Fetch(ctx, fetch.Request{
		URL: a.base + "/v1/vulns/" + url.PathEscape(id), Accept: "application/json",
		MaxBody: a.MaxRecord, Timeout: a.Timeout,
	})
	if err != nil {
		return nil, fmt.Errorf("osv api vuln %s: %w", id, err)
	}
	return resp.Body, nil
}
