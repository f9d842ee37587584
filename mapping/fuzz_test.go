package mapping

import (
	"bytes"
	"errors"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// FuzzLoad: Load never panics; it either refuses with exactly one of its
// three sentinels or returns a map whose projections are total and whose
// canonical JSON reloads to the same bytes.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(builtinJSON))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version":1,"updated":"2026-01-01","pins":{"a2a":{"spec":"x"},"mcp":{"spec":"y"}}}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`[`))
	doc := builtinTree(f)
	delete(obj(doc, "mcp"), "tasks")
	f.Add(encodeTree(f, doc))
	doc = builtinTree(f)
	setArr(doc, without(arr(doc, "a2a", "taskState"), 0), "a2a", "taskState")
	f.Add(encodeTree(f, doc))

	loader, err := newLoader()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := loader.load(data)
		if err != nil {
			n := 0
			for _, s := range []error{ErrDecode, ErrSchema, ErrInconsistent} {
				if errors.Is(err, s) {
					n++
				}
			}
			if n != 1 || m != nil {
				t.Fatalf("Load = %v, %v; want nil and exactly one sentinel", m, err)
			}
			return
		}
		for _, s := range interop.AllStatuses() {
			if _, ok := index(m).TaskState(s, interop.InterruptCredential); !ok {
				t.Fatalf("TaskState(%s) missing", s)
			}
			if index(m).HasMCPTasks() {
				if _, ok := index(m).MCPTaskStatus(s); !ok {
					t.Fatalf("MCPTaskStatus(%s) missing", s)
				}
			}
		}
		once, err := m.JSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := loader.load(once)
		if err != nil {
			t.Fatalf("reload of canonical form: %v", err)
		}
		twice, err := again.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("canonical form not stable:\n%s\n%s", once, twice)
		}
	})
}
