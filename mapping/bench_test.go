package mapping

import (
	"testing"
)

// Builtin decodes the embedded file on every call; a host calls it once.
func BenchmarkBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Builtin()
	}
}

func BenchmarkLoaderLoad(b *testing.B) {
	l, err := newLoader()
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(builtinJSON)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.load(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewLoader(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newLoader(); err != nil {
			b.Fatal(err)
		}
	}
}
