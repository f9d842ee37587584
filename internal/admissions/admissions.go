// Package admissions keeps a client's admission records by alias — the
// one registry of a2a/delegate and mcp/remote. A record is stored and
// handed out as a copy, so neither the host's value nor a caller's changes
// what the client acts on (admission-boundaries §18.3).
package admissions

import "sync"

// Registry holds records of type A by alias; it is safe for concurrent use.
type Registry[A any] struct {
	clone func(A) A

	mu      sync.RWMutex
	byAlias map[string]A
}

// New returns an empty registry copying records with clone.
func New[A any](clone func(A) A) *Registry[A] {
	return &Registry[A]{clone: clone, byAlias: map[string]A{}}
}

// Add stores a under alias unless alias is taken; it reports whether it
// stored it.
func (r *Registry[A]) Add(alias string, a A) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.byAlias[alias]; taken {
		return false
	}
	r.byAlias[alias] = r.clone(a)
	return true
}

// Put stores a under alias, replacing what was there.
func (r *Registry[A]) Put(alias string, a A) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byAlias[alias] = r.clone(a)
}

// Delete removes alias's record; it reports whether there was one.
func (r *Registry[A]) Delete(alias string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.byAlias[alias]
	delete(r.byAlias, alias)
	return ok
}

// Get returns a copy of alias's record.
func (r *Registry[A]) Get(alias string) (A, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.byAlias[alias]
	if !ok {
		var zero A
		return zero, false
	}
	return r.clone(a), true
}
