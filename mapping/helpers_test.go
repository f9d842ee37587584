package mapping

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/wopinterop/wopinterop/internal/interopmap"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// builtinTree decodes our embedded map into generic JSON for mutation.
func builtinTree(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(builtinJSON), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func encodeTree(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// obj and arr walk a generic JSON tree by member names.
func obj(v any, path ...string) map[string]any {
	m := v.(map[string]any)
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

func arr(v any, path ...string) []any {
	m := obj(v, path[:len(path)-1]...)
	return m[path[len(path)-1]].([]any)
}

func setArr(v any, a []any, path ...string) {
	obj(v, path[:len(path)-1]...)[path[len(path)-1]] = a
}

func row(v any, i int, path ...string) map[string]any {
	return arr(v, path...)[i].(map[string]any)
}

func cloneRow(r map[string]any) map[string]any {
	out := make(map[string]any, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

func without(a []any, i int) []any {
	out := append([]any{}, a[:i]...)
	return append(out, a[i+1:]...)
}

// allFacets says yes to every facet.
func allFacets(string) bool { return true }

// rowErrors returns every *RowError in err (Load joins them).
func rowErrors(err error) []*RowError {
	var out []*RowError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if re, ok := err.(*RowError); ok {
			out = append(out, re)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// index is the library's own view of m, with the lookups the bindings use.
func index(m *Map) *interopmap.Map { return (*interopmap.Map)(m) }
