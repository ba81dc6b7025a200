package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Defaults applied by [New] to zero fields of [Config].
const (
	DefaultTimeout        = 15 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	DefaultMaxBody        = 2 << 20 // 2 MiB: update documents are small; anything bigger is a mistake or an attack.
	DefaultMaxRedirects   = 3
	DefaultUserAgent      = "upcheck/dev"
	DefaultConcurrency    = 8
	DefaultPerHost        = 2
	DefaultRetryDelay     = time.Second
	DefaultMaxRetryAfter  = 10 * time.Second

	// SignatureMaxBody caps a detached signature: a base64 Ed25519
	// signature is 88 bytes, so 4 KiB leaves room for whitespace and nothing
	// else.
	SignatureMaxBody = 4 << 10
)

// Sentinel errors. Fetch wraps them, so test with errors.Is.
var (
	// ErrPrivateAddress means a connection (possibly after a redirect or a
	// DNS answer) would have gone to a loopback, private, link-local, CGNAT,
	// unspecified or multicast address and AllowPrivate is off.
	ErrPrivateAddress = errors.New("refusing to connect to a private address")
	// ErrTooLarge means the body was, or announced it would be, larger than
	// the cap.
	ErrTooLarge = errors.New("response body too large")
	// ErrTooManyRedirects means the redirect chain was longer than
	// MaxRedirects.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrUnsupportedScheme means a URL, or a redirect target, was not http
	// or https.
	ErrUnsupportedScheme = errors.New("unsupported url scheme")
	// ErrTimeout means one attempt ran out of Config.Timeout. It is the
	// publisher's slowness, not the caller's cancellation, so it does not
	// wrap context.DeadlineExceeded.
	ErrTimeout = errors.New("request timed out")
	// ErrStatus is wrapped by every [*StatusError].
	ErrStatus = errors.New("unexpected http status")
)

// StatusError reports a response status other than 200 or 304.
type StatusError struct {
	// Code is the HTTP status code the publisher answered with.
	Code int
}

// Error implements error.
func (e *StatusError) Error() string {
	return fmt.Sprintf("unexpected http status %d %s", e.Code, http.StatusText(e.Code))
}

// Unwrap lets errors.Is(err, ErrStatus) match any status error.
func (e *StatusError) Unwrap() error { return ErrStatus }

// TimeoutError reports an attempt that ran out of Config.Timeout; it wraps
// [ErrTimeout].
type TimeoutError struct {
	// After is the time the attempt was allowed.
	After time.Duration
}

// Error implements error.
func (e *TimeoutError) Error() string { return fmt.Sprintf("%v after %s", ErrTimeout, e.After) }

// Unwrap lets errors.Is(err, ErrTimeout) match.
func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// PrivateAddressError reports the address the guard refused; it wraps
// [ErrPrivateAddress]. Config.AllowPrivate (UPCHECK_ALLOW_PRIVATE_SOURCES=1
// in upcheck's configuration) allows such addresses.
type PrivateAddressError struct {
	// Addr is the refused address; invalid when it could not be parsed.
	Addr netip.Addr
	// Raw is the address as the dialer gave it, when it could not be parsed.
	Raw string
}

// Error implements error.
func (e *PrivateAddressError) Error() string {
	if !e.Addr.IsValid() {
		return fmt.Sprintf("%v: cannot parse %q", ErrPrivateAddress, e.Raw)
	}
	return fmt.Sprintf("%v %s", ErrPrivateAddress, e.Addr)
}

// Unwrap lets errors.Is(err, ErrPrivateAddress) match.
func (e *PrivateAddressError) Unwrap() error { return ErrPrivateAddress }

