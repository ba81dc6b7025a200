package updatecheck

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// documentKind is the kind of the sources that are a publisher's signed
// update document at an http or https URL (readmodel.SourceDocument):
// fetched with the validators of the stored document, accepted by the
// acceptance policy (accept) under the keys trusted now (trust.go), and
// evaluated from the document's package for each component. Its stored
// documents answer for its components under each one's pin.
type documentKind struct{}

func (documentKind) fetched() bool { return true }

func (documentKind) ready(context.Context, *Checker, []*job) error { return nil }

func (documentKind) importable() error { return nil }

// request asks for the document with the validators of the stored one.
func (documentKind) request(_ *Checker, j *job) (fetch.Request, failure) {
	req := fetch.Request{URL: j.url}
	// Validators only make sense for a stored document this check could
	// keep: one accepted under the key pinned now. After a key change
	// the publisher must send the document again.
	if j.stored.Document != nil && j.stored.SequenceKey == j.key {
		req.ETag, req.LastModified = j.stored.ETag, j.stored.LastModified
	}
	return req, failure{}
}

// evaluate evaluates the component against the document's package of its
// code.
func (documentKind) evaluate(d *docInput, k *knowledge, in store.ComponentInput, epoch int64) (store.Result, error) {
	return evaluateDoc(d, k, d.doc.Package(in.Code), in, epoch)
}

// stored is the stored document of src under each pin (components of one
// source may pin different keys), while it may be trusted under that pin
// (storedDocument).
func (documentKind) stored(ctx context.Context, r *storedReads, src store.Source, _ store.Component) (func(pin string) *docInput, error) {
	trust, err := r.w.store.SourceTrust(ctx, src.URL)
	if err != nil {
		return nil, err
	}
	docs := map[string]*docInput{}
	return func(pin string) *docInput {
		d, ok := docs[pin]
		if !ok {
			var err error
			if d, err = storedDocument(src, pin, trustOf(pin, trust).set); err != nil {
				d = nil // untrusted: the next successful fetch decides
			}
			docs[pin] = d
		}
		return d
	}, nil
}

// prepare turns one fetch into what to write: the I/O the policy needs (a
// .sig file), the policy (accept), the key statement when due or needed
// (followTrust), then the evaluation. It reports false
// when the check was cancelled: a cancelled request is not the publisher's
// failure and nothing is recorded for it.
func (documentKind) prepare(ctx context.Context, c *Checker, j job, epoch int64, resp fetch.Response, ferr error) (pending, bool) {
	if ctx.Err() != nil || fetch.IsCancelled(ctx, ferr) {
		return pending{}, false
	}
	a := answer{resp: resp, signature: resp.Signature}
	switch {
	case ferr != nil:
		a.failure = failureOf(ferr, "")
	case j.key != "" && !resp.NotModified && a.signature == "":
		sig, err := c.fetcher.FetchSignature(ctx, j.url)
		if fetch.IsCancelled(ctx, err) {
			return pending{}, false
		}
		if err != nil {
			a.failure = sigFailure(err)
		}
		a.signature = sig
	}
	v, tw, change, ok := c.followTrust(ctx, j, a, accept(j, a, epoch), epoch)
	if !ok {
		return pending{}, false
	}
	p := pending{job: j, verdict: v, etag: resp.ETag, lastModified: resp.LastModified, trust: tw, trustChange: change}
	return evaluated(p, epoch), true
}

// judge is what an imported document becomes (Import): the acceptance
// policy (accept) under the keys trusted now, then the evaluation, with no
// I/O. A fetched document goes through the same two steps in prepare, with
// the key statement between them that only a fetch can look for.
func judge(j job, a answer, epoch int64) pending {
	return evaluated(pending{job: j, verdict: accept(j, a, epoch), etag: a.resp.ETag, lastModified: a.resp.LastModified}, epoch)
}

// sigFailure is a .sig file that could not be fetched for a document that
// came without its signature header. None published (404) means the
// document is unsigned; anything else is the fetch's own failure.
func sigFailure(err error) failure {
	const prefix = "document is unsigned and its .sig could not be fetched"
	if se, ok := errors.AsType[*fetch.StatusError](err); ok && se.Code == http.StatusNotFound {
		f := unsignedFailure()
		f.detail = prefix + ": " + err.Error()
		return f
	}
	return failureOf(err, prefix)
}

// newDocInput is a document of the documentKind, parsed from body.
func newDocInput(url string, body []byte, doc *updatedoc.Document, key string) *docInput {
	h := sha256.Sum256(body)
	return &docInput{url: url, doc: doc, hash: h[:], key: key, kind: documentKind{}}
}

// errUntrusted: the stored document may not be used under the pin.
var errUntrusted = errors.New("the stored document is not signed with the keys trusted now")

// storedDocument returns the stored document of src as a docInput, if it
// may be trusted for components pinned to key: a pin needs a stored
// document that was accepted under that same pin and whose signature set
// verifies now under trusted (the pin's keys, or those a key statement
// endorsed under it).
func storedDocument(src store.Source, key string, trusted updatedoc.KeySet) (*docInput, error) {
	if src.Document == nil {
		return nil, errors.New("no document is stored")
	}
	if key != "" {
		if src.SequenceKey != key || src.SignatureState != string(readmodel.TrustVerified) {
			return nil, errUntrusted
		}
		if trusted.IsZero() {
			return nil, errors.New("pinned key: not a valid key set")
		}
		if _, err := updatedoc.VerifySet(src.Document, src.Signature, trusted); err != nil {
			return nil, fmt.Errorf("%w: %w", errUntrusted, err)
		}
	}
	doc, err := updatedoc.Parse(src.Document)
	if err != nil {
		return nil, fmt.Errorf("stored document: %w", err)
	}
	return newDocInput(src.URL, src.Document, doc, key), nil
}

// expiry is when the document says it expires (nil: never).
func expiry(d *updatedoc.Document) *time.Time {
	if d.Expires.IsZero() {
		return nil
	}
	t := d.Expires
	return &t
}
