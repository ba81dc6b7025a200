package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
)

// The API's contract is internal/web/openapi.json. Every answer that a test
// of this package receives through client.do for a path it describes is
// validated against it (checkContract), in strict mode: a member or a
// status the document does not describe fails the test, so the document
// cannot drift from what the server sends.

// contract is the document's validator, built once per test binary.
var contract = sync.OnceValues(func() (*contractValidator, error) {
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		return nil, err
	}
	// The document itself (the answer of /api/openapi.json) is checked
	// without strict mode: its schema names the top-level members only,
	// and TestOpenAPIDocument checks the rest.
	loose, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	v, errs := validator.NewValidator(doc, config.WithStrictMode(),
		// An audit entry's detail is the audit row's own JSON, free-form
		// by design (its schema says so).
		config.WithStrictIgnorePaths("$.body.entries[*].detail.*"),
		// The headers every answer carries (securityHeaders, echo's).
		config.WithStrictIgnoredHeadersExtra("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy",
			"X-Frame-Options", "Permissions-Policy", "Cross-Origin-Opener-Policy", "Cross-Origin-Resource-Policy",
			"Cache-Control", "Vary", "Strict-Transport-Security"))
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return &contractValidator{raw: raw, v: v, loose: loose}, nil
})

type contractValidator struct {
	raw []byte
	mu  sync.Mutex // the validator's caches are not documented as safe for concurrent use
	v   validator.Validator
	// loose validates without strict mode.
	loose validator.Validator
}

// described reports whether the document describes path: the API and the
// JSON operations endpoints.
func described(path string) bool {
	return strings.HasPrefix(path, "/api/") || path == "/healthz" || path == "/readyz"
}

// checkContract validates one answer against the document. An answer to
// a path or method the document does not have must be the error handler's
// 401, 404 or 405, in the document's Error shape.
func checkContract(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	cv, err := contract()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	resp := &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	v := cv.v
	if req.URL.Path == "/api/openapi.json" {
		v = cv.loose
	}
	cv.mu.Lock()
	ok, errs := v.ValidateHttpResponse(req, resp)
	cv.mu.Unlock()
	if ok {
		return
	}
	if len(errs) > 0 && (errs[0].IsPathMissingError() || errs[0].IsOperationMissingError()) {
		var e struct {
			Error *string `json:"error"`
		}
		// 401: the API group refuses an anonymous caller before it looks
		// the route up.
		if (status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusUnauthorized) &&
			json.Unmarshal(body, &e) == nil && e.Error != nil {
			return
		}
		t.Errorf("%s %s: %d is not described by openapi.json (%s); body %s", req.Method, req.URL.Path, status, errs[0].Message, body)
		return
	}
	for _, e := range errs {
		t.Errorf("%s %s answered %d against openapi.json: %s; body %.300s", req.Method, req.URL.Path, status, e.Error(), body)
	}
}

// The document is valid OpenAPI 3.1, is what /api/openapi.json serves to
// anyone, and lists exactly the routes routes.go serves under /api/ (and
// the JSON operations endpoints), method for method.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	cv, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(cv.raw, &head); err != nil {
		t.Fatal(err)
	}
	if head.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", head.OpenAPI)
	}
	cv.mu.Lock()
	valid, errs := cv.v.ValidateDocument()
	cv.mu.Unlock()
	if !valid {
		for _, e := range errs {
			t.Errorf("openapi.json is not valid OpenAPI: %s", e.Error())
		}
	}

	b := setup(t)
	r := b.anonymous().do("GET", "/api/openapi.json", "", "", nil)
	wantStatus(t, "the document, signed out", r, 200)
	if r.body != string(cv.raw) {
		t.Error("/api/openapi.json does not serve internal/web/openapi.json")
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
	// The operations endpoints it describes answer as it says (client.do
	// checks them).
	wantStatus(t, "healthz", b.anonymous().do("GET", "/healthz", "", "", nil), 200)
	wantStatus(t, "readyz", b.anonymous().do("GET", "/readyz", "", "", nil), 200)

	var documented []string
	for path, item := range head.Paths {
		for method := range item {
			if method != "parameters" && method != "summary" && method != "description" {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	var served []string
	for _, rt := range b.handler.(*echo.Echo).Routes() {
		if rt.Method == echo.RouteNotFound || !described(rt.Path) {
			continue
		}
		segs := strings.Split(rt.Path, "/")
		for i, s := range segs {
			if name, ok := strings.CutPrefix(s, ":"); ok {
				segs[i] = "{" + name + "}"
			}
		}
		served = append(served, rt.Method+" "+strings.Join(segs, "/"))
	}
	slices.Sort(documented)
	slices.Sort(served)
	served = slices.Compact(served)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("routes.go serves %s, which openapi.json does not describe", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(served, r) {
			t.Errorf("openapi.json describes %s, which routes.go does not serve", r)
		}
	}
	if len(served) < 20 {
		t.Errorf("only %d API routes found: %v", len(served), served)
	}
}

// checkContract itself refuses what the document does not describe: a
// member too many, a member of the wrong type, an undescribed status.
func TestContractCheckRefusesDrift(t *testing.T) {
	t.Parallel()
	cv, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name, path string
		status     int
		body       string
		valid      bool
	}{
		{"healthz as served", "/healthz", 200, `{"status":"ok"}`, true},
		{"an undescribed member", "/healthz", 200, `{"status":"ok","extra":1}`, false},
		{"a wrong type", "/api/admin/plugins/updates/summary", 200, `{"components":"five"}`, false},
		{"an undescribed status", "/api/admin/sources", 418, `{"error":"teapot"}`, false},
		{"an error without its words", "/api/admin/sources", 403, `{"message":"no"}`, false},
	} {
		req, _ := http.NewRequest("GET", "http://upcheck.test"+tc.path, nil)
		resp := &http.Response{StatusCode: tc.status, Header: h, Body: io.NopCloser(strings.NewReader(tc.body)), Request: req}
		cv.mu.Lock()
		ok, errs := cv.v.ValidateHttpResponse(req, resp)
		cv.mu.Unlock()
		if ok != tc.valid {
			t.Errorf("%s: valid = %v, want %v (%v)", tc.name, ok, tc.valid, errs)
		}
	}
}
