package mcppeers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Path is where every server serves MCP under its base URL (the MCP
// endpoint of the streamable HTTP transport, MCP 2026-07-28
// basic/transports §Streamable HTTP).
const Path = "/mcp"

// Server is a running MCP server on loopback. Every server, handler and
// process behind it ends with the test's cleanup.
type Server struct {
	// URL is the MCP endpoint: Base + Path.
	URL string
	// Base is the scheme and authority ("http://127.0.0.1:port").
	Base string
	// RedirectTarget is, for StartMalformed(Redirect), the server the
	// redirect points at (a StartGo server with the default Script); nil
	// otherwise.
	RedirectTarget *Server

	rec   *recorder
	tools toolRunner // nil for servers that run no tools
}

// Request is one HTTP request a server received, recorded before the
// server acted on it.
type Request struct {
	HTTPMethod string
	Path       string
	// Headers the client sets (MCP 2026-07-28 basic/transports §Protocol
	// Version Header, §Standard Headers; W3C Trace Context §3).
	ProtocolVersion string // MCP-Protocol-Version
	MCPMethod       string // Mcp-Method
	MCPName         string // Mcp-Name
	SessionID       string // Mcp-Session-Id (legacy sessions only)
	Authorization   string
	Traceparent     string // the traceparent header
	Tracestate      string // the tracestate header
	// ID is the JSON-RPC id exactly as sent; nil for a notification or an
	// unreadable body.
	ID json.RawMessage
	// Method is the JSON-RPC method; "" for an unreadable body or a batch.
	Method string
	// Params is params exactly as sent; Meta is params._meta, member by
	// member. ToolName is params.name of a tools/call.
	Params   json.RawMessage
	Meta     map[string]json.RawMessage
	ToolName string
	Header   http.Header
	Body     []byte
}

// IsNotification reports whether the request is a JSON-RPC notification
// (a method and no id).
func (q Request) IsNotification() bool { return q.Method != "" && q.ID == nil }

// MetaString is params._meta[key] when it is a JSON string, else "".
func (q Request) MetaString(key string) string {
	var s string
	_ = json.Unmarshal(q.Meta[key], &s)
	return s
}

// Requests returns every request the server received, in arrival order.
func (s *Server) Requests() []Request { return s.rec.all("") }

// Calls returns the requests whose JSON-RPC method is method, in arrival
// order.
func (s *Server) Calls(method string) []Request { return s.rec.all(method) }

// recorder keeps the requests of one server.
type recorder struct {
	mu   sync.Mutex
	reqs []Request
}

func (r *recorder) all(method string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Request, 0, len(r.reqs))
	for _, q := range r.reqs {
		if method == "" || q.Method == method {
			out = append(out, q)
		}
	}
	return out
}

// inFlight is what the recorder hands a tool through the request's
// context: the JSON-RPC request the HTTP request carries and the HTTP
// request's own context. go-sdk's stateless handler passes context values
// through to tool handlers, but cancels the handler's context only for
// 2026-07-28 requests; the HTTP context ends on a disconnect whatever the
// revision.
type inFlight struct {
	id       json.RawMessage
	method   string
	toolName string
	http     context.Context
}

type inFlightKey struct{}

func inFlightFrom(ctx context.Context) *inFlight {
	f, _ := ctx.Value(inFlightKey{}).(*inFlight)
	return f
}

// record wraps next: each request is read whole, recorded, and handed on
// with its body intact.
func (r *recorder) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		q := readRequest(req, body)
		r.mu.Lock()
		r.reqs = append(r.reqs, q)
		r.mu.Unlock()
		f := &inFlight{id: q.ID, method: q.Method, toolName: q.ToolName, http: req.Context()}
		next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), inFlightKey{}, f)))
	})
}

// readRequest is what the recorder reads from one HTTP request; an
// unreadable body leaves the JSON-RPC fields empty.
func readRequest(req *http.Request, body []byte) Request {
	q := Request{
		HTTPMethod:      req.Method,
		Path:            req.URL.Path,
		ProtocolVersion: req.Header.Get("MCP-Protocol-Version"),
		MCPMethod:       req.Header.Get("Mcp-Method"),
		MCPName:         req.Header.Get("Mcp-Name"),
		SessionID:       req.Header.Get("Mcp-Session-Id"),
		Authorization:   req.Header.Get("Authorization"),
		Traceparent:     req.Header.Get("traceparent"),
		Tracestate:      req.Header.Get("tracestate"),
		Header:          req.Header.Clone(),
		Body:            body,
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &env) != nil {
		return q
	}
	q.Method, q.Params = env.Method, env.Params
	if len(env.ID) > 0 && string(env.ID) != "null" {
		q.ID = env.ID
	}
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
		Name json.RawMessage            `json:"name"`
	}
	if json.Unmarshal(env.Params, &params) == nil {
		q.Meta = params.Meta
		if env.Method == "tools/call" {
			_ = json.Unmarshal(params.Name, &q.ToolName)
		}
	}
	return q
}

// serve starts handler on loopback behind the recorder. build receives the
// base URL before the first request is accepted. The server and every
// connection to it are closed by t's cleanup, after stop (when non-nil)
// has ended the work the server still runs.
func serve(t testing.TB, build func(base string) (http.Handler, *Server), stop func()) *Server {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	h, s := build(base)
	s.Base, s.URL, s.rec = base, base+Path, rec
	srv.Config.Handler = rec.record(h)
	srv.Start()
	t.Cleanup(func() {
		if stop != nil {
			stop()
		}
		srv.CloseClientConnections()
		srv.Close()
	})
	return s
}

// waitFor polls cond until it holds or ten seconds pass.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values marshalled here are the package's own
	}
	return b
}
