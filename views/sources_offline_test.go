package views

import (
	"strings"
	"testing"
)

// An offline source never imported waits for its first import, in those
// words, and is not failing; each source offers a manager its import form.
func TestOfflineSourcesInWords(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["sources"])
	rows := map[string]string{}
	for _, r := range byTestID(root, "source-row") {
		u, _ := attr(r, "data-url")
		rows[u] = text(r)
	}
	if got := rows["offline:acme-mirror"]; !strings.Contains(got, "Waiting for its first import") || strings.Contains(got, "Failing") {
		t.Errorf("offline source never imported: %q", got)
	}
	if got := rows["offline:forum"]; !strings.Contains(got, "Healthy") || !strings.Contains(got, "Offline: imported, never fetched") {
		t.Errorf("offline source imported 20 days ago, its document not expired: %q", got)
	}
	if links := byTestID(root, "source-import"); len(links) != len(rows) {
		t.Errorf("%d import links for %d sources", len(links), len(rows))
	}
}

// A document import in the history says what became of the document, and
// a refused one does not send the reader to source health, where nothing
// was recorded.
func TestImportRunInHistory(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["history"])
	for _, r := range byTestID(root, "history-row") {
		if id, _ := attr(r, "data-id"); id != "40" {
			continue
		}
		got := text(r)
		if !strings.Contains(got, "Document import") || !strings.Contains(got, "document refused; the stored one stayed") {
			t.Errorf("import row = %q", got)
		}
		if len(byTestID(r, "history-failed-sources")) != 0 {
			t.Error("a refused import points to source health")
		}
		return
	}
	t.Fatal("no import row in the history")
}
