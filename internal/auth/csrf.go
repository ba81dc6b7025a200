package auth

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// CSRF token carriers: a header for scripts, a form field for HTML forms.
const (
	CSRFHeader    = "X-CSRF-Token"
	CSRFFormField = "csrf_token"
)

// CheckCSRF decides whether a request may change state; nil lets it
// through. Safe methods (GET, HEAD, OPTIONS, TRACE) pass. Any other method:
//   - with a read-only API token is refused (ErrReadOnly): whatever the
//     route's permission, such a token changes nothing;
//   - with an API token passes: a browser never attaches one by itself, so
//     a token request cannot be forged from another site;
//   - is refused when Sec-Fetch-Site says it comes from another site, or its
//     Origin is not this host (defence in depth; CheckSameOrigin alone);
//   - with a session must carry the session's CSRF token in the X-CSRF-Token
//     header or the csrf_token form field, compared in constant time.
//
// The principal is the one the request's context carries (WithPrincipal),
// so the check belongs after authentication. Every refusal wraps
// ErrForbidden; one for the request's origin wraps ErrCrossSite too.
func CheckCSRF(r *http.Request) error {
	if safeMethod(r.Method) {
		return nil
	}
	p, ok := principalFromContext(r.Context())
	if ok && p.ViaToken && p.ReadOnly {
		return fmt.Errorf("%w: %s %s", ErrReadOnly, r.Method, r.URL.Path)
	}
	if ok && p.ViaToken {
		return nil
	}
	if err := checkOrigin(r); err != nil {
		return err
	}
	if !ok {
		return nil
	}
	sent := r.Header.Get(CSRFHeader)
	if sent == "" {
		sent = r.FormValue(CSRFFormField)
	}
	if p.CSRFToken == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(p.CSRFToken)) != 1 {
		return fmt.Errorf("%w: csrf token mismatch", ErrForbidden)
	}
	return nil
}

// CheckSameOrigin refuses a state change that the browser says comes from
// another site, by the same judgement as CheckCSRF, for requests that have
// no session to carry a CSRF token yet. The login form needs it: a forged
// cross-site login would sign the victim into the attacker's account (login
// CSRF), and SameSite cookies do not stop a post that sets a cookie. Clients
// that send neither Sec-Fetch-Site nor Origin (scripts, older browsers)
// pass, as they do in CheckCSRF. A refusal wraps ErrCrossSite.
func CheckSameOrigin(r *http.Request) error {
	if safeMethod(r.Method) {
		return nil
	}
	return checkOrigin(r)
}

func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// checkOrigin refuses what the browser says is cross-site. Requests without
// these headers (older browsers, scripts) are left to the token check.
func checkOrigin(r *http.Request) error {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default: // "cross-site", and "same-site": a sibling subdomain is not us
		return fmt.Errorf("%w: sec-fetch-site %q", ErrCrossSite, site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if origin == "null" || err != nil || u.Host == "" {
		return fmt.Errorf("%w: origin %q", ErrCrossSite, origin)
	}
	// Behind a proxy the Host may be rewritten; X-Forwarded-Host then names
	// the public one. A browser cannot add that header to a cross-site
	// request without a CORS preflight, which this server never grants.
	forwarded, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ",")
	if strings.EqualFold(u.Host, r.Host) || strings.EqualFold(u.Host, strings.TrimSpace(forwarded)) {
		return nil
	}
	return fmt.Errorf("%w: origin %q is not host %q", ErrCrossSite, origin, r.Host)
}
