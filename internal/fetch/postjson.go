package fetch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// PostJSON sends body (a JSON document) to rawURL and returns the answer's
// body, read under maxAnswer bytes: a query to an API whose answer matters,
// unlike [Fetcher.Post]'s. It goes through the same guarded dialer as
// every fetch (private addresses refused unless allowed), follows no
// redirect (a redirected POST is answered with its status, as a
// [*StatusError]), and bounds each attempt by timeout (the fetcher's
// Timeout when zero). A status other than 200 is a [*StatusError]; a
// transient failure is retried once, as a fetch is. When ctx is cancelled
// the error wraps ctx.Err() and its cause (see [IsCancelled]).
func (f *Fetcher) PostJSON(ctx context.Context, rawURL string, body []byte, maxAnswer int64, timeout time.Duration) ([]byte, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if maxAnswer <= 0 {
		maxAnswer = f.cfg.MaxBody
	}
	if timeout <= 0 {
		timeout = f.cfg.Timeout
	}
	if ctx.Err() != nil {
		return nil, cancelled(ctx, u)
	}
	answer, retryAfter, err := f.postAttempt(ctx, u, body, maxAnswer, timeout)
	if err == nil || ctx.Err() != nil || !transient(err) {
		return answer, err
	}
	delay := f.retryDelay(retryAfter, time.Now())
	f.logger.WarnContext(ctx, "post failed, retrying once", "url", shown(u), "delay", delay, "error", err)
	if err := sleep(ctx, delay); err != nil {
		return nil, cancelled(ctx, u)
	}
	answer, _, err = f.postAttempt(ctx, u, body, maxAnswer, timeout)
	return answer, err
}

func (f *Fetcher) postAttempt(ctx context.Context, u *url.URL, body []byte, maxAnswer int64, timeout time.Duration) ([]byte, string, error) {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, "", fmt.Errorf("post %s: %w", shown(u), err)
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	client := &http.Client{
		Transport:     f.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", f.attemptError(ctx, actx, u, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.Header.Get("Retry-After"),
			fmt.Errorf("post %s: %w", shown(u), &StatusError{Code: resp.StatusCode})
	}
	if resp.ContentLength > maxAnswer {
		return nil, "", fmt.Errorf("post %s: %w: content-length %d exceeds %d bytes",
			shown(u), ErrTooLarge, resp.ContentLength, maxAnswer)
	}
	capped := &CappedReader{R: resp.Body, Max: maxAnswer}
	answer, _ := io.ReadAll(capped)
	switch {
	case capped.Over:
		return nil, "", fmt.Errorf("post %s: %w: more than %d bytes", shown(u), ErrTooLarge, maxAnswer)
	case capped.Err != nil:
		return nil, "", f.attemptError(ctx, actx, u, timeout, capped.Err)
	}
	return answer, "", nil
}
