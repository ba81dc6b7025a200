package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Helpers of the API tests (api_*_test.go). Every answer they get goes
// through client.do, so it is also checked against openapi.json.

// sendJSON sends body (marshalled unless it is a string) as JSON, with the
// session's CSRF token when withCSRF, and header's members.
func (c *client) sendJSON(method, path string, body any, withCSRF bool, header map[string]string) response {
	c.b.t.Helper()
	text, ok := body.(string)
	if !ok && body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.b.t.Fatal(err)
		}
		text = string(b)
	}
	h := map[string]string{}
	for k, v := range header {
		h[k] = v
	}
	if withCSRF {
		h["X-CSRF-Token"] = c.csrf
	}
	ct := ""
	if text != "" {
		ct = "application/json"
	}
	return c.do(method, path, text, ct, h)
}

// bearer is the Authorization header of a new API token of email's user.
func (b *bundle) bearer(email string) map[string]string {
	b.t.Helper()
	token, err := b.auth.CreateToken(context.Background(), email, "api test")
	if err != nil {
		b.t.Fatal(err)
	}
	return map[string]string{"Authorization": "Bearer " + token}
}

// decodeJSON reads a JSON answer into a T.
func decodeJSON[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("answer is not the JSON expected: %v; body %s", err, r.body)
	}
	return v
}

// wantError checks an error answer: its status, and words in its one
// member, error.
func wantError(t *testing.T, what string, r response, status int, words string) {
	t.Helper()
	wantStatus(t, what, r, status)
	e := decodeJSON[map[string]any](t, r)
	msg, ok := e["error"].(string)
	if !ok || len(e) != 1 {
		t.Fatalf("%s: error body %s, want {\"error\": words}", what, r.body)
	}
	if !strings.Contains(msg, words) {
		t.Errorf("%s: error %q, want it to say %q", what, msg, words)
	}
}
