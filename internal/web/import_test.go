package web_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/dev/demo"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

const offlineSource = "offline:acme-mirror"

// withOfflineSource adds a plugin whose documents come by import only,
// pinned to a new key, and returns the key and a document for it signed
// with it.
func (b *bundle) withOfflineSource() (updatedoc.PrivateKey, []byte) {
	b.t.Helper()
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		b.t.Fatal(err)
	}
	p, err := demo.NewPublisher(time.Now())
	if err != nil {
		b.t.Fatal(err)
	}
	m := p.Manifest(b.publisher.URL)
	m.Components = append(m.Components, manifest.Component{Code: "mirrored", Name: "Mirrored", Version: "1.0.0", Source: offlineSource, Key: pub.String()})
	if _, err := updatecheck.NewSyncer(b.checker).Sync(context.Background(), m); err != nil {
		b.t.Fatal(err)
	}
	return priv, offlineDoc(7)
}

func offlineDoc(seq int) []byte {
	return []byte(`{"format": 1, "publisher": "acme", "sequence": ` + strconv.Itoa(seq) + `, "expires": "2099-01-01T00:00:00Z",
	  "packages": {"mirrored": {"releases": [{"version": "1.2.0", "security": true, "severity": "high", "summary": "Fixes a CSRF"}]}}}`)
}

// upload posts the import form as a browser would: multipart, with the
// CSRF field unless csrf is empty.
func (c *client) upload(source string, document []byte, signature string, csrf string) response {
	c.b.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if csrf != "" {
		w.WriteField("csrf_token", csrf)
	}
	w.WriteField("url", source)
	part, _ := w.CreateFormFile("document", "feed.json")
	part.Write(document)
	if signature != "" {
		part, _ = w.CreateFormFile("signature", "feed.json.sig")
		part.Write([]byte(signature + "\n"))
	}
	w.Close()
	return c.do("POST", "/admin/sources/import", body.String(), w.FormDataContentType(), nil)
}

func (b *bundle) storedSequence(source string) int64 {
	b.t.Helper()
	var seq *int64
	b.db.QueryRow(b.t, "SELECT max(sequence) FROM sources WHERE url = $1", source).Scan(&seq)
	if seq == nil {
		return -1
	}
	return *seq
}

// The upload form: only managers reach it, a post needs the CSRF token, a
// signed document is imported (303 to the form, which says so), a
// document signed by another key is refused in the words of a fetch
// failure (422) and the stored document stays, and an upload larger than
// a fetch may read is refused before it is read.
func TestSourceImportForm(t *testing.T) {
	t.Parallel()
	b := setup(t)
	priv, document := b.withOfflineSource()
	_, otherPriv, err := updatedoc.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	formPath := "/admin/sources/import?" + url.Values{"url": {offlineSource}}.Encode()

	sources := admin.do("GET", "/admin/sources", "", "", nil)
	if !strings.Contains(sources.body, `href="/admin/sources/import?url=offline%3Aacme-mirror"`) ||
		!strings.Contains(sources.body, "Waiting for its first import") {
		t.Fatalf("sources page: no import link or no waiting state for the offline source:\n%s", sources.body)
	}
	if strings.Contains(viewer.do("GET", "/admin/sources", "", "", nil).body, `data-testid="source-import"`) {
		t.Error("a viewer sees the import link")
	}
	wantStatus(t, "viewer GET form", viewer.do("GET", formPath, "", "", nil), http.StatusForbidden)
	wantStatus(t, "admin GET form", admin.do("GET", formPath, "", "", nil), http.StatusOK)
	wantStatus(t, "unknown source", admin.do("GET", "/admin/sources/import?url=offline%3Anope", "", "", nil), http.StatusNotFound)

	sig := updatedoc.Sign(document, priv)
	wantStatus(t, "viewer upload", viewer.upload(offlineSource, document, sig, viewer.csrf), http.StatusForbidden)
	wantStatus(t, "upload without CSRF", admin.upload(offlineSource, document, sig, ""), http.StatusForbidden)
	if seq := b.storedSequence(offlineSource); seq != -1 {
		t.Fatalf("a refused post stored sequence %d", seq)
	}

	r := admin.upload(offlineSource, document, sig, admin.csrf)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/admin/sources/import?") {
		t.Fatalf("upload: %d %s, want 303 to the form", r.status, r.header.Get("Location"))
	}
	page := admin.do("GET", r.header.Get("Location"), "", "", nil)
	if !strings.Contains(page.body, "Imported: sequence 7 is the source’s document now, and 1 component was evaluated from it.") {
		t.Fatalf("form after the import does not say so:\n%s", page.body)
	}
	var security bool
	b.db.QueryRow(t, "SELECT security FROM component_state WHERE code = 'mirrored' AND evaluated").Scan(&security)
	if !security {
		t.Fatal("mirrored is not evaluated from the imported document")
	}

	forged := offlineDoc(8)
	r = admin.upload(offlineSource, forged, updatedoc.Sign(forged, otherPriv), admin.csrf)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Refused.") ||
		!strings.Contains(r.body, `data-kind="bad_signature"`) {
		t.Fatalf("forged upload: %d\n%s", r.status, r.body)
	}
	if seq := b.storedSequence(offlineSource); seq != 7 {
		t.Fatalf("after a refused upload the stored sequence is %d, want 7", seq)
	}

	big := bytes.Repeat([]byte(" "), int(updatecheck.NewImporter(b.checker).Limit())+1<<17)
	wantStatus(t, "oversized upload", admin.upload(offlineSource, big, sig, admin.csrf), http.StatusRequestEntityTooLarge)
}

