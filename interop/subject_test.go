package interop

import (
	"reflect"
	"testing"
)

// A clone shares no slice or pointer with the Subject it was made from, at
// any depth of actors: a store keeping it sees nothing the caller changes.
func TestSubjectClone(t *testing.T) {
	orig := Subject{
		Tenant: "acme", Principal: "alice", Authenticated: true, Scopes: []string{"runs:read"},
		Actor: &Subject{Principal: "gateway", Scopes: []string{"forward"}, Actor: &Subject{Principal: "edge", Scopes: []string{"x"}}},
	}
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone %+v differs from %+v", c, orig)
	}
	c.Scopes[0] = "changed"
	c.Actor.Scopes[0] = "changed"
	c.Actor.Actor.Scopes[0] = "changed"
	c.Actor.Principal = "changed"
	c.Actor.Actor.Principal = "changed"
	if orig.Scopes[0] != "runs:read" || orig.Actor.Scopes[0] != "forward" || orig.Actor.Actor.Scopes[0] != "x" ||
		orig.Actor.Principal != "gateway" || orig.Actor.Actor.Principal != "edge" {
		t.Fatalf("changing the clone changed the original: %+v, actor %+v, its actor %+v", orig, *orig.Actor, *orig.Actor.Actor)
	}
	if z := (Subject{}).Clone(); z.Scopes != nil || z.Actor != nil {
		t.Fatalf("the zero Subject's clone = %+v", z)
	}
}
