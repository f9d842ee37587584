package isolation

import (
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

const benchBound = "acme/ABCDEFGHIJKLMNOPQRSTUVWXYZ"

var sink string

func BenchmarkProject(b *testing.B) {
	for _, tc := range []struct{ name, id string }{
		{"escapes", benchBound},
		{"anon", "anon:visitor/ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
		{"none", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = Project(tc.id)
			}
		})
	}
}

func BenchmarkUnproject(b *testing.B) {
	p := Project(benchBound)
	b.ReportAllocs()
	for b.Loop() {
		sink, _ = unproject(p)
	}
}

func BenchmarkParseID(b *testing.B) {
	for _, tc := range []struct{ name, in string }{
		{"bound", benchBound},
		{"projected", Project(benchBound)},
		{"percent", "acme%2FABCDEFGHIJKLMNOPQRSTUVWXYZ"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink, _ = ParseID(tc.in)
			}
		})
	}
}

func BenchmarkResolveParamBare(b *testing.B) {
	s := interop.Subject{Tenant: "acme"}
	b.ReportAllocs()
	for b.Loop() {
		sink, _ = ResolveParam(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", BindBare)
	}
}

func BenchmarkNewID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink, _ = NewID("acme")
	}
}

func BenchmarkMatchTenant(b *testing.B) {
	s := interop.Subject{Tenant: "acme"}
	b.ReportAllocs()
	for b.Loop() {
		_ = MatchTenant(s, benchBound)
	}
}

func BenchmarkRoutingDerive(b *testing.B) {
	k := mustKeys(b, testSecret('a'), "1.0")
	b.ReportAllocs()
	for b.Loop() {
		sink = k.Derive("support-bot")
	}
}

// TestHotPathAllocations pins the allocation budget the benchmarks report:
// the bound form parses without allocating and a projection that escapes
// allocates its result only.
func TestHotPathAllocations(t *testing.T) {
	proj := Project(benchBound)
	cases := []struct {
		name string
		max  float64
		fn   func()
	}{
		{"ParseID bound", 0, func() { sink, _ = ParseID(benchBound) }},
		{"Project no escapes", 0, func() { sink = Project("ABCDEFGHIJKLMNOPQRSTUVWXYZ") }},
		{"Project escapes", 1, func() { sink = Project(benchBound) }},
		{"unproject", 1, func() { sink, _ = unproject(proj) }},
		{"ParseID projected", 1, func() { sink, _ = ParseID(proj) }},
		{"MatchTenant", 0, func() { _ = MatchTenant(interop.Subject{Tenant: "acme"}, benchBound) }},
	}
	for _, tc := range cases {
		if got := testing.AllocsPerRun(100, tc.fn); got > tc.max {
			t.Errorf("%s: %v allocs/op, budget %v", tc.name, got, tc.max)
		}
	}
}
