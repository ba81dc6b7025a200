package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// transient reports whether err is worth the single retry: something that
// may well succeed a second later. Refusals and definite answers are not.
// The caller has already ruled out its own cancellation.
func transient(err error) bool {
	if se, ok := errors.AsType[*StatusError](err); ok {
		return se.Code == http.StatusTooManyRequests || se.Code >= 500
	}
	if _, ok := errors.AsType[*ConsumeError](err); ok {
		return false
	}
	if _, ok := errors.AsType[*spoolError](err); ok {
		return false
	}
	switch {
	case errors.Is(err, ErrPrivateAddress),
		errors.Is(err, ErrTooLarge),
		errors.Is(err, ErrTooManyRedirects),
		errors.Is(err, ErrUnsupportedScheme),
		errors.Is(err, context.Canceled),
		errors.Is(err, context.DeadlineExceeded):
		return false
	}
	// A bad certificate or a name that does not exist will not fix itself
	// within a second.
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return false
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return false
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return false
	}
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok && dnsErr.IsNotFound {
		return false
	}
	// Everything else — refused or reset connections, timeouts, malformed
	// responses — counts as a network blip.
	return true
}

// retryDelay picks the wait before the retry: the server's Retry-After
// (delta-seconds or an HTTP date, capped at MaxRetryAfter) when it sent a
// valid one, else RetryDelay.
func (f *Fetcher) retryDelay(retryAfter string, now time.Time) time.Duration {
	retryAfter = strings.TrimSpace(retryAfter)
	if retryAfter == "" {
		return f.cfg.RetryDelay
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(retryAfter, 10, 64); err == nil {
		if secs < 0 {
			return f.cfg.RetryDelay
		}
		// Compare in seconds first: a huge value would overflow Duration.
		if secs >= int64(f.cfg.MaxRetryAfter/time.Second)+1 {
			return f.cfg.MaxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(retryAfter); err == nil {
		d = max(t.Sub(now), 0)
	} else {
		return f.cfg.RetryDelay
	}
	return min(d, f.cfg.MaxRetryAfter)
}

// sleep waits d or until ctx is done, whichever comes first, and returns
// ctx.Err() in the latter case.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
