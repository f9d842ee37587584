package interopmap

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

func BenchmarkTaskState(b *testing.B) {
	m := builtin()
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := m.TaskState(interop.StatusWaitingExternal, interop.InterruptExternalEvent); r.Wire != a2a.TaskStateInputRequired {
			b.Fatal(r)
		}
	}
}

func BenchmarkTaskStateOverride(b *testing.B) {
	m := builtin()
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := m.TaskState(interop.StatusWaitingInput, interop.InterruptCredential); r.Wire != a2a.TaskStateAuthRequired {
			b.Fatal(r)
		}
	}
}

func BenchmarkReverseTaskState(b *testing.B) {
	m := builtin()
	b.ReportAllocs()
	for b.Loop() {
		if s, _, _ := m.ReverseTaskState(a2a.TaskStateRejected); s != interop.StatusFailed {
			b.Fatal(s)
		}
	}
}

func BenchmarkA2AError(b *testing.B) {
	m := builtin()
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := m.A2AError(CodeInvalidParams); r.HTTP != 400 {
			b.Fatal(r)
		}
	}
}

func BenchmarkMCPTaskStatus(b *testing.B) {
	m := builtin()
	b.ReportAllocs()
	for b.Loop() {
		if s, _ := m.MCPTaskStatus(interop.StatusFailed); s != TaskCompleted {
			b.Fatal(s)
		}
	}
}

func BenchmarkA2AGate(b *testing.B) {
	m := builtin()
	on := func(string) bool { return true }
	b.ReportAllocs()
	for b.Loop() {
		if err := m.A2AGate("SubscribeToTask", "", on); err != nil {
			b.Fatal(err)
		}
	}
}

// The per-request lookups stay allocation-free (the benchmarks above
// report the same; this keeps it from regressing silently).
func TestHotLookupsDoNotAllocate(t *testing.T) {
	m := builtin()
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
