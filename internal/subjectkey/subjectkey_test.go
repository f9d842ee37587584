package subjectkey

import (
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

func TestOf(t *testing.T) {
	base := interop.Subject{Tenant: "t", Principal: "p", Authenticated: true, Scopes: []string{"b", "a"}}
	same := base
	same.Scopes = []string{"a", "b", "a"}
	if Of(base) != Of(same) {
		t.Error("scope order or repetition changed the key")
	}
	variants := []func(*interop.Subject){
		func(s *interop.Subject) { s.Tenant = "u" },
		func(s *interop.Subject) { s.Workspace = "w" },
		func(s *interop.Subject) { s.Principal = "q" },
		func(s *interop.Subject) { s.Authenticated = false },
		func(s *interop.Subject) { s.Scopes = []string{"a"} },
		func(s *interop.Subject) { s.Scopes = []string{"a", "b", "c"} },
		func(s *interop.Subject) { s.Tenant, s.Principal = "t1", "" }, // no ambiguity between fields
		func(s *interop.Subject) { s.Scopes = []string{"a:1:b"} },     // nor between scopes and fields
		func(s *interop.Subject) { s.Actor = &interop.Subject{Tenant: "peer"} },
		func(s *interop.Subject) { s.Actor = &interop.Subject{} },
	}
	seen := map[string]int{Of(base): -1}
	for i, v := range variants {
		s := base
		s.Scopes = append([]string(nil), base.Scopes...)
		v(&s)
		k := Of(s)
		if j, dup := seen[k]; dup {
			t.Errorf("variant %d shares the key of %d: %q", i, j, k)
		}
		seen[k] = i
	}
}

func TestOfKeepsScopesOfTheCaller(t *testing.T) {
	scopes := []string{"z", "a"}
	_ = Of(interop.Subject{Scopes: scopes})
	if scopes[0] != "z" {
		t.Fatal("Of sorted the caller's scopes in place")
	}
}

func TestOfAllocatesOnce(t *testing.T) {
	sub := interop.Subject{Tenant: "acme", Workspace: "w", Principal: "user:alice", Authenticated: true, Scopes: []string{"a:read", "b:write"}}
	if n := testing.AllocsPerRun(100, func() { _ = Of(sub) }); n > 1 {
		t.Errorf("Of allocates %.0f times, want 1", n)
	}
}
