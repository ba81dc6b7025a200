package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/updatedoc"
)

// One limit for advisory ids: a document whose advisory id has
// updatedoc.MaxAdvisoryID bytes is accepted and that advisory can be
// dismissed and restored; a document with a longer id is refused when it
// is read, and a dismissal naming a longer id is refused in words.
func TestAdvisoryIDLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	priv, _ := b.withOfflineSource()
	admin := b.login("admin@example.test")
	doc := func(seq, idBytes int) ([]byte, string) {
		id := "ACME-" + strings.Repeat("9", idBytes-len("ACME-"))
		d := []byte(`{"format": 1, "publisher": "acme", "sequence": ` + strconv.Itoa(seq) + `, "expires": "2099-01-01T00:00:00Z",
		  "packages": {"mirrored": {"advisories": [{"id": "` + id + `", "affected": "<1.2.0", "severity": "high"}]}}}`)
		return d, id
	}

	longest, id := doc(7, updatedoc.MaxAdvisoryID)
	wantStatus(t, "import with the longest id", admin.upload(offlineSource, longest, updatedoc.Sign(longest, priv), admin.csrf), http.StatusSeeOther)
	path := "/admin/plugins/mirrored/advisories/" + url.PathEscape(id)
	wantStatus(t, "dismiss the longest id", admin.postForm(path+"/dismiss", url.Values{"reason": {"accepted"}}), http.StatusSeeOther)
	if n := b.standing(); n != 1 {
		t.Fatalf("%d dismissals stand, want 1", n)
	}
	wantStatus(t, "restore the longest id", admin.postForm(path+"/undismiss", url.Values{}), http.StatusSeeOther)

	tooLong, _ := doc(8, updatedoc.MaxAdvisoryID+1)
	r := admin.upload(offlineSource, tooLong, updatedoc.Sign(tooLong, priv), admin.csrf)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "has 201 bytes, more than the limit of 200") {
		t.Fatalf("import with an id over the limit: %d\n%s", r.status, r.body)
	}
	if seq := b.storedSequence(offlineSource); seq != 7 {
		t.Fatalf("after the refused document the stored sequence is %d, want 7", seq)
	}

	r = admin.postForm("/admin/plugins/mirrored/advisories/"+id+"9/dismiss", url.Values{"reason": {"accepted"}})
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "an advisory id has at most 200 bytes") {
		t.Fatalf("dismissing an id over the limit: %d\n%s", r.status, r.body)
	}
}