// Config tunes a [Fetcher]. Zero fields take the Default* values.
type Config struct {
	// Timeout bounds one attempt as a whole: connecting, waiting for
	// headers and reading the body. A retried fetch may take two attempts
	// plus the retry delay.
	Timeout time.Duration
	// ConnectTimeout bounds the TCP connect and, separately, the TLS
	// handshake.
	ConnectTimeout time.Duration
	// MaxBody caps the bytes read from one document body.
	MaxBody int64
	// MaxRedirects is how many redirects one attempt may follow. Zero means
	// the default; a negative value refuses every redirect.
	MaxRedirects int
	// UserAgent is sent with every request, "upcheck/<version>", so a
	// publisher can tell who is polling it.
	UserAgent string
	// AllowPrivate turns the private-address guard off, for publishers on
	// the intranet (and for tests against loopback servers).
	AllowPrivate bool
	// Concurrency is how many requests [Fetcher.Run] has in flight at once.
	Concurrency int
	// PerHost is how many of those may go to one host name at once.
	PerHost int
	// RetryDelay is the wait before the single retry of a transient failure
	// when the server gave no Retry-After.
	RetryDelay time.Duration
	// MaxRetryAfter caps a server's Retry-After, so a publisher cannot park
	// a check for an hour.
	MaxRetryAfter time.Duration
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.PerHost <= 0 {
		c.PerHost = DefaultPerHost
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return c
}

// Fetcher makes outbound requests to publishers. It is safe for concurrent
// use; create one per process and share it, so connections are reused.
type Fetcher struct {
	cfg       Config
	logger    *slog.Logger
	client    *http.Client
	transport *http.Transport

	// blocked reports whether the dialer must refuse an address. It is nil
	// when AllowPrivate is set. It is a field, not a call to isPrivateAddr,
	// so tests can declare one loopback address "public" and another
	// "private" and exercise the guard without leaving the machine. Tests set
	// it right after New, before the first request.
	blocked func(netip.Addr) bool
}

// New returns a Fetcher with cfg's zero fields defaulted. A nil logger
// discards logs.
func New(cfg Config, logger *slog.Logger) *Fetcher {
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Fetcher{cfg: cfg, logger: logger}
	if !cfg.AllowPrivate {
		f.blocked = isPrivateAddr
	}
	dialer := &net.Dialer{
		Timeout:   cfg.ConnectTimeout,
		KeepAlive: 30 * time.Second,
		// The guard sits here, not on the URL, so it sees the resolved
		// address of every connection, redirects and rebinding included.
		ControlContext: f.dialControl,
	}
	f.transport = &http.Transport{
		// No proxy, not even from the environment: a proxy would connect on
		// our behalf and the guard would only see the proxy's address.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		MaxIdleConns:          cfg.Concurrency * 2,
		MaxIdleConnsPerHost:   cfg.PerHost,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	f.client = &http.Client{
		Transport:     f.transport,
		CheckRedirect: f.checkRedirect,
		// No Client.Timeout: each attempt gets a context deadline instead,
		// which also covers reading the body and tells us whose deadline
		// expired.
	}
	return f
}

// Close releases idle keep-alive connections and the goroutines that serve
// them. The Fetcher stays usable; the composition root calls Close at
// shutdown.
func (f *Fetcher) Close() {
	f.transport.CloseIdleConnections()
}

// Fetch downloads req.URL, sending req's validators as conditional headers.
// 200 returns the body, 304 returns NotModified; any other status is a
// [*StatusError]. A transient failure is retried once (see the package
// documentation). When ctx is cancelled the error wraps ctx.Err() and
// context.Cause(ctx); see [IsCancelled].
func (f *Fetcher) Fetch(ctx context.Context, req Request) (Response, error) {
	maxBody := f.cfg.MaxBody
	if req.MaxBody > 0 {
		maxBody = req.MaxBody
	}
	return f.fetch(ctx, req, maxBody)
}

// FetchSignature downloads the detached signature published next to a
// document, for sources that do not send the Upcheck-Signature header. The
// signature URL is docURL with ".sig" appended to its path (a query string,
// if any, is kept after it). The body, capped at [SignatureMaxBody], is
// returned with surrounding whitespace trimmed.
func (f *Fetcher) FetchSignature(ctx context.Context, docURL string) (string, error) {
	u, err := parseURL(docURL)
	if err != nil {
		return "", err
	}
	u.Path += ".sig"
	if u.RawPath != "" {
		u.RawPath += ".sig"
	}
	resp, err := f.fetch(ctx, Request{URL: u.String()}, SignatureMaxBody)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(resp.Body)), nil
}

// IsCancelled reports whether err is the result of ctx being cancelled (or
// reaching its deadline) rather than a failure of the publisher. Callers use
// it to leave a source's failure count alone when a check is interrupted.
func IsCancelled(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() == nil {
		return false
	}
	return errors.Is(err, ctx.Err()) || errors.Is(err, context.Cause(ctx))
}

func (f *Fetcher) fetch(ctx context.Context, req Request, maxBody int64) (Response, error) {
	u, err := parseURL(req.URL)
	if err != nil {
		return Response{}, err
	}
	// A cancelled caller must not cause a request the server can see.
	if ctx.Err() != nil {
		return Response{}, cancelled(ctx, u)
	}
	resp, retryAfter, err := f.attempt(ctx, u, req, maxBody)
	if err == nil || ctx.Err() != nil || !transient(err) {
		return resp, err
	}
	delay := f.retryDelay(retryAfter, time.Now())
	f.logger.WarnContext(ctx, "fetch failed, retrying once",
		"url", shown(u), "delay", delay, "error", err)
	if err := sleep(ctx, delay); err != nil {
		return Response{}, cancelled(ctx, u)
	}
	resp, _, err = f.attempt(ctx, u, req, maxBody)
	return resp, err
}
