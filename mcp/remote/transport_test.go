package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// TestTraceContextOnEveryRequest: discovery, lists and calls carry the
// run's trace context in params._meta and in the headers.
func TestTraceContextOnEveryRequest(t *testing.T) {
	s := newServer(t)
	s.addTool(tool("echo", "text"))
	f := newFixture(t, s, admission(s, tool("echo", "text")))
	ctx := WithTraceContext(context.Background(), interop.TraceContext{TraceParent: traceparent, TraceState: "vendor=a"})
	sess := f.connect(t, ctx, runID, "echo")
	if _, err := sess.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.call.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	// A value the caller set in _meta is kept.
	own := "00-11111111111111111111111111111111-2222222222222222-01"
	if _, err := sess.call.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"traceparent": own}, Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests: %q", len(reqs), s.methods())
	}
	for i, r := range reqs {
		if r.header.Get("Traceparent") != traceparent || r.header.Get("Tracestate") != "vendor=a" {
			t.Errorf("%s: headers %q %q", r.method, r.header.Get("Traceparent"), r.header.Get("Tracestate"))
		}
		var body struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		want := traceparent
		if i == 3 {
			want = own
		}
		if body.Params.Meta["traceparent"] != want || body.Params.Meta["tracestate"] != "vendor=a" && i != 3 {
			t.Errorf("%s: _meta %v", r.method, body.Params.Meta)
		}
	}
	// Without a trace context, none is invented.
	s.reset()
	if _, err := sess.call.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	if r := s.requests()[0]; r.header.Get("Traceparent") != "" || strings.Contains(string(r.body), "traceparent") {
		t.Fatalf("a trace context was invented: %s", r.body)
	}
}

// TestResponseSizeCap: a body over MaxResultBytes fails its request with
// *egress.TooLargeError, as JSON or as an event stream; exactly the limit
// passes.
func TestResponseSizeCap(t *testing.T) {
	big := strings.Repeat("x", 4096)
	for _, mode := range []string{"json", "sse"} {
		t.Run(mode, func(t *testing.T) {
			var opts []serverOpt
			if mode == "json" {
				opts = append(opts, withJSON())
			}
			s := newServer(t, opts...)
			s.mcp.AddTool(tool("big", "text"), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
			})
			f := newFixture(t, s, admission(s, tool("big", "text")), withAdmission(func(a *Admission) { a.Limits.MaxResultBytes = 4000 }))
			sess := f.connect(t, context.Background(), runID, "echo")
			_, err := sess.call.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"text": "a"}})
			var tl *egress.TooLargeError
			if !errors.As(err, &tl) || tl.Limit != 4000 {
				t.Fatalf("%v, want an *egress.TooLargeError", err)
			}
			if strings.Contains(err.Error(), "127.0.0.1") {
				t.Fatalf("the error names the endpoint: %v", err)
			}
			wantProjection(t, err, http.StatusBadRequest, outbound.CodeValidation, map[string]any{"protocol": "mcp", "runId": runID})
		})
	}
	t.Run("exactly the limit", func(t *testing.T) {
		s := newServer(t)
		const limit = 4000
		f := newFixture(t, s, admission(s), withAdmission(func(a *Admission) { a.Limits.MaxResultBytes = limit }))
		sess := f.connect(t, context.Background(), runID, "echo")
		pad := func(extra int) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				raw, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(raw, &req)
				body := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"ok"}]}}`
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, body+strings.Repeat(" ", limit+extra-len(body)))
			})
		}
		s.setHandler(pad(0))
		if _, err := sess.call.CallTool(context.Background(), &mcp.CallToolParams{Name: "x"}); err != nil {
			t.Fatalf("a body of exactly MaxResultBytes: %v", err)
		}
		s.setHandler(pad(1))
		if _, err := sess.call.CallTool(context.Background(), &mcp.CallToolParams{Name: "x"}); !errors.Is(err, egress.ErrTooLarge) {
			t.Fatalf("one byte more: %v", err)
		}
	})
	t.Run("discovery", func(t *testing.T) {
		s := newServer(t)
		f := newFixture(t, s, admission(s), withAdmission(func(a *Admission) { a.Limits.MaxResultBytes = 64 }))
		_, err := f.client.Connect(context.Background(), runID, "echo")
		if !errors.Is(err, egress.ErrTooLarge) {
			t.Fatalf("%v, want an *egress.TooLargeError", err)
		}
		if evs := f.sink.events(runID); len(evs) != 0 {
			t.Fatal("an unusable answer was negotiated from")
		}
	})
}

// TestHTTPErrors: an HTTP error without a JSON-RPC error in its body is a
// *StatusError (its body dropped); one with a JSON-RPC error is the
// server's error.
func TestHTTPErrors(t *testing.T) {
	s := newServer(t)
	f := newFixture(t, s, admission(s))
	sess := f.connect(t, context.Background(), runID, "echo")
	call := func() error {
		_, err := sess.call.CallTool(context.Background(), &mcp.CallToolParams{Name: "x"})
		return err
	}
	for status, want := range map[int][2]any{
		401: {http.StatusUnprocessableEntity, outbound.CodeCredentialRequired},
		403: {http.StatusForbidden, outbound.CodeCredentialForbidden},
		404: {http.StatusBadRequest, outbound.CodeValidation},
		503: {http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable},
	} {
		s.setHandler(rpcAnswer(status, "text/html", "<h1>secret internals</h1>"))
		err := call()
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != status || strings.Contains(err.Error(), "secret") {
			t.Fatalf("%d: %v", status, err)
		}
		wantProjection(t, err, want[0].(int), want[1].(string), map[string]any{"protocol": "mcp", "runId": runID})
	}
	s.setHandler(rpcAnswer(http.StatusBadRequest, "application/json", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32602,"message":"bad arguments"}}`))
	err := call()
	wantProjection(t, err, http.StatusBadRequest, outbound.CodeValidation, map[string]any{"protocol": "mcp", "runId": runID, "remoteCode": int64(-32602)})
}

