package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// attempt makes one request. It also returns the Retry-After header of a
// failed response, for the caller's retry decision.
func (f *Fetcher) attempt(ctx context.Context, u *url.URL, req Request, maxBody int64) (Response, string, error) {
	timeout := f.cfg.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	hreq, err := f.newRequest(actx, u, req)
	if err != nil {
		return Response{}, "", err
	}

	start := time.Now()
	hresp, err := f.client.Do(hreq)
	if err != nil {
		return Response{}, "", f.attemptError(ctx, actx, u, timeout, err)
	}
	// Closing an unread body drops the connection instead of draining it,
	// which is what we want for a body we refused.
	defer hresp.Body.Close()

	resp := Response{
		StatusCode:   hresp.StatusCode,
		ETag:         hresp.Header.Get("ETag"),
		LastModified: hresp.Header.Get("Last-Modified"),
		Signature:    hresp.Header.Get("Upcheck-Signature"),
	}
	switch hresp.StatusCode {
	case http.StatusOK:
	case http.StatusNotModified:
		resp.NotModified = true
		if resp.ETag == "" {
			resp.ETag = req.ETag
		}
		if resp.LastModified == "" {
			resp.LastModified = req.LastModified
		}
		f.logDone(ctx, u, resp, start)
		return resp, "", nil
	default:
		return resp, hresp.Header.Get("Retry-After"),
			fmt.Errorf("fetch %s: %w", shown(u), &StatusError{Code: hresp.StatusCode})
	}

	resp, err = f.readResponse(ctx, actx, u, timeout, req, maxBody, hresp, resp)
	if err != nil {
		return resp, "", err
	}
	f.logDone(ctx, u, resp, start)
	return resp, "", nil
}

// newRequest is the GET of u that req asks for, under actx: the
// conditional, encoding and accept headers req names, and its bearer
// token, which the redirect check also finds in the request's context.
func (f *Fetcher) newRequest(actx context.Context, u *url.URL, req Request) (*http.Request, error) {
	rctx := actx
	if req.Bearer != nil {
		// The redirect check asks the same function for each target.
		rctx = context.WithValue(actx, bearerKey{}, req.Bearer)
	}
	hreq, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", shown(u), err)
	}
	hreq.Header.Set("User-Agent", f.cfg.UserAgent)
	if req.ETag != "" {
		hreq.Header.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hreq.Header.Set("If-Modified-Since", req.LastModified)
	}
	if req.Compressed {
		// Set by hand, the transport leaves the body as it came.
		hreq.Header.Set("Accept-Encoding", "gzip")
	}
	if req.Accept != "" {
		hreq.Header.Set("Accept", req.Accept)
	}
	if req.Bearer != nil {
		setBearer(hreq, req.Bearer)
	}
	return hreq, nil
}

// readResponse reads the body of hresp, a 200 response to req, into resp
// (or hands it to req.Consume), within maxBody. On an error resp holds no
// body; a failure while reading is reported as attemptError reports it.
func (f *Fetcher) readResponse(ctx, actx context.Context, u *url.URL, timeout time.Duration, req Request, maxBody int64, hresp *http.Response, resp Response) (Response, error) {
	// Refuse early what announces itself as too big; a smaller
	// Content-Length is not trusted, the LimitReader below is the real cap.
	if hresp.ContentLength > maxBody {
		return resp, fmt.Errorf("fetch %s: %w: content-length %d exceeds %d bytes",
			shown(u), ErrTooLarge, hresp.ContentLength, maxBody)
	}
	body := &CappedReader{R: hresp.Body, Max: maxBody}
	gz := req.Compressed && strings.EqualFold(hresp.Header.Get("Content-Encoding"), "gzip")
	var consumed, spooled error
	switch {
	case req.Consume != nil:
		consumed = req.Consume(body)
	case req.Compressed && !gz:
		resp.Body, resp.Spool, spooled = f.readPlain(ctx, body, hresp.ContentLength, shown(u))
	default:
		resp.Body, _ = readBody(body, hresp.ContentLength)
	}
	resp.Bytes = body.N
	resp.Gzip = gz && resp.Body != nil
	if body.Over || body.Err != nil || spooled != nil {
		resp.Close()
		resp.Body, resp.Spool = nil, nil
	}
	switch {
	case body.Over:
		return resp, fmt.Errorf("fetch %s: %w: more than %d bytes", shown(u), ErrTooLarge, maxBody)
	case body.Err != nil:
		return resp, f.attemptError(ctx, actx, u, timeout, body.Err)
	case consumed != nil:
		return resp, fmt.Errorf("fetch %s: %w", shown(u), &ConsumeError{Err: consumed})
	case spooled != nil:
		return resp, fmt.Errorf("fetch %s: %w", shown(u), spooled)
	}
	return resp, nil
}

// attemptError tells the caller's cancellation and our own per-attempt
// deadline apart from other failures, since the http package reports both
// as a bare context error.
func (f *Fetcher) attemptError(ctx, actx context.Context, u *url.URL, timeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return cancelled(ctx, u)
	}
	if actx.Err() != nil {
		return fmt.Errorf("fetch %s: %w", shown(u), &TimeoutError{After: timeout})
	}
	// url.Error repeats the method and URL; our prefix already says it.
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return fmt.Errorf("fetch %s: %w", shown(u), err)
}

func (f *Fetcher) logDone(ctx context.Context, u *url.URL, resp Response, start time.Time) {
	f.logger.DebugContext(ctx, "fetched",
		"url", shown(u),
		"status", resp.StatusCode,
		"not_modified", resp.NotModified,
		"bytes", resp.Bytes,
		"duration", time.Since(start))
}

// MaxBody is the most bytes the fetcher reads of one document: a document
// imported by hand is held to the same cap.
func (f *Fetcher) MaxBody() int64 { return f.cfg.MaxBody }
