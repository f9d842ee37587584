package hostapp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wopinterop/wopinterop/interop"
)

// The request log: one line per request with the HTTP method, the path,
// for the JSON-RPC surfaces the JSON-RPC method, the status, the duration
// and the caller's tenant. Never a credential, a header value the host did
// not vet, a query string or a body: a line is built from the method and
// path of the request line, method names the host knows, the status the
// host wrote and the tenant its resolver authenticated.

// parseLogLevel reads -log-level.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q is not one of debug, info, warn, error", s)
}

type requestKey struct{}

// tenantRecorder is the host's SubjectResolver as every surface sees it:
// it records the authenticated tenant for the request's log line.
type tenantRecorder struct{ interop.SubjectResolver }

func (t tenantRecorder) ResolveSubject(r *http.Request) (interop.Subject, error) {
	sub, err := t.SubjectResolver.ResolveSubject(r)
	if err == nil && sub.Authenticated {
		if rec, ok := r.Context().Value(requestKey{}).(*requestRecord); ok {
			rec.setTenant(sub.Tenant)
		}
	}
	return sub, err
}

// rpcPeekBytes bounds how much of an A2A JSON-RPC body is kept for the
// method name: a client puts "method" near the front.
const rpcPeekBytes = 512

// logged writes the request line of every request h serves; a response
// with status 500 or more is logged at error level.
func (s *server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rpc := ""
		var seen *prefixRecorder // an A2A JSON-RPC body, as the handler read it
		switch {
		case r.URL.Path == a2aPath && r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody:
			// The method is read off the first bytes the handler reads:
			// nothing is read ahead of it, so a body that never arrives
			// meets the handler's own limits (authentication first, then
			// its body timeout), not a wait here.
			seen = &prefixRecorder{ReadCloser: r.Body}
			r.Body = seen
		case r.URL.Path == mcpPath || r.URL.Path == mcpConformancePath:
			// The mount checks this header against the body (MCP
			// streamable HTTP §Headers); an unknown value is logged as
			// "other", never verbatim.
			rpc = knownMethod(mcpMethod, r.Header.Get("Mcp-Method"))
		}
		rec := &requestRecord{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), requestKey{}, rec))
		defer func() {
			if seen != nil {
				rpc = knownMethod(a2aMethod, topLevelString(seen.prefix, "method"))
			}
			status, level := rec.code(), slog.LevelInfo
			p := recover()
			if p != nil {
				status = http.StatusInternalServerError
			}
			if status >= http.StatusInternalServerError {
				level = slog.LevelError
			}
			if s.log.Enabled(r.Context(), level) {
				attrs := make([]slog.Attr, 0, 6)
				attrs = append(attrs, slog.String("method", r.Method), slog.String("path", r.URL.Path))
				if rpc != "" {
					attrs = append(attrs, slog.String("rpc", rpc))
				}
				attrs = append(attrs, slog.Int("status", status), slog.Duration("duration", time.Since(start)), slog.String("tenant", rec.getTenant()))
				s.log.LogAttrs(r.Context(), level, "request", attrs...)
			}
			if p != nil {
				panic(p) // net/http's own recovery ends the connection
			}
		}()
		h.ServeHTTP(rec, r)
	})
}

// requestRecord is the response writer of a logged request: it remembers
// the status the handler wrote and the tenant the resolver authenticated
// (the A2A and MCP surfaces call the resolver too). Unwrap gives
// http.ResponseController (flushes of the event streams) the writer
// underneath.
type requestRecord struct {
	http.ResponseWriter
	mu     sync.Mutex
	status int
	tenant string
}

func (s *requestRecord) WriteHeader(code int) {
	s.mu.Lock()
	if s.status == 0 && code >= 200 {
		s.status = code
	}
	s.mu.Unlock()
	s.ResponseWriter.WriteHeader(code)
}

func (s *requestRecord) Write(p []byte) (int, error) {
	s.mu.Lock()
	if s.status == 0 {
		s.status = http.StatusOK
	}
	s.mu.Unlock()
	return s.ResponseWriter.Write(p)
}

func (s *requestRecord) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// code is the status written, 200 when the handler wrote nothing.
func (s *requestRecord) code() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

func (s *requestRecord) setTenant(t string) {
	s.mu.Lock()
	s.tenant = t
	s.mu.Unlock()
}

func (s *requestRecord) getTenant() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tenant
}

// prefixRecorder passes a body through and keeps a copy of its first
// rpcPeekBytes bytes, as the handler reads them.
type prefixRecorder struct {
	io.ReadCloser
	prefix []byte
}

func (p *prefixRecorder) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if room := rpcPeekBytes - len(p.prefix); room > 0 && n > 0 {
		p.prefix = append(p.prefix, b[:min(n, room)]...)
	}
	return n, err
}

// topLevelString returns the string value of member name of the JSON
// object doc starts, or "" when doc (possibly cut short) does not show it
// or the value has escapes (no method name has). It scans without
// decoding: the request line costs no parse of the body.
func topLevelString(doc []byte, name string) string {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return ""
	}
	depth, wantKey := 0, false
	for i < len(doc) {
		switch doc[i] {
		case '"':
			end := stringEnd(doc, i)
			if end < 0 {
				return ""
			}
			if depth == 1 && wantKey {
				wantKey = false
				colon := skipSpace(doc, end)
				if colon < len(doc) && doc[colon] == ':' && string(doc[i+1:end-1]) == name {
					v := skipSpace(doc, colon+1)
					if v >= len(doc) || doc[v] != '"' {
						return ""
					}
					vend := stringEnd(doc, v)
					// Escapes, or bytes that are not UTF-8 (which a decoder
					// would replace), are never a method name.
					if vend < 0 || bytes.IndexByte(doc[v+1:vend-1], '\\') >= 0 || !utf8.Valid(doc[v+1:vend-1]) {
						return ""
					}
					return string(doc[v+1 : vend-1])
				}
			}
			i = end
			continue
		case '{':
			depth++
			wantKey = depth == 1
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			wantKey = depth == 1
		}
		i++
	}
	return ""
}

// stringEnd is the index just after the JSON string starting at doc[i]
// (a quote), or -1 when doc ends inside it.
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// knownMethod is m when known says the surface has such a method, else
// "other": nothing a client chose reaches the log verbatim.
func knownMethod(known func(string) bool, m string) string {
	switch {
	case m == "":
		return ""
	case known(m):
		return m
	}
	return "other"
}

// a2aMethod reports whether m is an A2A 1.0 JSON-RPC method (§9.4).
func a2aMethod(m string) bool {
	switch m {
	case "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
		"DeleteTaskPushNotificationConfig", "GetExtendedAgentCard":
		return true
	}
	return false
}

// mcpMethod reports whether m is an MCP 2026-07-28 method (with the Tasks
// extension's) a client may send.
func mcpMethod(m string) bool {
	switch m {
	case "ping", "initialize", "server/discover", "tools/list", "tools/call", "prompts/list", "prompts/get",
		"resources/list", "resources/templates/list", "resources/read", "completion/complete", "logging/setLevel",
		"tasks/get", "tasks/update", "tasks/cancel", "tasks/list", "subscriptions/listen",
		"notifications/initialized", "notifications/cancelled", "notifications/progress":
		return true
	}
	return false
}