// The upload in a browser: from source health, open the import form of
// the offline source, choose the document and its .sig, import, and read
// the outcome; the source is healthy now.
func TestBrowserSourceImport(t *testing.T) {
	t.Parallel()
	b := setup(t)
	priv, document := b.withOfflineSource()
	dir := t.TempDir()
	docPath, sigPath := filepath.Join(dir, "feed.json"), filepath.Join(dir, "feed.json.sig")
	if err := os.WriteFile(docPath, document, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sigPath, []byte(updatedoc.Sign(document, priv)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	steps := []struct {
		name string
		do   chromedp.Action[chromedp.Void]
	}{
		{"open source health", chromedp.Navigate(b.server.URL + "/admin/sources")},
		{"follow the import link", chromedp.Click(chromedp.CSS(`a[data-testid="source-import"][href="/admin/sources/import?url=offline%3Aacme-mirror"]`))},
		{"see the form", chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-form"]`))},
		{"choose the document", chromedp.SetUploadFiles(chromedp.CSS(`#import-document`), []string{docPath})},
		{"choose the signature", chromedp.SetUploadFiles(chromedp.CSS(`#import-signature`), []string{sigPath})},
		{"import", chromedp.Click(chromedp.CSS(`[data-testid="import-submit"]`))},
		{"see the outcome", chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-outcome"]`))},
	}
	for _, step := range steps {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := chromedp.Do(sctx, step.do)
		cancel()
		if err != nil {
			screenshot(t, ctx, "source-import-failed.png")
			t.Fatalf("%s: %v", step.name, err)
		}
	}
	waitText(t, ctx, "import-outcome", regexp.MustCompile(`^Imported: sequence 7 .* 1 component was evaluated`))
	if s := text(t, ctx, "import-source"); !strings.Contains(s, "Healthy") || !strings.Contains(s, "Verified") {
		t.Fatalf("source after the import = %q, want healthy and verified", s)
	}
	screenshot(t, ctx, "source-import.png")
	if vs := a11yAudit(t, ctx); len(vs) > 0 {
		t.Errorf("the import form after an import fails the accessibility audit: %v", vs)
	}
}

// An npm source is read from its registry only: its import form and its
// upload are refused in words, and nothing is stored for it.
func TestNpmSourceTakesNoImport(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url) VALUES ('acme--blog', 'Blog', '1.0.0', 'npm:@acme/blog')`)
	admin := b.login("admin@example.test")
	const src = "npm:@acme/blog"
	form := admin.do("GET", "/admin/sources/import?"+url.Values{"url": {src}}.Encode(), "", "", nil)
	if form.status != http.StatusUnprocessableEntity || !strings.Contains(form.body, "upcheck reads it from its registry") {
		t.Fatalf("the import form of an npm source: %d\n%s", form.status, form.body)
	}
	up := admin.upload(src, offlineDoc(1), "", admin.csrf)
	if up.status != http.StatusUnprocessableEntity || !strings.Contains(up.body, "no document can be imported for it") {
		t.Fatalf("an upload for an npm source: %d\n%s", up.status, up.body)
	}
	if seq := b.storedSequence(src); seq != -1 {
		t.Fatalf("an upload for an npm source stored sequence %d", seq)
	}
}
