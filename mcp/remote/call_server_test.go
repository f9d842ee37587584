package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// Against a real go-sdk v1.8.0 server (stateless streamable HTTP,
// 2026-07-28) through a real *mcp.ClientSession. The server's HTTP
// handler is wrapped by wireLog, which keeps every JSON-RPC message the
// client POSTed.

// Unusual requestStates: the server checks each retry echoes its state
// exactly, after both go-sdk encoders and decoders had their way with it.
const (
	serverState1 = "s1\x00\"\\/<>&\u2028\u2029😀é\t end"
	serverState2 = "s2 {\"not\":\"parsed\"} " + "QUJD+/="
)

// wireMsg is one JSON-RPC message a client sent.
type wireMsg struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params json.RawMessage `json:"params"`
}

type wireLog struct {
	mu   sync.Mutex
	msgs []wireMsg
}

func (l *wireLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m wireMsg
		if json.Unmarshal(body, &m) == nil && m.Method != "" {
			l.mu.Lock()
			l.msgs = append(l.msgs, m)
			l.mu.Unlock()
			if m.Method == "tools/call" && bytes.Contains(m.Params, []byte(`"name":"drop"`)) {
				// The connection dies with the request delivered.
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (l *wireLog) of(method string) []wireMsg {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []wireMsg
	for _, m := range l.msgs {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// testServer is a go-sdk server with the tools the tests call:
//
//   - ask: two form rounds (name, then colour), each state checked;
//   - loop: input_required for arguments.rounds retries, then complete
//     (the OpenWOP suite's needs_input_loop); forever without rounds;
//   - block: waits for its context, signalling started;
//   - greet: one form round, then complete (the benchmark's exchange);
//   - echo: returns its arguments' text.
type testServer struct {
	url       string
	wire      *wireLog
	started   chan struct{}
	cancelled chan struct{} // the block tool saw its context end
}

func newTestServer(t testing.TB) *testServer {
	ts := &testServer{wire: &wireLog{}, started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1"}, nil)
	object := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: object}, askTool)
	srv.AddTool(&mcp.Tool{Name: "loop", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Rounds int }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		served, _ := strconv.Atoi(strings.TrimPrefix(req.Params.RequestState, "loop-"))
		if args.Rounds > 0 && served >= args.Rounds {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "looped " + strconv.Itoa(served)}}}, nil
		}
		return askFor("again", "Once more?", "loop-"+strconv.Itoa(served+1)), nil
	})
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: object}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts.started <- struct{}{}
		select {
		case <-ctx.Done():
			ts.cancelled <- struct{}{}
		case <-time.After(5 * time.Second):
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "greet", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "" {
			return askFor("name", "Your name?", "round-1"), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Text string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, PropagateRequestCancellation: true})
	hs := httptest.NewServer(ts.wire.wrap(h))
	t.Cleanup(hs.Close)
	ts.url = hs.URL
	return ts
}

func askFor(id, message, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{id: &mcp.ElicitParams{
			Message:         message,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{id: map[string]any{"type": "string"}}},
		}},
		RequestState: state,
	}
}

func askTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := req.Params
	answer := func(id string) string {
		r, _ := p.InputResponses[id].(*mcp.ElicitResult)
		if r == nil || r.Action != "accept" {
			return ""
		}
		s, _ := r.Content[id].(string)
		return s
	}
	switch p.RequestState {
	case "":
		return askFor("name", "Your name?", serverState1), nil
	case serverState1:
		if answer("name") == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no name"}
		}
		return askFor("color", "Colour?", serverState2), nil
	case serverState2:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "state-ok " + answer("color")}}}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("requestState not echoed exactly: %q", p.RequestState)}
}

