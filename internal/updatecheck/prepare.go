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
}

// prepare turns one fetch into what to write: the I/O the policy needs (a
// .sig file), the policy (accept), then the evaluation. It reports false
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
	return judge(j, a, epoch), true
}

// judge is the one way a publisher's answer becomes what to write, for a
// fetched document and an imported one alike: the acceptance policy
// (accept), then the evaluation of the components from the document it
// keeps. No I/O.
func judge(j job, a answer, epoch int64) pending {
	p := pending{job: j, verdict: accept(j, a, epoch), etag: a.resp.ETag, lastModified: a.resp.LastModified}
	if p.doc != nil {
		results, err := evaluate(p.doc, j.inputs(), epoch)
		if err != nil { // nothing is written from a document that could not be evaluated
			p.verdict = verdict{failure: failure{kind: readmodel.ErrorOther, detail: fmt.Sprintf("evaluate: %v", err)}}
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
