package authcache

import (
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func TestGetPutExpire(t *testing.T) {
	c := New[string](time.Minute, 10)
	alice := Key(interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true})
	bob := Key(interop.Subject{Tenant: "acme", Principal: "bob", Authenticated: true})
	if alice == bob {
		t.Fatal("two principals share a key")
	}
	c.Put(alice, "acme", "a", t0)
	if v, ok := c.Get(alice, t0.Add(59*time.Second)); !ok || v != "a" {
		t.Fatalf("fresh entry: %q %v", v, ok)
	}
	if _, ok := c.Get(bob, t0); ok {
		t.Fatal("another context got alice's entry")
	}
	if _, ok := c.Get(alice, t0.Add(time.Minute)); ok {
		t.Fatal("an entry outlived its TTL")
	}
}

func TestNoTTLKeepsNothing(t *testing.T) {
	c := New[int](0, 10)
	c.Put("k", "acme", 1, t0)
	if _, ok := c.Get("k", t0); ok || c.Len() != 0 {
		t.Fatal("a cache without TTL kept a value")
	}
}

func TestInvalidate(t *testing.T) {
	c := New[int](time.Minute, 10)
	c.Put("a1", "acme", 1, t0)
	c.Put("a2", "acme", 2, t0)
	c.Put("g1", "globex", 3, t0)
	c.Invalidate("acme")
	if _, ok := c.Get("a1", t0); ok {
		t.Fatal("acme's entry survived its invalidation")
	}
	if v, ok := c.Get("g1", t0); !ok || v != 3 {
		t.Fatal("globex's entry was dropped with acme's")
	}
	c.Invalidate("")
	if c.Len() != 0 {
		t.Fatal("Invalidate(\"\") left entries")
	}
}

func TestBounded(t *testing.T) {
	c := New[int](time.Minute, 8)
	for i := range 8 {
		c.Put(string(rune('a'+i)), "acme", i, t0)
	}
	c.Put("stale", "acme", 0, t0.Add(-2*time.Minute)) // full: evicts to half
	if n := c.Len(); n > 8 || n < 1 {
		t.Fatalf("%d entries after eviction, bound 8", n)
	}
	if v, ok := c.Get("stale", t0.Add(-2*time.Minute)); !ok || v != 0 {
		t.Fatal("the entry that caused the eviction was not kept")
	}
	for range 100 {
		c.Put(t.Name(), "acme", 1, t0)
	}
	if c.Len() > 8 {
		t.Fatalf("%d entries, bound 8", c.Len())
	}
}

// An anonymous Subject identifies no caller: nothing is kept for it, so no
// anonymous caller is ever served what the store answered another.
func TestAnonymousKeepsNothing(t *testing.T) {
	c := New[string](time.Minute, 10)
	for _, anon := range []interop.Subject{
		{},
		{Tenant: "acme", Principal: "guest"},
		{Tenant: "acme", Actor: &interop.Subject{Tenant: "acme", Principal: "peer", Authenticated: true}},
	} {
		key := Key(anon)
		c.Put(key, anon.Tenant, "first caller's", t0)
		if v, ok := c.Get(key, t0); ok {
			t.Fatalf("%+v: served %q from the cache", anon, v)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("%d entries kept for anonymous Subjects", c.Len())
	}
}
