package ext

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// panicTools is a host whose only tool, "boom", panics — after one
// progress notification when asked for progress.
type panicTools struct{}

func (panicTools) ListTools(context.Context, interop.Subject) ([]Tool, error) {
	return []Tool{{Name: "boom"}}, nil
}

func (panicTools) CallTool(_ context.Context, _ interop.Subject, c *ToolCall) (ToolResult, error) {
	c.Progress(1, 0, "started")
	panic("tool exploded")
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestToolPanic: a panic in the host's CallTool costs only that call: it
// is logged once at error level as a panic in NativeTools.CallTool (never
// with the request's content), the tool's progress stream is closed to
// the host, and the call answers -32603 naming the request — the whole
// answer, or the last event of the SSE stream the progress opened — and
// the mount serves the next request.
func TestToolPanic(t *testing.T) {
	for _, progress := range []bool{false, true} {
		t.Run(map[bool]string{false: "JSON", true: "SSE"}[progress], func(t *testing.T) {
			logs := &syncBuffer{}
			e := newEnv(t, func(o *options) {
				o.ext.Tools = panicTools{}
				o.Logger = slog.New(slog.NewTextHandler(logs, nil))
			})
			q := rpc{method: "tools/call", params: map[string]any{"name": "boom", "arguments": map[string]any{"note": "s3cr3t"}}}
			if progress {
				q.meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p-1"}`
			}
			rec := e.do(q)
			const want = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`
			if !progress {
				wantError(t, rec, http.StatusInternalServerError, codeInternalError)
				if rec.Body.String() != want {
					t.Fatalf("answer %s", rec.Body)
				}
			} else {
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" {
					t.Fatalf("answer %d %s", rec.Code, rec.Header().Get("Content-Type"))
				}
				var events []string
				for sc := bufio.NewScanner(strings.NewReader(rec.Body.String())); sc.Scan(); {
					if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
						events = append(events, data)
					}
				}
				if len(events) != 2 || !strings.Contains(events[0], `"method":"notifications/progress"`) || events[1] != want {
					t.Fatalf("events %q", events)
				}
			}
			var panics []string
			for line := range strings.Lines(logs.String()) {
				if strings.Contains(line, `msg="mcp: recovered from a panic"`) {
					panics = append(panics, line)
				}
			}
			if len(panics) != 1 || !strings.Contains(panics[0], " level=ERROR ") || !strings.Contains(panics[0], "in=NativeTools.CallTool ") || !strings.Contains(panics[0], `panic="tool exploded"`) {
				t.Fatalf("want one error record of the panic, got %q", panics)
			}
			if strings.Contains(logs.String(), "s3cr3t") || strings.Contains(logs.String(), "acme:alice") {
				t.Fatalf("the log holds the request's content:\n%s", logs)
			}
			result(t, e.do(rpc{method: "tools/list"}))
		})
	}
}
