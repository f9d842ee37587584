package routing

import (
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// FuzzResolveRouting: Resolve never panics and matches only the exact value
// Derive gives the returned agent; everything else is the one error.
func FuzzResolveRouting(f *testing.F) {
	k := New(testSecret('a'), testSecret('b'), "1.0")
	prevOnly := New(testSecret('b'), nil, "1.0")
	visible := []interop.Agent{
		{ID: "support", Workflows: []string{"w"}},
		{ID: "billing", Workflows: []string{"w"}},
		{ID: "idle"},
	}
	for _, r := range []string{k.Derive("support"), prevOnly.Derive("billing"), k.Derive("idle"), "", "AAAAAAAAAAAAAAAAAAAAAAAA", k.Derive("support")[:23] + "\n"} {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, r string) {
		a, err := k.Resolve(r, visible)
		if err != nil {
			if err != ErrUnknownValue || a.ID != "" {
				t.Fatalf("Resolve(%q) = %v, %v", r, a, err)
			}
			return
		}
		if len(a.Workflows) == 0 || (r != k.Derive(a.ID) && r != prevOnly.Derive(a.ID)) {
			t.Fatalf("Resolve(%q) = %s, which does not own that value", r, a.ID)
		}
	})
}