// connect is a real client session on url with go-sdk's own input loop
// off, as the connection side builds it.
func connect(t testing.TB, url string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "wopinterop-test", Version: "0"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func realSession(t testing.TB, ts *testServer, edit ...func(*Session)) (*Session, *recordingSink) {
	cs := connect(t, ts.url)
	s, sink := testSession(cs, edit...)
	s.Version = cs.InitializeResult().ProtocolVersion
	s.Admission.Endpoint = ts.url
	s.Admission.Tools = []AdmittedTool{{Name: "ask"}, {Name: "loop"}, {Name: "block"}, {Name: "echo"}, {Name: "drop"}, {Name: "missing"}, {Name: "greet"}}
	return s, sink
}

// nameAndColour answers the ask tool.
func nameAndColour(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
	out := map[string]*mcp.ElicitResult{}
	for _, q := range r.Requests {
		v := map[string]string{"name": "Ada", "color": "blue"}[q.ID]
		out[q.ID] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{q.ID: v}}
	}
	return out, nil
}

func TestRealServerInputRounds(t *testing.T) {
	ts := newTestServer(t)
	s, _ := realSession(t, ts)
	if s.Version != "2026-07-28" {
		t.Fatalf("negotiated %q", s.Version)
	}
	ctx := tracecontext.NewContext(t.Context(), interop.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	out, err := s.Call(ctx, CallRequest{Tool: "ask", Arguments: json.RawMessage(`{"q":1}`), Elicitation: formOnly, Decide: nameAndColour})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if out.Calls != 3 || out.Rounds != 2 || !out.StateEchoed || len(out.Result.Content) != 1 || out.Result.Content[0].Text != "state-ok blue" {
		t.Fatalf("outcome %+v result %+v", out, out.Result)
	}
	calls := ts.wire.of("tools/call")
	if len(calls) != 3 {
		t.Fatalf("server saw %d tools/call, want 3", len(calls))
	}
	ids := map[string]bool{}
	for i, c := range calls {
		// A new JSON-RPC id for every retry.
		if ids[string(c.ID)] {
			t.Errorf("call %d reuses id %s", i+1, c.ID)
		}
		ids[string(c.ID)] = true
		var p wireParams
		if err := json.Unmarshal(c.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Name != "ask" || string(p.Arguments) != `{"q":1}` ||
			string(p.Meta["traceparent"]) != `"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"` ||
			string(p.Meta[mcp.MetaKeyClientCapabilities]) != `{"elicitation":{"form":{}}}` {
			t.Errorf("call %d params %s", i+1, c.Params)
		}
		wantState := []string{"", serverState1, serverState2}[i]
		if got := p.RequestState; (got == nil) != (wantState == "") || (got != nil && *got != wantState) {
			t.Errorf("call %d requestState %v, want %q", i+1, got, wantState)
		}
	}
}

func TestRealServerRoundsCeiling(t *testing.T) {
	ts := newTestServer(t)
	s, _ := realSession(t, ts, func(s *Session) { s.MaxRounds = 4 })
	out, err := s.Call(t.Context(), CallRequest{Tool: "loop", Elicitation: formOnly, Decide: acceptAll})
	var re *RoundsError
	if !errors.As(err, &re) {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	env := re.Project(s.RunID)
	if env.Status != http.StatusUnprocessableEntity || env.Code != "mcp_mrtr_rounds_exceeded" || env.Details["runId"] != testRunID {
		t.Errorf("envelope %+v", env)
	}
	// OpenWOP interop.md §The MCP round ceiling: at most maxRounds + 1
	// tools/call reach the server; here exactly, as it never stops asking.
	if n := len(ts.wire.of("tools/call")); n != 5 || out.Calls != 5 {
		t.Fatalf("server saw %d tools/call, outcome %+v; want 5", n, out)
	}
}

// TestRealServerCeilingBoundary drives the OpenWOP suite's
// v2-mrtr-rounds-ceiling exchange: a tool that asks for rounds retries.
// rounds = maxRounds completes; rounds = maxRounds + 1 is refused with at
// most maxRounds + 1 calls on the wire.
func TestRealServerCeilingBoundary(t *testing.T) {
	for _, tc := range []struct {
		rounds int
		refuse bool
	}{{4, false}, {5, true}} {
		ts := newTestServer(t)
		s, _ := realSession(t, ts, func(s *Session) { s.MaxRounds = 4 })
		out, err := s.Call(t.Context(), CallRequest{Tool: "loop", Arguments: json.RawMessage(`{"rounds":` + strconv.Itoa(tc.rounds) + `}`),
			Elicitation: &mcp.ElicitationCapabilities{}, Decide: acceptAll})
		if tc.refuse != errors.Is(err, ErrRoundsExceeded) || (!tc.refuse && (err != nil || out.Result.Content[0].Text != "looped 4")) {
			t.Fatalf("rounds %d: Call = %+v, %v", tc.rounds, out, err)
		}
		if n := len(ts.wire.of("tools/call")); n != 5 {
			t.Fatalf("rounds %d: server saw %d tools/call, want 5", tc.rounds, n)
		}
	}
}

func TestRealServerCancel(t *testing.T) {
	ts := newTestServer(t)
	s, sink := realSession(t, ts)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-ts.started
		cancel()
	}()
	out, err := s.Call(ctx, CallRequest{Tool: "block"})
	if !errors.Is(err, context.Canceled) || out.Reconciliation != outbound.CancelRequestedRemoteUnknown {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	call := ts.wire.of("tools/call")
	if len(call) != 1 {
		t.Fatalf("server saw %d tools/call", len(call))
	}
	waitForCancelled(t, ts.wire, call[0].ID)
	ts.waitHandlerCancelled(t)
	if len(sink.ofType(EventReconciled)) != 1 {
		t.Errorf("events %+v", sink.events)
	}
}

func TestRealServerTimeout(t *testing.T) {
	ts := newTestServer(t)
	s, _ := realSession(t, ts, func(s *Session) { s.Admission.Limits.Timeout = 200 * time.Millisecond })
	out, err := s.Call(t.Context(), CallRequest{Tool: "block"})
	if !errors.Is(err, ErrTimeout) || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	call := ts.wire.of("tools/call")
	if len(call) != 1 {
		t.Fatalf("server saw %d tools/call: a timed-out call is never replayed", len(call))
	}
	waitForCancelled(t, ts.wire, call[0].ID)
	ts.waitHandlerCancelled(t)
}

// waitHandlerCancelled waits until the block tool's handler saw its
// context end: the server stopped the work.
func (ts *testServer) waitHandlerCancelled(t *testing.T) {
	t.Helper()
	select {
	case <-ts.cancelled:
	case <-time.After(3 * time.Second):
		t.Fatal("the server's handler was never cancelled")
	}
}

// waitForCancelled waits for the notifications/cancelled go-sdk sends, off
// the caller's path, naming the request id.
func waitForCancelled(t *testing.T, wire *wireLog, id json.RawMessage) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range wire.of("notifications/cancelled") {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(id) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no notifications/cancelled for request %s; wire %+v", id, wire.of("notifications/cancelled"))
}

func TestRealServerUnknownTool(t *testing.T) {
	ts := newTestServer(t)
	s, _ := realSession(t, ts)
	out, err := s.Call(t.Context(), CallRequest{Tool: "missing"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || out.Reconciliation != outbound.FailedNoEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if n := len(ts.wire.of("tools/call")); n != 1 {
		t.Fatalf("server saw %d tools/call", n)
	}
}

func TestRealServerConnectionLost(t *testing.T) {
	ts := newTestServer(t)
	s, _ := realSession(t, ts)
	out, err := s.Call(t.Context(), CallRequest{Tool: "drop"})
	if !errors.Is(err, ErrDisconnected) || out.Reconciliation != outbound.DisconnectedStillActive {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if n := len(ts.wire.of("tools/call")); n != 1 {
		t.Fatalf("server saw %d tools/call: a call that may have been delivered is never replayed", n)
	}
	// The session survives for the next call.
	if out, err := s.Call(t.Context(), CallRequest{Tool: "echo", Arguments: json.RawMessage(`{"text":"still here"}`)}); err != nil || out.Result.Content[0].Text != "still here" {
		t.Fatalf("next call = %+v, %v", out, err)
	}
}
