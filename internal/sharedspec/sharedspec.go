// Package sharedspec locates the upstream OpenWOP data files that tests
// compare against. They live outside the module, in ../shared/spec beside
// the module root, and are never copied into the project; a test that needs
// one skips cleanly when it is absent (a plain checkout of the library).
package sharedspec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Path returns the path of rel (slash-separated, relative to shared/spec)
// or skips t when the file is absent.
func Path(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "spec", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared spec file %s not present", rel)
	}
	return p
}

// Read returns the bytes of rel or skips t.
func Read(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Schema compiles the JSON Schema at rel. Extra supplies documents for
// $refs the stored copy cannot resolve (schemas the upstream repository has
// but shared/spec does not), keyed by the URL the ref resolves to; patch,
// when non-nil, edits the decoded schema before compiling (to apply a
// documented upstream change the stored copy predates).
func Schema(t testing.TB, rel string, extra map[string]any, patch func(map[string]any)) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Read(t, rel)))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	if patch != nil {
		m, ok := doc.(map[string]any)
		if !ok {
			t.Fatalf("%s is not an object schema", rel)
		}
		patch(m)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const self = "mem://shared/schema.json"
	if err := c.AddResource(self, doc); err != nil {
		t.Fatal(err)
	}
	for url, d := range extra {
		if err := c.AddResource(url, d); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(self)
	if err != nil {
		t.Fatalf("compile %s: %v", rel, err)
	}
	return s
}

// Validate decodes doc and validates it against s, failing t on error.
func Validate(t testing.TB, s *jsonschema.Schema, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("does not validate: %v\n%s", err, doc)
	}
}

// JSON is a convenience for building extra resources in tests.
func JSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
