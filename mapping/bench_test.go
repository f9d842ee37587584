package mapping

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

func BenchmarkTaskState(b *testing.B) {
	m := Builtin()
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := m.TaskState(interop.StatusWaitingExternal, interop.InterruptExternalEvent); r.Wire != a2a.TaskStateInputRequired {
			b.Fatal(r)
		}
	}
}

func BenchmarkTaskStateOverride(b *testing.B) {
	m := Builtin()
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := m.TaskState(interop.StatusWaitingInput, interop.InterruptCredential); r.Wire != a2a.TaskStateAuthRequired {
			b.Fatal(r)
		}
	}
}

func BenchmarkReverseTaskState(b *testing.B) {
	m := Builtin()
	b.ReportAllocs()
	for b.Loop() {
		if s, _, _ := m.ReverseTaskState(a2a.TaskStateRejected); s != interop.StatusFailed {
			b.Fatal(s)
		}
	}
}

func BenchmarkA2AError(b *testing.B) {
	m := Builtin()
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := m.A2AError(CodeInvalidParams); r.HTTP != 400 {
			b.Fatal(r)
		}
	}
}

func BenchmarkMCPTaskStatus(b *testing.B) {
	m := Builtin()
	b.ReportAllocs()
	for b.Loop() {
		if s, _ := m.MCPTaskStatus(interop.StatusFailed); s != TaskCompleted {
			b.Fatal(s)
		}
	}
}

func BenchmarkA2AGate(b *testing.B) {
	m := Builtin()
	on := func(string) bool { return true }
	b.ReportAllocs()
	for b.Loop() {
		if err := m.A2AGate("SubscribeToTask", "", on); err != nil {
			b.Fatal(err)
		}
	}
}

// Builtin decodes the embedded file on every call; a host calls it once.
func BenchmarkBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Builtin()
	}
}

func BenchmarkLoaderLoad(b *testing.B) {
	l, err := NewLoader()
	if err != nil {
		b.Fatal(err)
	}
	data := BuiltinJSON()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Load(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewLoader(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewLoader(); err != nil {
			b.Fatal(err)
		}
	}
}

// The per-request lookups stay allocation-free (the benchmarks above
// report the same; this keeps it from regressing silently).
func TestHotLookupsDoNotAllocate(t *testing.T) {
	m := Builtin()
	on := func(string) bool { return true }
	lookups := map[string]func(){
		"TaskState":        func() { m.TaskState(interop.StatusWaitingInput, interop.InterruptCredential) },
		"ReverseTaskState": func() { m.ReverseTaskState(a2a.TaskStateUnspecified) },
		"A2AError":         func() { m.A2AError(CodeInvalidParams) },
		"A2AErrorByReason": func() { m.A2AErrorByReason("VERSION_NOT_SUPPORTED") },
		"MCPTaskStatus":    func() { m.MCPTaskStatus(interop.StatusCancelled) },
		"A2AGate":          func() { _ = m.A2AGate("SendMessage", WhenSuspended, on) },
	}
	for name, f := range lookups {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s allocates %.1f times per call", name, n)
		}
	}
}
