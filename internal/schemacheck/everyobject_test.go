package schemacheck

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// neutralFields are the fields of a compiled schema that assert nothing:
// identifiers, the draft and annotations.
var neutralFields = map[string]bool{
	"DraftVersion": true, "Location": true, "ID": true, "Anchor": true,
	"RecursiveAnchor": true, "DynamicAnchor": true, "Types": true,
	"Title": true, "Description": true, "Default": true, "Comment": true,
	"ReadOnly": true, "WriteOnly": true, "Examples": true, "Deprecated": true,
}

// Every field of jsonschema.Schema is weighed: setting any keyword on
// {"type":"object"} makes everyObject false, setting a neutral field
// keeps it true. A field a new validator release adds counts as a keyword
// until it is listed as neutral, so it fails here rather than being
// skipped in Check.
func TestEveryObjectWeighsEveryField(t *testing.T) {
	base := compile(t, `{"type":"object"}`)
	if !everyObject(base) {
		t.Fatal(`{"type":"object"} is not everyObject`)
	}
	typ := reflect.TypeFor[jsonschema.Schema]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() || f.Name == "Types" {
			continue
		}
		c := *base
		setNonZero(t, reflect.ValueOf(&c).Elem().Field(i), f)
		if got := everyObject(&c); got != neutralFields[f.Name] {
			t.Errorf("%s set: everyObject = %v", f.Name, got)
		}
	}
	for _, schema := range []string{`{"type":["object","null"]}`, `{"type":"array"}`, `{}`, `true`} {
		if everyObject(compile(t, schema)) {
			t.Errorf("%s is everyObject", schema)
		}
	}
}

// setNonZero gives v a value other than its zero.
func setNonZero(t *testing.T, v reflect.Value, f reflect.StructField) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		key := reflect.New(v.Type().Key()).Elem()
		if key.Kind() == reflect.Interface { // Regexp keys
			key = reflect.ValueOf(regexp.MustCompile("x"))
		}
		m.SetMapIndex(key, reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Interface:
		if v.Type().NumMethod() == 0 {
			v.Set(reflect.ValueOf(true))
		} else {
			v.Set(reflect.ValueOf(regexp.MustCompile("x"))) // Regexp
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(7)
	case reflect.String:
		v.SetString("x")
	default:
		t.Fatalf("field %s of kind %s: teach setNonZero and everyObject about it", f.Name, v.Kind())
	}
}

// An object against {"type":"object"} is judged without the validator:
// no allocation at all.
func TestCheckEveryObjectAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s := compile(t, `{"type":"object"}`)
	doc := []byte(`{"a":[1,{"b":null}],"c":"d"}`)
	if n := testing.AllocsPerRun(100, func() {
		if Check(s, doc) != nil {
			t.Fatal("refused")
		}
	}); n != 0 {
		t.Fatalf("Check allocated %v times", n)
	}
}

// FuzzCheckEveryObject: Check answers every document against
// {"type":"object"} as the validator does — objects pass, anything else is
// refused the same way, malformed input is malformed.
func FuzzCheckEveryObject(f *testing.F) {
	for _, doc := range []string{`{}`, ` {"a":1} `, `{"a":1}x`, `{"a":1}{}`, `[]`, `"s"`, `{"a":`, "{\"\xff\":1}", "\t{\"a\":{\"a\":{}}}\n", `{"a":1,"a":2}`, ``, `nul`} {
		f.Add([]byte(doc))
	}
	s, err := NewCache().Compile([]byte(`{"type":"object"}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, want := Check(s, doc), validate(s, doc)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Check(%q) = %+v; the validator says %+v", doc, got, want)
		}
	})
}
