package fetch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxPostAnswer bounds what is read of a receiver's answer: only its status
// matters, and reading a little lets the connection be reused.
const maxPostAnswer = 4 << 10

// Post sends body to rawURL through the same guarded dialer as every fetch
// (private addresses refused unless allowed), with no proxy, no redirect
// followed (a receiver that redirects has not received anything) and a
// deadline of timeout for the whole exchange. It returns the status the
// receiver answered; an error means no status came back.
func (f *Fetcher) Post(ctx context.Context, rawURL string, header http.Header, body []byte, timeout time.Duration) (int, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = header.Clone()
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", f.cfg.UserAgent)
	}
	client := &http.Client{
		Transport:     f.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil && ctx.Err() == context.DeadlineExceeded {
			return 0, fmt.Errorf("post %s: no answer: %w", shown(u), &TimeoutError{After: timeout})
		}
		return 0, fmt.Errorf("post %s: %w", shown(u), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxPostAnswer)) // the answer's content does not matter
	return resp.StatusCode, nil
}
