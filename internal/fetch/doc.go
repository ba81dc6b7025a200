// Package fetch is upcheck's only way out to the network: it downloads
// publisher update documents (and their detached signatures) politely and
// defensively.
//
// # Why a package of its own
//
// Source URLs are typed in by administrators and, worse, publishers answer
// with redirects we do not control. An update checker that follows any URL
// to any address is a server-side request forgery tool pointed at the
// database, the cloud metadata service and every admin panel on the
// intranet. Everything that limits what a fetch may do therefore lives here,
// in one place, behind one shared *http.Client per [Fetcher].
//
// # The private-address guard
//
// The guard does not look at host names: names can resolve to anything, and
// can resolve differently on the second lookup (DNS rebinding). It runs in
// the dialer's Control hook instead, on the IP address the socket is about to
// connect to, after resolution. Every connection the client makes — the first
// request, each redirect, each retry, each address tried by Happy Eyeballs —
// passes through it, so no path reaches loopback, private, link-local,
// unique-local, CGNAT, unspecified or multicast addresses, the
// special-purpose blocks that are not globally reachable, IPv6 outside the
// global unicast space (nor IPv4-mapped, NAT64 or 6to4 spellings of such
// IPv4 addresses) unless [Config.AllowPrivate] is set. Proxies are
// never used, not even from the environment, because a proxy would make the
// connection on our behalf and the guard would only ever see the proxy.
//
// # Limits
//
// Every attempt has a deadline ([Config.Timeout], or a request's own
// Timeout, for a feed archive that takes minutes) that covers connecting,
// waiting for headers and reading the body, so a publisher trickling bytes
// cannot hold a check open. Bodies are capped while they are read; a
// Content-Length above the cap is refused before reading, but a small
// Content-Length is never trusted. Redirects are limited and may only lead to
// http or https URLs. A redirect never carries the Authorization header of
// the request it follows (the http package would keep it for the same host
// name on any port or scheme, and for its subdomains): the target gets the
// token Request.Bearer gives for its own URL, and none after a redirect
// from https to http.
//
// # Retries
//
// A transient failure (a network error, a timeout, 5xx, 429) is retried
// exactly once, after [Config.RetryDelay] or the server's Retry-After
// (capped by [Config.MaxRetryAfter]). A source that still fails keeps its
// last valid document and is tried again at the next check, so one retry is
// enough to smooth over a blip without turning a broken publisher into a
// hammering loop. Refusals (private address, body too
// large, too many redirects, other 4xx) are answers, not blips, and are not
// retried.
//
// # Cancellation is not failure
//
// When the caller's context is cancelled (for example because the check lost
// its lease) every error returned wraps both ctx.Err() and context.Cause(ctx),
// and [IsCancelled] reports true for it. Callers use that to avoid recording a
// cancelled fetch as a publisher failure.
//
// # Concurrency
//
// [Fetcher.Run] fetches a batch with a bounded pool of workers and at most
// [Config.PerHost] requests in flight per host name. A worker never waits on
// a busy host while another host has work: it takes the first queued request
// whose host has room, and sleeps only when every queued request is for a
// saturated host.
package fetch
