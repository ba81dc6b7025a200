package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// What a fetch accepts as a URL, a redirect and a cancellation.

// cancelled builds the error for a fetch stopped by ctx.
func cancelled(ctx context.Context, u *url.URL) error {
	return fmt.Errorf("fetch %s: %w", shown(u), ctxError(ctx))
}

// ctxError returns ctx.Err(), also wrapping context.Cause(ctx) when that
// says more, so errors.Is matches context.Canceled as well as a cause such
// as a lost lease.
func ctxError(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && cause != err {
		return fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

// parseURL accepts only absolute http and https URLs.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	if err := checkScheme(u); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", shown(u), err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("fetch %s: url has no host", shown(u))
	}
	return u, nil
}

func checkScheme(u *url.URL) error {
	// url.Parse lower-cases the scheme.
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w %q", ErrUnsupportedScheme, u.Scheme)
	}
	return nil
}

// checkRedirect is the client's CheckRedirect: it enforces the redirect
// limit, keeps redirects on http(s) and gives the target its own token. The
// address of the target is checked by the dialer like any other connection.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	limit := max(f.cfg.MaxRedirects, 0)
	// via holds the requests already made, so len(via) is the number of
	// the redirect about to be followed.
	if len(via) > limit {
		return fmt.Errorf("%w: the limit is %d", ErrTooManyRedirects, limit)
	}
	if err := checkScheme(req.URL); err != nil {
		return err
	}
	// The http package copies the first request's headers to the
	// redirect, Authorization included whenever the target's host name is
	// the same or a subdomain, whatever its port or scheme. A token
	// belongs to its .npmrc line, not to a host name: drop it, and send
	// the target's own, unless a redirect went from https to http on the
	// way, where anyone on the path would read it.
	req.Header.Del("Authorization")
	tokens, _ := req.Context().Value(bearerKey{}).(func(*url.URL) Credential)
	if tokens == nil || req.URL.Scheme != "https" && anyHTTPS(via) {
		return nil
	}
	setBearer(req, tokens)
	return nil
}

// bearerKey holds, in a request's context, the Request.Bearer that chooses
// the token of each redirect's target.
type bearerKey struct{}

// setBearer sets req's Authorization to the token tokens gives for its URL,
// if any.
func setBearer(req *http.Request, tokens func(*url.URL) Credential) {
	if c := tokens(req.URL); c != nil {
		if text := c.Reveal(); text != "" {
			req.Header.Set("Authorization", "Bearer "+text)
		}
	}
}

// anyHTTPS reports whether one of the requests was made over https.
func anyHTTPS(via []*http.Request) bool {
	for _, r := range via {
		if r.URL.Scheme == "https" {
			return true
		}
	}
	return false
}

// shown is u as the fetcher's errors and log lines give it: without its
// password (url.Redacted) and without its query, where a mirror's or a
// publisher's access token rides ("?…"). An error is stored (a source's or
// a feed's last error) and a log line read by more people than the
// setting.
func shown(u *url.URL) string {
	if u.RawQuery == "" && !u.ForceQuery {
		return u.Redacted()
	}
	c := *u
	c.RawQuery, c.ForceQuery = "…", false
	return c.Redacted()
}
