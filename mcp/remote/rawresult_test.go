package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// responseLog keeps the JSON-RPC result of every response a server sent,
// by method, as the bytes on the wire (a JSON body or an event stream's
// data lines).
type responseLog struct {
	mu      sync.Mutex
	results map[string][]json.RawMessage
}

func (l *responseLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string `json:"method"`
		}
		body := new(bytes.Buffer)
		_, _ = body.ReadFrom(r.Body)
		_ = json.Unmarshal(body.Bytes(), &req)
		r.Body = http.NoBody
		if body.Len() > 0 {
			r.Body = readCloser{bytes.NewReader(body.Bytes())}
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
			var resp struct {
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(line), &resp) == nil && resp.Result != nil {
				l.mu.Lock()
				l.results[req.Method] = append(l.results[req.Method], resp.Result)
				l.mu.Unlock()
			}
		}
	})
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func (l *responseLog) of(method string) []json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]json.RawMessage(nil), l.results[method]...)
}

// TestRawResults: over an event stream and over JSON bodies, what the
// client hands back raw is byte for byte the JSON-RPC result the server
// sent — a tool's result with its _meta and structuredContent (and an
// isError result, still a result), one tools/list page with its
// nextCursor, ttlMs and cacheScope (the cursor sent as given, the last
// page without nextCursor), and the server/discover result — while the
// projection stays as it was.
func TestRawResults(t *testing.T) {
	for _, mode := range []string{"sse", "json"} {
		t.Run(mode, func(t *testing.T) {
			opts := []serverOpt{withCache(60000, "private"), withPageSize(1)}
			if mode == "json" {
				opts = append(opts, withJSON())
			}
			s := newServer(t, opts...)
			log := &responseLog{results: map[string][]json.RawMessage{}}
			s.setHandler(log.wrap(s.handler))
			echo := &mcp.Tool{Name: "structured-echo", InputSchema: schema("x"), OutputSchema: map[string]any{"type": "object"},
				Annotations: &mcp.ToolAnnotations{Title: "Echo", ReadOnlyHint: true}}
			s.mcp.AddTool(echo, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{
					Meta:              mcp.Meta{"dev.openwop.conformance/nonce": "n-42"},
					Content:           []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}},
					StructuredContent: req.Params.Arguments,
				}, nil
			})
			fail := tool("always-error", "x")
			s.mcp.AddTool(fail, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}}, nil
			})
			f := newFixture(t, s, admission(s))
			ctx := context.Background()
			listed, err := f.client.Review(ctx, negotiate.Scope{}, admission(s))
			if err != nil {
				t.Fatal(err)
			}
			a := admission(s)
			for _, l := range listed {
				a.Tools = append(a.Tools, AdmittedTool{Name: l.Tool.Name, Digest: l.Digest})
			}
			if err := f.client.Admit(a); err != nil {
				t.Fatal(err)
			}
			sess := f.connect(t, ctx, runID, "echo")
			discovers := log.of(methodDiscover)
			if len(discovers) == 0 || !bytes.Equal(sess.Discovered(), discovers[len(discovers)-1]) {
				t.Fatalf("Discovered() = %s, the server sent %s", sess.Discovered(), discovers)
			}

			// One page at a time, as sent: the first (cursor ""), then the
			// one its nextCursor names, which is the last.
			first, err := sess.ListPage(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			var p1 struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
				TTLMs      int               `json:"ttlMs"`
				CacheScope string            `json:"cacheScope"`
			}
			if err := json.Unmarshal(first, &p1); err != nil || len(p1.Tools) != 1 || p1.NextCursor == "" || p1.TTLMs != 60000 || p1.CacheScope != "private" {
				t.Fatalf("first page %s", first)
			}
			second, err := sess.ListPage(ctx, p1.NextCursor)
			if err != nil {
				t.Fatal(err)
			}
			lists := log.of(methodListTools)
			if !bytes.Equal(first, lists[len(lists)-2]) || !bytes.Equal(second, lists[len(lists)-1]) || strings.Contains(string(second), "nextCursor") {
				t.Fatalf("pages %s and %s; the server sent %s", first, second, lists)
			}
			reqs := s.requests()
			if last := reqs[len(reqs)-1]; last.method != methodListTools || !strings.Contains(string(last.body), `"cursor":"`+p1.NextCursor+`"`) {
				t.Fatalf("second tools/list sent %s", last.body)
			}

			tc := f.client.ToolCaller()
			for _, name := range []string{"structured-echo", "always-error"} {
				res, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "echo", Tool: name, Arguments: json.RawMessage(`{"x":"y"}`)})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				calls := log.of("tools/call")
				if !bytes.Equal(res.Raw, calls[len(calls)-1]) {
					t.Fatalf("%s: Raw %s, the server sent %s", name, res.Raw, calls[len(calls)-1])
				}
				if name == "structured-echo" && (!strings.Contains(string(res.Raw), `"dev.openwop.conformance/nonce":"n-42"`) ||
					string(res.Structured) != `{"x":"y"}` || res.IsError) {
					t.Fatalf("result %+v raw %s", res, res.Raw)
				}
				if name == "always-error" && (!res.IsError || res.Text() != "boom") {
					t.Fatalf("result %+v", res)
				}
			}
		})
	}
}

// FuzzSSEResults: the event-stream reader of the result slot takes any
// bytes in any chunking without panicking, and a stream's result does not
// depend on how it was cut into reads.
func FuzzSSEResults(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1}}\n\n"), uint8(3))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":[]}\r\n\r\n"), uint8(1))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"x\"}}\n\n"), uint8(7))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		whole := &resultSlot{}
		_, _ = (&sseResults{slot: whole}).Write(stream)
		pieces := &resultSlot{}
		p := &sseResults{slot: pieces}
		n := int(cut)%16 + 1
		for i := 0; i < len(stream); i += n {
			_, _ = p.Write(stream[i:min(i+n, len(stream))])
		}
		if !bytes.Equal(whole.get(), pieces.get()) {
			t.Fatalf("whole %q, in pieces of %d %q", whole.get(), n, pieces.get())
		}
	})
}
