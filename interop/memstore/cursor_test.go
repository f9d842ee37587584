package memstore

import (
	"bytes"
	"testing"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
)

func goldenSigner() *cursorSigner {
	return newCursorSigner([]byte("0123456789abcdef0123456789abcdef"))
}

func goldenScope() cursorScope {
	return cursorScope{tenant: tenantA, filter: &listFilter{
		workspace: "ws-1", contextID: "ctx-1", workflowID: FixtureNoop,
		statuses:    statusBit(interop.StatusRunning) | statusBit(interop.StatusCompleted),
		statusAfter: 1785240000000000000, hasAfter: true,
	}}
}

// TestCursorGolden pins the cursor wire bytes: a change of layout, MAC
// input or encoding shows up here (and would invalidate issued cursors).
func TestCursorGolden(t *testing.T) {
	c := goldenSigner()
	var b bytes.Buffer
	for _, k := range []listKey{
		{at: 1785240000123456789, id: tenantA + "/ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
		{at: 0, id: "x"},
		{at: -1, id: "anon:peer/0123456789abcdef"},
	} {
		b.WriteString(c.encode(goldenScope(), k))
		b.WriteByte('\n')
	}
	b.WriteString(c.encode(cursorScope{tenant: tenantB, filter: &listFilter{}}, listKey{at: 42, id: tenantB + "/ZYXWVUTSRQPONMLKJIHGFEDCBA"}))
	b.WriteByte('\n')
	golden.Check(t, "cursor.golden", b.Bytes())
}

func TestCursorRoundTripAndScopeBinding(t *testing.T) {
	c := goldenSigner()
	k := listKey{at: 1785240000123456789, id: tenantA + "/ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
	tok := c.encode(goldenScope(), k)
	got, ok := c.decode(goldenScope(), tok)
	if !ok || got != k {
		t.Fatalf("decode = %+v, %v; want %+v", got, ok, k)
	}
	// Any change of scope, and a different key, invalidate it.
	scopes := map[string]func(sc *cursorScope){
		"tenant":       func(sc *cursorScope) { sc.tenant = tenantB },
		"workspace":    func(sc *cursorScope) { sc.filter.workspace = "" },
		"context":      func(sc *cursorScope) { sc.filter.contextID = "ctx-2" },
		"workflow":     func(sc *cursorScope) { sc.filter.workflowID = "" },
		"statuses":     func(sc *cursorScope) { sc.filter.statuses = statusBit(interop.StatusRunning) },
		"status after": func(sc *cursorScope) { sc.filter.statusAfter++ },
		"no after":     func(sc *cursorScope) { sc.filter.hasAfter = false },
		// Length prefixes: moving a byte between fields changes the scope.
		"field boundary": func(sc *cursorScope) { sc.tenant, sc.filter.workspace = tenantA+"w", "s-1" },
	}
	for name, change := range scopes {
		sc := goldenScope()
		change(&sc)
		if _, ok := c.decode(sc, tok); ok {
			t.Errorf("%s: cursor accepted in another scope", name)
		}
	}
	if _, ok := newCursorSigner([]byte("another key")).decode(goldenScope(), tok); ok {
		t.Error("cursor accepted under another key")
	}
}

// FuzzDecodeCursor feeds arbitrary tokens to the decoder: it must never
// panic, and whatever it accepts must be exactly the canonical token of
// what it decoded (so only issued cursors pass; a forgery needs the MAC).
func FuzzDecodeCursor(f *testing.F) {
	c := goldenSigner()
	sc := goldenScope()
	f.Add(c.encode(sc, listKey{at: 1785240000123456789, id: tenantA + "/ABCDEFGHIJKLMNOPQRSTUVWXYZ"}))
	f.Add(c.encode(sc, listKey{at: -5, id: ""}))
	f.Add("")
	f.Add("AQ")
	f.Add("%%%")
	f.Add("AQAAAAAAAAAAYWNtZQ\n")
	f.Fuzz(func(t *testing.T, token string) {
		k, ok := c.decode(sc, token)
		if !ok {
			return
		}
		if again := c.encode(sc, k); again != token {
			t.Fatalf("accepted %q, which is not the canonical cursor %q of %+v", token, again, k)
		}
	})
}
