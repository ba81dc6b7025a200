// Package auth decides who a request acts as and what it may do: accounts
// and passwords, browser sessions, API tokens, roles and permissions, login
// throttling, CSRF and origin checks. Its decisions are plain functions over
// *http.Request and plain values; it knows nothing of echo. The web layer's
// middleware (internal/web/middleware.go) applies them to each request and
// turns them into status codes.
//
// # Who
//
// A browser logs in with an email and a password (Service.Login) and gets a
// random 256-bit session token in an HttpOnly, SameSite=Lax cookie. The
// database keeps only the token's SHA-256, so a copy of the sessions table
// opens nothing. Every login makes a new session, never one the browser
// brought, which rules out session fixation. A session ends at the first of:
// its absolute lifetime (12 h), 2 h without use, logout, or its user being
// disabled. Each of these is judged in SQL on the database clock
// (clock_timestamp()), like every other time decision in upcheck, so several
// instances with skewed clocks agree. Authentication moves last_seen_at at
// most once a minute, which keeps a busy page from writing on every request.
//
// Scripts send "Authorization: Bearer upc_…" (Service.CreateToken, the
// `upcheck token create` command). A token is also 256 random bits stored as
// its SHA-256: a slow hash would add nothing against a value that cannot be
// guessed, and would cost every API request. What only machines read, such
// as /metrics, takes a token and nothing else (the web layer's
// requireToken).
//
// A token has a scope and may have an end. A read-only token keeps only the
// view permissions of its owner's role (ViewPermissions), and CheckCSRF
// refuses every state change made with it, so a route that forgot to ask
// for a managing permission still changes nothing for it. An expired token
// (expires_at, judged on the database clock) is ErrTokenExpired, so its
// 401 can say why; a revoked one is simply unknown.
//
// Passwords are hashed with argon2id (RFC 9106) and stored in the PHC string
// format, parameters included, so that a change of parameters leaves old
// hashes valid; a successful login rewrites a hash made with old ones.
//
// # Login throttling
//
// Every attempt is counted, in the login_attempts table, against up to three
// keys before its password is checked (throttle.go):
//
//   - its client address, IPv6 grouped by /64 (20 failures in 15 minutes
//     lock it for 15 minutes): one address guessing at many accounts;
//   - its account from that address (5 failures): one address guessing at
//     one account;
//   - its account from anywhere (20 failures), counted and enforced only for
//     addresses that have not signed in to that account in the last 30 days
//     (login_known_addresses): guessing spread over many addresses.
//
// While a key is locked even the right password is refused, with the time
// left (ThrottledError). The attempt that sets a lock also writes its one
// audit row (AuditLoginLockout), in the same statement; attempts refused
// while it holds write nothing. The design point is that nobody can lock another
// user out: the first two keys are the attacker's own address, one address
// can never reach the account-wide limit, and the account-wide lock that
// many addresses can cause does not apply where the owner usually signs in.
// A right password from an address whose own keys are not locked succeeds
// (from an address new to the account, unless the account is under attack
// from many addresses). A success gives its attempt back everywhere, clears
// the account-and-address count and remembers the address for the account;
// it does not clear the account-wide count, whose failures came from
// elsewhere.
//
// Counting first matters: checking the count and recording a failure
// afterwards would let a burst of parallel guesses all pass the check before
// the first failure is recorded; counting under the row lock of each key
// lets no more than the limit through. Unknown emails cost the same argon2
// run as known ones and get the same ErrInvalidCredentials, so the form
// does not reveal which accounts exist.
//
// The client address is the TCP peer's, unless the peer is a trusted
// reverse proxy (ClientAddress, UPCHECK_TRUSTED_PROXIES): then it is the
// rightmost X-Forwarded-For entry that is not a trusted proxy. Behind a proxy
// that is not configured as trusted, every client shares the proxy's
// address, and one client's failures lock them all out.
//
// # What
//
// Roles map to permissions in one table (permissions.go): admin has
// plugins.can_view, plugins.can_manage, tokens.can_manage, audit.can_view
// and sites.can_manage, viewer plugins.can_view. Routes ask for a permission (the
// web layer's require), per route group, never for a role; Principal.Can
// answers for the role and the token's scope together.
//
// # Forgery
//
// The session cookie is SameSite=Lax, and on top of that every state
// change made with a session must carry the session's random CSRF token
// (X-CSRF-Token header or csrf_token form field); requests whose
// Sec-Fetch-Site or Origin show another site are refused before that.
// Token requests skip the check: browsers never attach bearer tokens on
// their own, so a token request cannot be forged cross-site (CheckCSRF).
// The login form has no session yet, so it gets the origin check alone
// (CheckSameOrigin): a forged cross-site login would otherwise sign the
// victim into an account of the attacker's choosing.
//
// # Failure is not logout
//
// A database that does not answer is not the same as a wrong password:
// those errors carry ErrUnavailable and the web layer answers them with 503,
// so that an outage never throws users out to the login page or tells a
// script its token is bad.
package auth
