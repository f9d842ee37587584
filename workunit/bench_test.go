package workunit_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/workunit"
)

// benchUnits are a small unit (the encoding sample) and a 64 KiB one of
// many members, numbers and escapes.
func benchUnits() map[string]workunit.Unit {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; b.Len() < 64<<10; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"item-` + strconv.Itoa(1000-i%1000) + `-` + strconv.Itoa(i) + `":{"price":` + strconv.Itoa(i) + `.50,"qty":1e2,"note":"caf\u00e9 <ok>"}`)
	}
	b.WriteString("}")
	return map[string]workunit.Unit{
		"small": sample,
		"64KiB": {Kind: "com.example.batch", ID: "b-1", Body: json.RawMessage(b.String())},
	}
}

func BenchmarkSeal(b *testing.B) {
	for name, u := range benchUnits() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(u.Body)))
			for b.Loop() {
				if _, err := workunit.Seal(u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpen(b *testing.B) {
	for name, u := range benchUnits() {
		e := mustSeal(b, u)
		canonical, digest := e.Canonical(), e.Digest()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(canonical)))
			for b.Loop() {
				if _, err := workunit.Open(canonical, digest); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
