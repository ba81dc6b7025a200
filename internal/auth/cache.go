package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// maxCachedPrincipals bounds the cache; past it, the cache starts over.
// Only successful authentications are cached, so random tokens cannot fill
// it.
const maxCachedPrincipals = 10_000

// principalCache remembers successful authentications for a short time, so
// that a burst of requests with one session or token costs one query. A
// logout or revocation on this instance drops the entry at once; on another
// instance it takes effect within the TTL.
type principalCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[[sha256.Size]byte]cachedPrincipal
}

type cachedPrincipal struct {
	principal Principal
	until     time.Time // monotonic
}

func newPrincipalCache(ttl time.Duration) *principalCache {
	return &principalCache{ttl: ttl, entries: map[[sha256.Size]byte]cachedPrincipal{}}
}

func (c *principalCache) get(key []byte) (Principal, bool) {
	if c.ttl <= 0 {
		return Principal{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[[sha256.Size]byte(key)]
	if !ok || time.Now().After(e.until) {
		return Principal{}, false
	}
	return e.principal, true
}

func (c *principalCache) put(key []byte, p Principal) {
	c.putFor(key, p, c.ttl)
}

// putFor caches p for at most the TTL and at most d: a token's entry must
// not outlive the token's end.
func (c *principalCache) putFor(key []byte, p Principal, d time.Duration) {
	if c.ttl <= 0 || d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCachedPrincipals {
		clear(c.entries)
	}
	c.entries[[sha256.Size]byte(key)] = cachedPrincipal{principal: p, until: time.Now().Add(min(c.ttl, d))}
}

// drop forgets every entry whose principal matches.
func (c *principalCache) drop(match func(Principal) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if match(e.principal) {
			delete(c.entries, k)
		}
	}
}
