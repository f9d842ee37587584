package remote

import (
	"sync"
	"time"
)

// cacheKey is what a cached list is keyed by (OpenWOP interop map,
// mcp.cache: tenant, workspace, principal, server origin, revision and
// authorization context). The server is its endpoint, origin and path:
// two servers may share an origin, and one's list is not the other's.
// The authorization context is the credential's identity (its reference)
// and the keyed fingerprint of the value presented, never the value.
type cacheKey struct {
	tenant, workspace, principal string
	server, revision             string
	credential, fingerprint      string
	method                       string
}

// listCache holds whole lists (every page, as the server listed them,
// before projection through an admission) per key, for at most the
// server's ttlMs and the client's ceiling.
//
// The server's cacheScope never widens sharing: every result, "public"
// or "private", is keyed by the whole authorization key, so a list is
// never served to another tenant, workspace, principal or credential
// than the one it was fetched for. "public" is the server's word about
// its own answer; trusting it would let one server's mistake show one
// principal's list to another.
type listCache struct {
	now     func() time.Time
	ceiling time.Duration
	max     int

	mu      sync.Mutex
	entries map[cacheKey]cachedList
	// drops counts the drops so far (dropServer, dropCredential): a list
	// whose fetch a drop overtook is not kept, as it may predate the
	// change the drop was for.
	drops uint64
}

type cachedList struct {
	items   []listed
	expires time.Time
}

func newListCache(now func() time.Time, ceiling time.Duration, max int) *listCache {
	return &listCache{now: now, ceiling: ceiling, max: max, entries: map[cacheKey]cachedList{}}
}

// get returns the fresh list of k.
func (c *listCache) get(k cacheKey) ([]listed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	if !c.now().Before(e.expires) {
		delete(c.entries, k)
		return nil, false
	}
	return e.items, true
}

// generation is what fetched passes to putFetched: the drops so far.
func (c *listCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drops
}

// put caches items under k for ttlMs (the smallest of its pages'), capped
// by the ceiling; a ttlMs of 0 — "immediately stale" (MCP 2026-07-28
// §Caching) — or a disabled cache keeps nothing.
func (c *listCache) put(k cacheKey, items []listed, ttlMs int) {
	c.putFetched(k, items, ttlMs, c.generation())
}

// putFetched is put for a list whose fetch began at generation gen: when
// a drop came since, nothing is kept. It reports whether items were kept.
func (c *listCache) putFetched(k cacheKey, items []listed, ttlMs int, gen uint64) bool {
	ttl := min(time.Duration(ttlMs)*time.Millisecond, c.ceiling)
	if ttl <= 0 || c.max <= 0 {
		return false
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drops != gen {
		return false
	}
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[k] = cachedList{items: items, expires: now.Add(ttl)}
	return true
}

// evict drops the expired entries, or, when none has expired, the one
// nearest its expiry.
func (c *listCache) evict(now time.Time) {
	var oldest cacheKey
	var oldestAt time.Time
	dropped := false
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
			dropped = true
			continue
		}
		if oldestAt.IsZero() || e.expires.Before(oldestAt) {
			oldest, oldestAt = k, e.expires
		}
	}
	if !dropped && !oldestAt.IsZero() {
		delete(c.entries, oldest)
	}
}

// dropServer drops the lists of the server at endpoint, under every
// authorization key: a server's list changed for every caller. An empty
// revision or method drops them all.
func (c *listCache) dropServer(endpoint, revision, method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drops++
	for k := range c.entries {
		if k.server == endpoint && (revision == "" || k.revision == revision) && (method == "" || k.method == method) {
			delete(c.entries, k)
		}
	}
}

// dropCredential drops every list fetched under the credential identity.
func (c *listCache) dropCredential(identity string) {
	if identity == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drops++
	for k := range c.entries {
		if k.credential == identity {
			delete(c.entries, k)
		}
	}
}
