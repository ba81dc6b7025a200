package web_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/updatecheck"
)

// chunked is a body whose length the client cannot know: it is sent with
// Transfer-Encoding: chunked and no Content-Length, so the server learns
// that it is too large only while reading it.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

// doChunked sends body chunked (no Content-Length) and answers as do.
func (c *client) doChunked(path string, body []byte, contentType string, header map[string]string) response {
	c.b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.b.server.URL+path, chunked{bytes.NewReader(body)})
	if err != nil {
		c.b.t.Fatal(err)
	}
	if req.ContentLength != 0 {
		// 0 with a body is "unknown": net/http sends it chunked.
		c.b.t.Fatalf("the request announces %d bytes", req.ContentLength)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.b.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// A body too large for its route answers 413 in words whether it announced
// its length or not: sent chunked, the import form, a small form with a
// session and one with an API token all learn the limit, and nothing is
// written; a form of nobody is not read at all.
func TestOversizedChunkedForms(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.withOfflineSource()
	admin := b.login("admin@example.test")

	var upload bytes.Buffer
	w := multipart.NewWriter(&upload)
	w.WriteField("csrf_token", admin.csrf)
	w.WriteField("url", offlineSource)
	part, _ := w.CreateFormFile("document", "feed.json")
	part.Write(bytes.Repeat([]byte(" "), int(updatecheck.NewImporter(b.checker).Limit())+1<<17))
	w.Close()
	r := admin.doChunked("/admin/sources/import", upload.Bytes(), w.FormDataContentType(), nil)
	wantTooLarge(t, "chunked import", r, "The upload is larger than upcheck accepts (")
	if seq := b.storedSequence(offlineSource); seq != -1 {
		t.Fatalf("after an oversized upload the stored sequence is %d, want none", seq)
	}

	form := url.Values{"csrf_token": {admin.csrf}, "reason": {strings.Repeat("x", 70<<10)}}.Encode()
	r = admin.doChunked(dismissPath, []byte(form), "application/x-www-form-urlencoded", nil)
	wantTooLarge(t, "chunked dismiss form", r, "The upload is larger than upcheck accepts (64 KiB at most).")

	token, err := b.auth.CreateToken(context.Background(), "admin@example.test", "script")
	if err != nil {
		t.Fatal(err)
	}
	form = url.Values{"kind": {"webhook"}, "url": {"http://127.0.0.1:1/hook"}, "name": {strings.Repeat("x", 70<<10)}}.Encode()
	r = b.anonymous().doChunked("/admin/notifications/channels", []byte(form), "application/x-www-form-urlencoded",
		map[string]string{"Authorization": "Bearer " + token})
	wantTooLarge(t, "chunked channel form with a token", r, "The upload is larger than upcheck accepts (64 KiB at most).")

	// Nobody's form is read before they are known: without a session the
	// same oversized import is refused as a request of nobody, unread.
	if r := b.anonymous().doChunked("/admin/sources/import", upload.Bytes(), w.FormDataContentType(), nil); r.status == http.StatusRequestEntityTooLarge {
		t.Fatalf("an anonymous oversized import was read: status %d, body %s", r.status, r.body)
	}

	var n int
	b.db.QueryRow(t, "SELECT (SELECT count(*) FROM advisory_dismissals) + (SELECT count(*) FROM notification_channels)").Scan(&n)
	if n != 0 {
		t.Fatalf("oversized forms wrote %d rows", n)
	}
}

func wantTooLarge(t *testing.T, what string, r response, words string) {
	t.Helper()
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, words) {
		t.Fatalf("%s: status %d, want 413 saying %q; body %s", what, r.status, words, r.body)
	}
}
