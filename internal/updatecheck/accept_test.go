package updatecheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// The acceptance policy as a table: no database, no publisher.
func TestAcceptPolicy(t *testing.T) {
	t.Parallel()
	oldPub, oldPriv := generateKey(t)
	newPub, newPriv := generateKey(t)
	seq := func(n int64) *int64 { return &n }
	doc7 := doc(7, map[string]string{"core": pkgCore})
	doc8 := doc(8, map[string]string{"core": pkgCore})
	doc3 := doc(3, map[string]string{"core": pkgCore})
	unsigned := job{url: "u", sequences: map[string]int64{"": 7},
		stored: store.Source{URL: "u", Document: doc7, Sequence: seq(7), SignatureState: "unsigned"}}
	signed := job{url: "u", key: oldPub.String(), sequences: map[string]int64{oldPub.String(): 7},
		stored: store.Source{URL: "u", Document: doc7, Sequence: seq(7), SequenceKey: oldPub.String(),
			Signature: updatedoc.Sign(doc7, oldPriv), SignatureState: "verified"}}
	signed.trust = trustOf(signed.key, store.SourceTrust{})
	rotated := signed
	rotated.key = newPub.String() // the manifest pins a new key; the stored document is the old key's
	rotated.trust = trustOf(rotated.key, store.SourceTrust{})
	backToOld := signed
	backToOld.sequences = map[string]int64{oldPub.String(): 9, newPub.String(): 1}
	never := job{url: "u", key: oldPub.String(), trust: trustOf(oldPub.String(), store.SourceTrust{})}
	failed503 := failureOf(fmt.Errorf("fetch u: %w", &fetch.StatusError{Code: 503}), "")

	type want struct {
		failure                  string // substring; "" means no failure
		kind                     readmodel.ErrorKind
		notModified, newDocument bool
		evaluates                bool // a document to evaluate from
	}
	cases := []struct {
		name string
		j    job
		a    answer
		want want
	}{
		{"fetch failed, stored document trusted", signed, answer{failure: failed503}, want{failure: "503", kind: readmodel.ErrorHTTPStatus, evaluates: true}},
		{"fetch failed, nothing stored", never, answer{failure: failed503}, want{failure: "503", kind: readmodel.ErrorHTTPStatus}},
		{"fetch failed after a key change", rotated, answer{failure: failed503}, want{failure: "503", kind: readmodel.ErrorHTTPStatus}},
		{"304 under the same key", signed, answer{resp: fetch.Response{NotModified: true}}, want{notModified: true, evaluates: true}},
		{"304 unsigned", unsigned, answer{resp: fetch.Response{NotModified: true}}, want{notModified: true, evaluates: true}},
		{"304 after a key change", rotated, answer{resp: fetch.Response{NotModified: true}}, want{failure: "not signed with the keys trusted now", kind: readmodel.ErrorNotModifiedUntrusted}},
		{"304 with nothing stored", never, answer{resp: fetch.Response{NotModified: true}}, want{failure: "no document is stored", kind: readmodel.ErrorNotModifiedUntrusted}},
		{"new document, signed", signed, answer{resp: fetch.Response{Body: doc8}, signature: updatedoc.Sign(doc8, oldPriv)}, want{newDocument: true, evaluates: true}},
		{"new document under the new key", rotated, answer{resp: fetch.Response{Body: doc3}, signature: updatedoc.Sign(doc3, newPriv)}, want{newDocument: true, evaluates: true}},
		{"new key's document signed by the old key", rotated, answer{resp: fetch.Response{Body: doc8}, signature: updatedoc.Sign(doc8, oldPriv)}, want{failure: "signature", kind: readmodel.ErrorBadSignature}},
		{"unsigned where a key is pinned", signed, answer{resp: fetch.Response{Body: doc8}}, want{failure: "unsigned", kind: readmodel.ErrorUnsigned, evaluates: true}},
		{"bad signature", signed, answer{resp: fetch.Response{Body: doc8}, signature: updatedoc.Sign(doc7, oldPriv)}, want{failure: "signature", kind: readmodel.ErrorBadSignature, evaluates: true}},
		{"invalid document", unsigned, answer{resp: fetch.Response{Body: []byte(`{"format": 1`)}}, want{failure: "invalid document", kind: readmodel.ErrorMalformed, evaluates: true}},
		{"rollback", unsigned, answer{resp: fetch.Response{Body: doc3}}, want{failure: "lower than the stored sequence 7", kind: readmodel.ErrorRollback, evaluates: true}},
		{"rollback to an earlier key's old sequence", backToOld, answer{resp: fetch.Response{Body: doc8}, signature: updatedoc.Sign(doc8, oldPriv)}, want{failure: "lower than the stored sequence 9", kind: readmodel.ErrorRollback, evaluates: true}},
		{"the same publication again", unsigned, answer{resp: fetch.Response{Body: doc7}}, want{evaluates: true}},
		{"first document ever", never, answer{resp: fetch.Response{Body: doc3}, signature: updatedoc.Sign(doc3, oldPriv)}, want{newDocument: true, evaluates: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := accept(tc.j, tc.a, 1)
			got := want{notModified: v.notModified, newDocument: v.newDocument, evaluates: v.doc != nil, kind: v.failure.kind}
			if (tc.want.failure == "") != !v.failure.failed() || !strings.Contains(v.failure.detail, tc.want.failure) {
				t.Errorf("failure %q, want one containing %q", v.failure.detail, tc.want.failure)
			}
			got.failure = tc.want.failure
			if got != tc.want {
				t.Errorf("verdict %+v, want %+v", got, tc.want)
			}
			if v.newDocument && (v.document.Sequence != v.doc.doc.Sequence || v.document.SequenceKey != tc.j.key) {
				t.Errorf("new document stored as %+v", v.document)
			}
		})
	}
}