// TestTransportRefusesOffRevision: the transport refuses a request without
// the negotiated MCP-Protocol-Version, or with another, before the network.
func TestTransportRefusesOffRevision(t *testing.T) {
	reached := 0
	tr := &transport{next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		reached++
		return &http.Response{StatusCode: 202, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}}, nil
	}), revision: Revision, maxBytes: 1 << 10}
	for _, v := range [][]string{nil, {"2025-11-25"}, {Revision, Revision}, {""}} {
		r, _ := http.NewRequest(http.MethodPost, "http://x.example/mcp", strings.NewReader("{}"))
		for _, h := range v {
			r.Header.Add("MCP-Protocol-Version", h)
		}
		_, err := tr.RoundTrip(r)
		var re *RevisionError
		if !errors.As(err, &re) || re.Want != Revision {
			t.Fatalf("%q: %v", v, err)
		}
	}
	if reached != 0 {
		t.Fatalf("%d requests passed", reached)
	}
	r, _ := http.NewRequest(http.MethodPost, "http://x.example/mcp", strings.NewReader("{}"))
	r.Header.Set("MCP-Protocol-Version", Revision)
	if _, err := tr.RoundTrip(r); err != nil || reached != 1 {
		t.Fatalf("%v %d", err, reached)
	}
	if r.Header.Get("Authorization") != "" {
		t.Fatal("the caller's request was modified")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTapKeepsTheAnswer: of go-sdk's discover attempts, a result is final,
// an answer replaces an earlier one, and a failure counts only while
// there is no answer.
func TestTapKeepsTheAnswer(t *testing.T) {
	refusal := func(supported string) error {
		return fmt.Errorf("calling: %w", &jsonrpc.Error{Code: -32022, Data: []byte(`{"supported":[` + supported + `]}`)})
	}
	network := errors.New("connection refused")
	for name, tc := range map[string]struct {
		steps      []func(*tap)
		offers     []string
		legacy     bool
		failedWith error
	}{
		"result final": {steps: []func(*tap){
			func(tp *tap) { tp.discovered(&mcp.DiscoverResult{SupportedVersions: []string{Revision, "junk"}}, nil) },
			func(tp *tap) { tp.discovered(nil, refusal(`"2025-06-18"`)) },
		}, offers: []string{Revision}},
		"answer replaces": {steps: []func(*tap){
			func(tp *tap) { tp.discovered(nil, refusal(`"2025-06-18"`)) },
			func(tp *tap) { tp.discovered(nil, &StatusError{StatusCode: 404}) },
		}, legacy: true},
		"failure after an answer": {steps: []func(*tap){
			func(tp *tap) { tp.discovered(nil, refusal(`"2025-06-18"`)) },
			func(tp *tap) { tp.discovered(nil, network) },
		}, offers: []string{"2025-06-18"}},
		"only a failure": {steps: []func(*tap){
			func(tp *tap) { tp.discovered(nil, network) },
		}, failedWith: network},
		"another server error": {steps: []func(*tap){
			func(tp *tap) { tp.discovered(nil, &jsonrpc.Error{Code: -32603}) },
		}, failedWith: &jsonrpc.Error{Code: -32603}},
	} {
		t.Run(name, func(t *testing.T) {
			tp := &tap{}
			for _, step := range tc.steps {
				step(tp)
			}
			offers, legacy, err := tp.outcome()
			if !slices.Equal(offers, tc.offers) || legacy != tc.legacy {
				t.Fatalf("offers %q legacy %v err %v", offers, legacy, err)
			}
			if (tc.failedWith == nil) != (err == nil) || (err != nil && err.Error() != tc.failedWith.Error()) {
				t.Fatalf("err %v, want %v", err, tc.failedWith)
			}
		})
	}
	if _, _, err := (&tap{}).outcome(); err == nil {
		t.Fatal("no discover, no error")
	}
}
