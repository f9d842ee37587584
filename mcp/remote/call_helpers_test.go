package remote

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
)

const testRunID = "tenant-a/run-00000000000000001"

// script answers the n-th request (from 1) of a fake server.
type script func(ctx context.Context, n int, p *mcp.CallToolParams) (*mcp.CallToolResult, error)

// fakeCaller is a scripted server behind the caller interface. It keeps
// every request it was handed, encoded as go-sdk would put it on the wire
// at the moment it arrived, and the context each ran under.
type fakeCaller struct {
	mu     sync.Mutex
	script script
	sent   []*mcp.CallToolParams
	wire   [][]byte
	ctxs   []context.Context
}

func (f *fakeCaller) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	f.mu.Lock()
	f.sent = append(f.sent, p)
	f.wire = append(f.wire, b)
	f.ctxs = append(f.ctxs, ctx)
	n := len(f.sent)
	f.mu.Unlock()
	return f.script(ctx, n, p)
}

func (f *fakeCaller) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

// request is the n-th request (from 1) as the server would decode it.
func (f *fakeCaller) request(t *testing.T, n int) wireParams {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > len(f.wire) {
		t.Fatalf("request %d of %d", n, len(f.wire))
	}
	var p wireParams
	if err := json.Unmarshal(f.wire[n-1], &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// wireParams is a tools/call's params as a server reads them.
type wireParams struct {
	Meta           map[string]json.RawMessage `json:"_meta"`
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

// result decodes a tools/call result with go-sdk's own decoder, the only
// way to get an input_required one.
func result(t testing.TB, body string) *mcp.CallToolResult {
	t.Helper()
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return &r
}

// answers returns results in order, then fails.
func answers(t testing.TB, bodies ...string) script {
	return func(_ context.Context, n int, _ *mcp.CallToolParams) (*mcp.CallToolResult, error) {
		if n > len(bodies) {
			t.Errorf("request %d not scripted", n)
			return nil, context.Canceled
		}
		return result(t, bodies[n-1]), nil
	}
}

const (
	okResult   = `{"resultType":"complete","content":[{"type":"text","text":"hello Ada"}]}`
	askForm    = `{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"state-1"}`
	askAgain   = `{"resultType":"input_required","inputRequests":{"color":{"method":"elicitation/create","params":{"message":"Colour?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}}}}}},"requestState":"state-2"}`
	askURL     = `{"resultType":"input_required","inputRequests":{"auth":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/connect","elicitationId":"e1"}}},"requestState":"state-u"}`
	askSampled = `{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}},"requestState":"state-s"}`
)

// recordingSink keeps the run events appended to it.
type recordingSink struct {
	mu     sync.Mutex
	events []interop.RunEvent
	runIDs []string
}

func (s *recordingSink) AppendRunEvent(_ context.Context, runID string, ev interop.RunEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
	s.runIDs = append(s.runIDs, runID)
	return nil
}

func (s *recordingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	return nil
}

func (s *recordingSink) ofType(typ interop.EventType) []interop.RunEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []interop.RunEvent
	for _, ev := range s.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func (s *recordingSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// testSession is a session on c admitting the tools "echo" and "ask",
// speaking 2026-07-28 with a ceiling of 4 rounds. The edits apply first;
// then the tools are put in the client's list cache under the session's
// key, as a tools/list would, so the admission check passes without a
// connection.
func testSession(c caller, edit ...func(*Session)) (*Session, *recordingSink) {
	sink := &recordingSink{}
	s := &Session{
		RunID: testRunID,
		Admission: Admission{
			Alias:     "srv",
			Endpoint:  "https://mcp.example.com/mcp",
			Tenant:    "acme",
			Principal: "user-1",
			Tools:     []AdmittedTool{{Name: "echo", Digest: ToolDigest(objectTool("echo"))}, {Name: "ask", Digest: ToolDigest(objectTool("ask"))}},
		},
		Version:   Revision,
		MaxRounds: 4,
		call:      c,
		deps:      &sessionDeps{events: sink, now: func() time.Time { return testNow }},
	}
	for _, e := range edit {
		e(s)
	}
	if s.link == nil {
		s.link = &link{client: &Client{cache: newListCache(func() time.Time { return testNow }, time.Hour, 8)}, origin: "https://mcp.example.com"}
		key, err := s.cacheKey(context.Background(), methodListTools)
		if err != nil {
			panic(err)
		}
		items := []listed{}
		for _, name := range []string{"echo", "ask"} {
			t := objectTool(name)
			items = append(items, listed{name: name, digest: ToolDigest(t), item: t})
		}
		s.link.client.cache.put(key, items, 3_600_000)
	}
	return s, sink
}

// objectTool is a tool taking any object.
func objectTool(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}
}

// formOnly declares form elicitation.
var formOnly = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}

// acceptAll answers every request of a round: accept with {"name":"Ada"}
// on a form, plain accept on a URL.
func acceptAll(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
	out := make(map[string]*mcp.ElicitResult, len(r.Requests))
	for _, q := range r.Requests {
		if q.Mode == "url" {
			out[q.ID] = &mcp.ElicitResult{Action: "accept"}
			continue
		}
		out[q.ID] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}
	}
	return out, nil
}

// slogTo is a debug-level JSON logger writing to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// ctx is the context the n-th request (from 1) ran under.
func (f *fakeCaller) ctx(n int) context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ctxs[n-1]
}

// syncBuffer is a strings.Builder safe for a logger on another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
