// Package sharedspec locates the upstream OpenWOP data files that tests
// compare against. They live outside the module, in ../shared/spec beside
// the module root, and are never copied into the project; a test that needs
// one skips cleanly when it is absent (a plain checkout of the library).
package sharedspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/fixture"
)

// Path returns the path of rel (slash-separated, relative to shared/spec)
// or skips t when the file is absent.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(fixture.Root(t), "..", "shared", "spec", filepath.FromSlash(rel))
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

// RunEventValidator returns a check of one run event document against the
// upstream OpenWOP schemas: the RunEventDoc envelope
// (schemas/v2/run-event.schema.json, with ids.schema.json) and, for the
// types the stored payload extract covers (extracts/run-event-payloads.extract.json,
// its _typeIndex) and negotiation.decided (extracts/negotiationDecided.schema.json
// plus RFC 0242's optional `requested`), the registered payload. The
// extract's references to schemas shared/spec does not hold
// (subject.schema.json, suspend-request.schema.json) get permissive
// stand-ins; no payload the library writes uses them. It skips t when the
// files are absent.
func RunEventValidator(t testing.TB) func(doc []byte) error {
	t.Helper()
	const base = "https://openwop.dev/spec/v2/"
	load := func(rel string) any {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(Read(t, rel)))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return v
	}
	ids := load("openwop-v2/schemas/v2/ids.schema.json")
	envelope := load("openwop-v2/schemas/v2/run-event.schema.json")
	// The vendor-type pattern starts with the lookahead (?!openwop\.),
	// which Go's RE2 cannot compile: the pattern is checked without it and
	// the reserved prefix separately below.
	//
	// The stored schema also states `type` as oneOf [registered enum,
	// vendor pattern], yet every registered name matches the vendor pattern
	// too, so oneOf refuses every registered type; the evident intent
	// (RFC 0171 §A.1: registered or vendor) is anyOf, which is what is
	// checked.
	typeSchema := envelope.(map[string]any)["properties"].(map[string]any)["type"].(map[string]any)
	alternatives := typeSchema["oneOf"].([]any)
	delete(typeSchema, "oneOf")
	typeSchema["anyOf"] = alternatives
	vendor := alternatives[1].(map[string]any)
	vendor["pattern"] = strings.Replace(vendor["pattern"].(string), `(?!openwop\.)`, "", 1)
	payloads := load("openwop-v2/extracts/run-event-payloads.extract.json")
	negotiation := load("openwop-v2/extracts/negotiationDecided.schema.json").(map[string]any)
	delete(negotiation, "$id")
	negotiation["properties"].(map[string]any)["requested"] = map[string]any{"type": "string"}

	c := jsonschema.NewCompiler()
	c.AssertFormat()
	resources := map[string]any{
		base + "ids.schema.json":                ids,
		base + "run-event.schema.json":          envelope,
		base + "run-event-payloads.schema.json": payloads,
		base + "subject.schema.json":            map[string]any{},
		base + "suspend-request.schema.json":    map[string]any{},
		"mem://shared/negotiationDecided.json":  negotiation,
	}
	for url, doc := range resources {
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
	}
	compile := func(url string) *jsonschema.Schema {
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("compile %s: %v", url, err)
		}
		return s
	}
	envelopeSchema := compile(base + "run-event.schema.json")
	byType := map[string]*jsonschema.Schema{"negotiation.decided": compile("mem://shared/negotiationDecided.json")}
	index := payloads.(map[string]any)["_typeIndex"].(map[string]any)["properties"].(map[string]any)
	for typ, ref := range index {
		byType[typ] = compile(base + "run-event-payloads.schema.json" + ref.(map[string]any)["$ref"].(string))
	}
	validate := func(s *jsonschema.Schema, doc []byte) error {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		return s.Validate(v)
	}
	return func(doc []byte) error {
		if err := validate(envelopeSchema, doc); err != nil {
			return fmt.Errorf("envelope: %w", err)
		}
		var ev struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(doc, &ev); err != nil {
			return err
		}
		if strings.HasPrefix(ev.Type, "openwop.") {
			return fmt.Errorf("event type %q uses the reserved openwop. prefix", ev.Type)
		}
		if s, ok := byType[ev.Type]; ok {
			if err := validate(s, ev.Payload); err != nil {
				return fmt.Errorf("%s payload: %w", ev.Type, err)
			}
		}
		return nil
	}
}
