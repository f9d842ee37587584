package schemacheck

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compile(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheck(t *testing.T) {
	s := compile(t, `{"type":"object","properties":{"delayMs":{"type":"integer","maximum":600000},"a/b~c":{"type":"string"}},"additionalProperties":false}`)
	if f := Check(s, []byte(`{"delayMs":5}`)); f != nil {
		t.Fatalf("valid document refused: %+v", f)
	}
	if f := Check(s, []byte(`{"delayMs":`)); f == nil || !f.Malformed {
		t.Fatalf("malformed: %+v", f)
	}
	f := Check(s, []byte(`{"delayMs":700000}`))
	if f == nil || f.Malformed || f.Pointer != "/delayMs" || !strings.Contains(f.Reason, "maximum") || strings.Contains(f.Reason, "mem://") {
		t.Fatalf("maximum: %+v", f)
	}
	if f := Check(s, []byte(`{"a/b~c":1}`)); f == nil || f.Pointer != "/a~1b~0c" {
		t.Fatalf("escaped pointer: %+v", f)
	}
	if f := Check(s, []byte(`[]`)); f == nil || f.Pointer != "" || f.Reason == "" {
		t.Fatalf("document-level failure: %+v", f)
	}
}

// The empty object, decoded without a decoder, is judged as the decoder
// would have it: an object without members.
func TestCheckEmptyObject(t *testing.T) {
	required := compile(t, `{"type":"object","required":["a"]}`)
	for _, doc := range []string{`{}`, " {}\n", `{ }`} {
		want, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		got, err := decode([]byte(doc))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("decode(%q) = %#v, %v; want %#v", doc, got, err, want)
		}
		if f := Check(required, []byte(doc)); f == nil || f.Pointer != "" || !strings.Contains(f.Reason, "missing property") {
			t.Fatalf("Check(%q) = %+v", doc, f)
		}
	}
	// Only JSON whitespace surrounds a document: a no-break space does not.
	if f := Check(required, []byte("\u00a0{}")); f == nil || !f.Malformed {
		t.Fatalf("NBSP before {}: %+v", f)
	}
	if f := Check(compile(t, `{"type":"array"}`), []byte(`{}`)); f == nil || !strings.Contains(f.Reason, "want array") {
		t.Fatalf("an object is no array: %+v", f)
	}
}

func TestCacheCompilesOnce(t *testing.T) {
	c := NewCache()
	raw := []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	a, err := c.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Compile([]byte(string(raw)))
	if err != nil || a != b {
		t.Fatalf("the same text compiled twice (%p, %p, %v)", a, b, err)
	}
	if f := Check(a, []byte(`{"n":1.5}`)); f == nil || f.Pointer != "/n" {
		t.Fatalf("the compiled schema does not validate: %+v", f)
	}
}

func TestCacheRefusals(t *testing.T) {
	c := NewCache()
	for _, tc := range []struct{ name, schema string }{
		{"not JSON", `{"type":`},
		{"not an object", `[]`},
		{"boolean schema", `true`},
		{"external reference", `{"$ref":"https://schemas.example/x.json"}`},
		{"file reference", `{"$ref":"file:///etc/passwd"}`},
	} {
		if _, err := c.Compile([]byte(tc.schema)); err == nil {
			t.Errorf("%s: compiled", tc.name)
		}
	}
	if _, err := c.Compile([]byte(`[]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("not an object: %v, want ErrNotObject", err)
	}
}
