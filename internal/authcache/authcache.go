// Package authcache keeps one value per authorization context for a
// while: what a RunStore answered for a caller (its workflows, its tool
// list), reused until a TTL runs out, never served to another context,
// and dropped per tenant when the host says that tenant's workflows
// changed. The key is the whole authorization context
// (internal/subjectkey), so two callers the host could tell apart never
// share an entry. The a2a and mcp surfaces share it.
//
// Nothing is kept for an anonymous (unauthenticated) Subject: it does not
// identify a caller — every anonymous caller may resolve to the same one,
// while the store may answer each differently from what the request
// carries besides — so an entry kept for one would be served to the next.
// An anonymous caller's answers are read from the store every time.
package authcache

import (
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/internal/subjectkey"
	"github.com/wopinterop/wopinterop/interop"
)

// Cache maps authorization contexts to values of type V. The zero value is
// not usable; build one with [New]. It is safe for concurrent use.
type Cache[V any] struct {
	ttl     time.Duration
	max     int
	mu      sync.Mutex
	entries map[string]entry[V]
}

type entry[V any] struct {
	tenant  string
	expires time.Time
	value   V
}

// New returns a cache keeping each value for ttl (ttl <= 0: nothing is
// kept) and at most max entries: a full cache drops the expired entries,
// then arbitrary ones until it is half full.
func New[V any](ttl time.Duration, max int) *Cache[V] {
	return &Cache[V]{ttl: ttl, max: max, entries: make(map[string]entry[V])}
}

// Key is the cache key of sub, or "" for an anonymous Subject, under which
// Get finds nothing and Put keeps nothing.
func Key(sub interop.Subject) string {
	if !sub.Authenticated {
		return ""
	}
	return subjectkey.Of(sub)
}

// Get returns the value kept for key if it is still fresh at now.
func (c *Cache[V]) Get(key string, now time.Time) (V, bool) {
	if key == "" {
		var zero V
		return zero, false
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Put keeps v for key, which belongs to tenant, from now for the TTL.
func (c *Cache[V]) Put(key, tenant string, v V, now time.Time) {
	if c.ttl <= 0 || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		c.evictLocked(now)
	}
	c.entries[key] = entry[V]{tenant: tenant, expires: now.Add(c.ttl), value: v}
}

// Invalidate drops the entries of tenant, or every entry when tenant is "".
func (c *Cache[V]) Invalidate(tenant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if tenant == "" || e.tenant == tenant {
			delete(c.entries, k)
		}
	}
}

// Len is the number of entries kept, fresh or not.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache[V]) evictLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < c.max/2 {
			break
		}
		delete(c.entries, k)
	}
}
