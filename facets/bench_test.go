package facets

import (
	"encoding/json"
	"testing"
)

// Validation runs once at start-up and Records once per discovery
// response build; neither is hot. The numbers are reported so a regression
// is visible.

func BenchmarkNewValidator(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewValidator(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	v := newTestValidator(b)
	d, s := fullHost()
	d.normalize()
	b.ReportAllocs()
	for b.Loop() {
		if err := v.validate(testNow, d, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeclare(b *testing.B) {
	v := newTestValidator(b)
	d, s := fullHost()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Declare(testNow, d, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecords(b *testing.B) {
	v := newTestValidator(b)
	d, s := fullHost()
	ad := mustDeclare(b, v, d, s)
	b.ReportAllocs()
	for b.Loop() {
		if len(ad.Records()) != 3 {
			b.Fatal("records missing")
		}
	}
}

func BenchmarkMarshalAdvertisement(b *testing.B) {
	v := newTestValidator(b)
	d, s := fullHost()
	ad := mustDeclare(b, v, d, s)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(ad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDeclaration(b *testing.B) {
	v := newTestValidator(b)
	d, s := fullHost()
	raw, _ := json.Marshal(mustDeclare(b, v, d, s))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDeclaration(raw); err != nil {
			b.Fatal(err)
		}
	}
}
