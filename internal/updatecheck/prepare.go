package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// pending is one source's outcome, prepared outside any transaction and
// written by write.
type pending struct {
	job job
	verdict
	etag         string // the validators the publisher sent
	lastModified string
	results      []store.Result // evaluated from verdict.doc
	// trust, when set, is the source's trust to store with its row (a key
	// statement looked at or followed, a stored set reset); trustChange,
	// when set, is the change of its trusted keys for the audit log.
	trust       *store.SourceTrust
	trustChange *trustChange
	// registryChange, for an npm source, is its registry's keys to pin
	// with it (first sight, or a change).
	registryChange *registryChange
	// trustState and verifiedBy, for an npm source that keeps its stored
	// package, are its trust as judged now (its registry's keys may have
	// changed); "" keeps the stored.
	trustState, verifiedBy string
}

// unchanged is p's success that keeps the stored document.
func (p pending) unchanged(epoch int64) store.Unchanged {
	return store.Unchanged{URL: p.job.url, ETag: p.etag, LastModified: p.lastModified, Epoch: epoch,
		SignatureState: p.trustState, VerifiedBy: p.verifiedBy}
}

// prepare turns one fetch into what to write: the I/O the policy needs (a
// .sig file), the policy (accept), the key statement when due or needed
// (followTrust), then the evaluation. It reports false
// when the check was cancelled: a cancelled request is not the publisher's
// failure and nothing is recorded for it.
func (c *Checker) prepare(ctx context.Context, j job, epoch int64, resp fetch.Response, ferr error) (pending, bool) {
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

// evaluated evaluates p's components from the document its verdict keeps.
// Nothing is written from a document that could not be evaluated: p then
// records the failure instead, and no trust change.
func evaluated(p pending, epoch int64) pending {
	if p.doc != nil {
		results, err := evaluate(p.doc, p.job.intel, p.job.inputs(), epoch)
		if err != nil {
			p.verdict = verdict{failure: failure{kind: readmodel.ErrorOther, detail: fmt.Sprintf("evaluate: %v", err)}}
			p.trust, p.trustChange = nil, nil
			return p
		}
		p.results = results
	}
	return p
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
