package updatecheck

import (
	"context"
	"fmt"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// pending is one source's outcome, prepared outside any transaction and
// written in one fenced transaction.
type pending struct {
	job     job
	failure string // set: record this failure, keep the stored document
	// newDocument: store document (else only the validators and success move).
	newDocument  bool
	notModified  bool
	document     store.SourceDocument
	etag         string // the validators the publisher sent
	lastModified string
	// doc is the document the results were evaluated from: the new one, or
	// the stored one while it can be trusted; nil writes no results.
	doc     *docInput
	results []store.Result
}

// prepare turns one fetch into what to write. It reports false when the
// check was cancelled: a cancelled request is not the publisher's failure
// and nothing is recorded for it.
func (c *Checker) prepare(ctx context.Context, j job, epoch int64, resp fetch.Response, ferr error) (pending, bool) {
	if ctx.Err() != nil || fetch.IsCancelled(ctx, ferr) {
		return pending{}, false
	}
	fail := func(msg string) (pending, bool) {
		p := pending{job: j, failure: msg}
		// The last good document still answers for components it has no
		// current result for (a core upgrade, a component added), as long
		// as it can be trusted under the key pinned now. The failure is
		// recorded all the same: this is not a success.
		if d, err := storedDocument(j.stored, j.key); err == nil {
			p.doc, p.results = d, evaluate(d, j.inputs(), epoch)
		}
		return p, true
	}
	if ferr != nil {
		return fail(ferr.Error())
	}
	if resp.NotModified {
		// A 304 vouches for bytes only if they are trusted under the key
		// pinned now: after a key change, the old document is not.
		d, err := storedDocument(j.stored, j.key)
		if err != nil {
			return fail(fmt.Sprintf("the publisher answered 304 Not Modified, but %v", err))
		}
		return pending{job: j, notModified: true, etag: resp.ETag, lastModified: resp.LastModified,
			doc: d, results: evaluate(d, j.inputs(), epoch)}, true
	}

	body, signature, state := resp.Body, resp.Signature, "unsigned"
	if j.key != "" {
		key, err := updatedoc.ParsePublicKey(j.key)
		if err != nil {
			return fail(fmt.Sprintf("pinned key: %v", err))
		}
		if signature == "" {
			sig, err := c.fetcher.FetchSignature(ctx, j.url)
			if fetch.IsCancelled(ctx, err) {
				return pending{}, false
			}
			if err != nil {
				return fail(fmt.Sprintf("document is unsigned and its .sig could not be fetched: %v", err))
			}
			signature = sig
		}
		if err := updatedoc.Verify(body, signature, key); err != nil {
			return fail(fmt.Sprintf("signature: %v", err))
		}
		state = "verified"
	}
	doc, err := updatedoc.Parse(body)
	if err != nil {
		return fail(fmt.Sprintf("invalid document: %v", err))
	}
	// Rollback protection counts per key: the highest sequence ever
	// accepted under the key pinned now.
	storedSeq, haveSeq := j.sequences[j.key]
	if err := updatedoc.CheckSequence(storedSeq, doc.Sequence, haveSeq); err != nil {
		return fail(err.Error())
	}
	if j.stored.Sequence != nil && *j.stored.Sequence == doc.Sequence && j.stored.SequenceKey == j.key {
		// The same publication again: the stored document stays and only
		// the validators and the success move.
		if d, err := storedDocument(j.stored, j.key); err == nil {
			return pending{job: j, etag: resp.ETag, lastModified: resp.LastModified,
				doc: d, results: evaluate(d, j.inputs(), epoch)}, true
		}
	}
	d := newDocInput(j.url, body, doc, j.key)
	return pending{
		job: j, newDocument: true, etag: resp.ETag, lastModified: resp.LastModified,
		document: store.SourceDocument{
			URL: j.url, Document: body, Signature: signature, Sequence: doc.Sequence, SequenceKey: j.key,
			ETag: resp.ETag, LastModified: resp.LastModified, ExpiresAt: expiry(doc), SignatureState: state, Epoch: epoch,
		},
		doc: d, results: evaluate(d, j.inputs(), epoch),
	}, true
}
