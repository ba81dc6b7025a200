package fetch

import (
	"bytes"
	"io"
	"net/url"
	"time"
)

// Request is one document to fetch, with the validators stored from the last
// successful fetch so an unchanged document costs a 304.
type Request struct {
	// URL is the absolute http or https URL of the document.
	URL string
	// ETag is sent as If-None-Match when not empty.
	ETag string
	// LastModified is sent as If-Modified-Since when not empty.
	LastModified string
	// Accept is sent as the Accept header when not empty.
	Accept string
	// Bearer, when set, gives the token sent as "Authorization: Bearer …"
	// to a URL, nil for none (a registry token, chosen as npm chooses it,
	// by the URL's host, port and path). It is asked for the request's URL
	// and again for each redirect's target: a redirected request never
	// carries the previous one's header, only the target's own token, and
	// none at all once a redirect went from https to http. A token is never
	// logged.
	Bearer func(u *url.URL) Credential
	// MaxBody caps this body instead of the fetcher's MaxBody when > 0.
	MaxBody int64
	// Timeout bounds each attempt of this request instead of the
	// fetcher's Timeout when > 0: a feed archive of tens of megabytes may
	// need minutes where a document needs seconds.
	Timeout time.Duration
	// Consume, when set, reads the body as it arrives instead of Fetch
	// buffering it (Response.Body stays nil): a document of tens of
	// megabytes is decoded as a stream and never held. It is given the
	// body of each attempt (a retried fetch calls it again, from the
	// start); an error it returns ends the fetch, unretried, and is
	// wrapped by Fetch's error. Reading past the cap fails with
	// ErrTooLarge.
	Consume func(io.Reader) error
	// Compressed asks for gzip and keeps the body as it was sent, for the
	// caller to decode: a Fetcher.Run caller does that in its callback,
	// after the host's slot was released, so that decoding a document of
	// tens of megabytes never holds a connection slot. A gzip body is in
	// Response.Body (Response.Gzip says so; MaxBody then caps the
	// compressed bytes): only its compressed form is held. A body sent
	// uncompressed anyway (some registries and proxies ignore
	// Accept-Encoding) is in Response.Body below SpoolAbove bytes, and in
	// Response.Spool, a temporary file, from there on: it is never held
	// whole in memory. The caller closes the Response (Response.Close) whatever
	// it does with it.
	Compressed bool
}

// Credential is a secret sent with a request; Reveal gives its text.
type Credential interface{ Reveal() string }

// Response is the outcome of a successful fetch. On error, Fetch may still
// return StatusCode and Bytes for logging, but never a Body.
type Response struct {
	// NotModified is true for a 304: keep the stored document.
	NotModified bool
	// Body is the document (nil when NotModified, or held in Spool).
	Body []byte
	// ETag and LastModified are the validators to store for the next
	// fetch. On a 304 that omits them, they are the request's own, so the
	// caller can store them unconditionally.
	ETag         string
	LastModified string
	// Signature is the Upcheck-Signature header, empty when absent (then
	// see [Fetcher.FetchSignature]).
	Signature string
	// StatusCode is the final HTTP status, after redirects.
	StatusCode int
	// Bytes is how many body bytes were read.
	Bytes int64
	// Gzip: Body is gzip-compressed, as sent to a Compressed request.
	Gzip bool
	// Spool holds the body instead of Body when a Compressed request's
	// body came uncompressed, SpoolAbove bytes or more: a temporary file,
	// read from its start, released by Close.
	Spool *Spool
}

// Reader reads the body from its start, wherever it is held (Body or
// Spool): once.
func (r Response) Reader() io.Reader {
	if r.Spool != nil {
		return r.Spool
	}
	return bytes.NewReader(r.Body)
}

// Close releases what holds the body (Spool's temporary file); it may be
// called more than once. Only a Compressed request's Response needs it.
func (r Response) Close() {
	_ = r.Spool.Close()
}
