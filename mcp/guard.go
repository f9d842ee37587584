package mcp

// The guard: every request passes these steps, in this order, before any
// tools, tasks or discovery work (OpenWOP interop map, mcp.methods,
// mcp.headers, mcp.meta and mcp.authorization):
//
//  0. After Server.Drain every request is 503 -32603 (config.go Drain).
//  1. POST only (405 with Allow: POST).
//  2. Origin (origin.go): on a loopback listener a Host that is not a
//     loopback name is 403 (DNS rebinding); a browser Origin outside
//     AllowedOrigins is 403, unless AllowOwnLoopbackOrigin lets a loopback
//     listener's own origin through.
//  3. Authentication through the SubjectResolver: 401 with WWW-Authenticate,
//     403, or an anonymous Subject only when AllowAnonymous (OpenWOP interop map, mcp.authorization).
//  4. Body: at most MaxBodyBytes (413), arriving within BodyTimeout (408),
//     one JSON-RPC message (batches are -32600), notifications answered
//     202.
//  5. Method: anything not served — initialize, ping, logging/setLevel,
//     resources/(un)subscribe, tasks/result, tasks/list, unknown names — is
//     404 with -32601 and the request id (OpenWOP interop map, mcp.methods and mcp.headers).
//  6. Headers agree with the body: Mcp-Method = method, Mcp-Name = name or
//     taskId (Base64 sentinel decoded first), MCP-Protocol-Version present
//     and equal to _meta's protocolVersion; else 400 with -32020, before
//     version selection (OpenWOP interop map, mcp.headers; MCP 2026-07-28 streamable HTTP §Server Validation).
//  7. Version selection through the negotiate policy, recorded as a
//     negotiation.decided host event of the caller's tenant; a revision not
//     offered is 400 with -32022 and data {supported, requested} (OpenWOP interop map, mcp.headers).
//  8. _meta carries protocolVersion and clientCapabilities, else 400 -32602
//     (OpenWOP interop map, mcp.meta).
//
// Capability checks (-32021) belong to each operation, which knows what it
// needs. Each step returns its refusal; the binding (wire.go) writes it.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/wopinterop/wopinterop/internal/admit"
	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Header names of the streamable-HTTP transport (matched
// case-insensitively by net/http), spelled canonically so that reading
// them allocates no canonical copy.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// _meta keys the mount reads (OpenWOP interop map, mcp.meta; interop.md §Trace context).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	metaTraceParent        = "traceparent"
	metaTraceState         = "tracestate"
)

// Method names the mount serves or refuses by name.
const (
	methodDiscover           = "server/discover"
	methodToolsList          = "tools/list"
	methodToolsCall          = "tools/call"
	methodListen             = "subscriptions/listen"
	methodTasksGet           = "tasks/get"
	methodTasksUpdate        = "tasks/update"
	methodTasksCancel        = "tasks/cancel"
	methodNotifyCancelled    = "notifications/cancelled"
	methodNotifyTasks        = "notifications/tasks"
	methodNotifyAcknowledged = "notifications/subscriptions/acknowledged"
)

// call is what every operation knows about its request once the guard let
// it through: the request as an extension sees it (mount.Call) and what
// only the mount needs.
type call struct {
	mount.Call
	id     json.RawMessage
	method string
	trace  interop.TraceContext
	// r is the HTTP request, read for its context and its connection
	// (flightKey); only the binding writes the answer. serveHTTP sets it
	// first.
	r *http.Request
	// owner is the flight of the run the request owns, once it owns one
	// (Server.own): the binding writes the answer through it.
	owner *flight
	// notifier sends notifications ahead of the answer (a native tool's
	// progress).
	notifier *notifier
}

// operation serves one method once the guard passed.
type operation func(s *Server, ctx context.Context, c *call) (answer, error)

// operation returns the handler of a served method. The tasks methods
// exist only when the Tasks extension is served, the prompts, resources
// and completion methods only when Options.Extension serves them;
// everything else is -32601.
func (s *Server) operation(method string) operation {
	switch method {
	case methodDiscover:
		return (*Server).discover
	case methodToolsList:
		return (*Server).toolsList
	case methodToolsCall:
		return (*Server).toolsCall
	case methodListen:
		return (*Server).listen
	case methodTasksGet:
		return served(s.opts.Tasks, (*Server).tasksGet)
	case methodTasksUpdate:
		return served(s.opts.Tasks, (*Server).tasksUpdate)
	case methodTasksCancel:
		return served(s.opts.Tasks, (*Server).tasksCancel)
	case mount.MethodPromptsList, mount.MethodPromptsGet:
		return served(s.ext.Prompts, (*Server).extend)
	case mount.MethodResourcesList, mount.MethodResourceTemplates, mount.MethodResourcesRead:
		return served(s.ext.Resources, (*Server).extend)
	case mount.MethodComplete:
		return served(s.ext.Completions, (*Server).extend)
	}
	return nil
}

// served is op when its extension is configured, else nil (-32601).
func served(configured bool, op operation) operation {
	if !configured {
		return nil
	}
	return op
}

// serve runs the guard's steps for x and hands the request to its
// operation, returning what the binding then writes.
func (s *Server) serve(x *exchange) (answer, error) {
	r := x.call.r
	if s.draining() {
		return answer{}, errShuttingDown
	}
	if r.Method != http.MethodPost {
		return answer{}, &Error{Code: codeInvalidRequest, Message: "Invalid request: the MCP endpoint accepts POST only", Status: http.StatusMethodNotAllowed}
	}
	if !s.originAllowed(r) {
		return answer{}, &Error{Code: codeInvalidRequest, Message: "Forbidden: origin not allowed", Status: http.StatusForbidden}
	}
	sub, err := s.authenticate(r)
	if err != nil {
		return answer{}, err
	}
	x.read = true
	body, err := s.readBody(x, r)
	if err != nil {
		return answer{}, err
	}
	msg, perr := decodeMessage(body)
	x.call.id = msg.id
	if perr != nil {
		return answer{}, perr
	}
	if msg.notification() {
		return s.notification(r, sub, &msg)
	}
	op := s.operation(msg.method)
	if op == nil {
		return answer{}, newError(codeMethodNotFound, "Method not found")
	}
	c := &x.call
	c.notifier = (*notifier)(x)
	if err := s.prepare(r, c, sub, msg); err != nil {
		return answer{}, err
	}
	return op(s, r.Context(), c)
}

// authenticate resolves the Subject through the admission step
// (internal/admit). A refusal is answered here, after the exchange is
// recorded as one refused negotiation.decided, reason "unauthenticated",
// naming the revision of the MCP-Protocol-Version header as requested
// (OpenWOP interop §The audit event: every outcome is recorded, a refusal
// included): no credential (401), a valid credential the resolver forbids
// (403) and a resolver fault (500). The record carries no tenant: the
// resolver vouched for none, so it is kept but delivered to no
// subscriber. A record that fails is a server error (500 -32603), as for
// every request (internal/admit).
func (s *Server) authenticate(r *http.Request) (interop.Subject, error) {
	g := s.admission()
	sub, err := g.Authenticate(r, strings.TrimSpace(r.Header.Get(headerProtocolVersion)))
	switch {
	case err == nil:
		return sub, nil
	case admit.IsAuditFailure(err):
		return interop.Subject{}, err // a server error (wireError)
	case errors.Is(err, interop.ErrUnauthenticated):
		return interop.Subject{}, errUnauthenticated
	case errors.Is(err, interop.ErrForbidden):
		return interop.Subject{}, errForbidden
	}
	return interop.Subject{}, err
}

// admission is the mount's admission step (internal/admit).
func (s *Server) admission() admit.Gate {
	return admit.Gate{Subjects: s.deps.Subjects, Policy: s.deps.Policy, Auditor: s.deps.Auditor, AllowAnonymous: s.opts.AllowAnonymous}
}

// Refusals of a body (guard step 4) beside errBodyTooLarge.
var (
	errBodyTooSlow    = &Error{Code: codeInvalidRequest, Message: "Request timeout: the body did not arrive in time", Status: http.StatusRequestTimeout}
	errBodyIncomplete = newError(codeInvalidRequest, "Invalid request: the body could not be read")
)

// readBody reads the whole body within MaxBodyBytes and BodyTimeout
// (internal/httpbody: memory follows the bytes received, never the
// declared length). The decoded message aliases the bytes returned, and
// the host may keep what it is handed of them (a tool's arguments, a run's
// inputs), so they are the request's own: the body is read into a
// recycled buffer and copied out at its size, since reading needs
// bytes.MinRead bytes of room past it that would otherwise stay with every
// request. A body too large to recycle its buffer for is returned as read.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	buf := s.bodies.get()
	switch err := httpbody.Read(w, r, buf, s.opts.MaxBodyBytes, s.opts.BodyTimeout); {
	case errors.Is(err, httpbody.ErrTooLarge):
		return nil, errBodyTooLarge
	case errors.Is(err, httpbody.ErrTooSlow):
		return nil, errBodyTooSlow
	case err != nil:
		return nil, errBodyIncomplete
	}
	if buf.Cap() > maxRecycledBody {
		return buf.Bytes(), nil
	}
	body := bytes.Clone(buf.Bytes())
	s.bodies.put(buf)
	return body, nil
}

// bodyBuffers recycles the buffers request bodies are read into.
type bodyBuffers struct{ pool sync.Pool }

// maxRecycledBody is the largest buffer kept for reuse.
const maxRecycledBody = 64 << 10

func (p *bodyBuffers) get() *bytes.Buffer {
	if b, ok := p.pool.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

func (p *bodyBuffers) put(b *bytes.Buffer) {
	b.Reset()
	p.pool.Put(b)
}

// notification answers a JSON-RPC notification with 202. Only
// notifications/cancelled has an effect: naming an in-flight request of the
// same Subject, it cancels that request's run (OpenWOP interop.md §MCP tasks and cancellation).
func (s *Server) notification(r *http.Request, sub interop.Subject, msg *rpcMessage) (answer, error) {
	if h := strings.TrimSpace(r.Header.Get(headerMethod)); h != "" && h != msg.method {
		return answer{}, newError(codeHeaderMismatch, "Header mismatch: Mcp-Method does not match the body's method")
	}
	if msg.method == methodNotifyCancelled {
		if id, ok := msg.params.Get("requestId"); ok && validID(id) {
			s.inflight.cancel(flightKey(r, sub, id))
		}
	}
	return answer{accepted: true}, nil
}

// prepare runs guard steps 6–8 for a request and fills c.
func (s *Server) prepare(r *http.Request, c *call, sub interop.Subject, msg rpcMessage) error {
	c.id, c.method, c.Params, c.Subject = msg.id, msg.method, msg.params, sub
	// _meta and the member Mcp-Name names, read in one pass.
	member := nameMember(msg.method)
	var v [2]json.RawMessage
	if member == "" {
		v[0], _ = msg.params.Get("_meta")
	} else {
		msg.params.GetAll(v[:], "_meta", member)
	}
	if err := checkHeaders(r, msg.method, member, v[1]); err != nil {
		return err
	}
	rawMeta := v[0]
	if len(rawMeta) == 0 || rawMeta[0] != '{' {
		rawMeta = nil
	}
	meta := readMeta(rawMeta)
	requested := strings.TrimSpace(r.Header.Get(headerProtocolVersion))
	var metaVersion string
	versionOK := meta.protocolVersion != nil
	if versionOK {
		metaVersion, versionOK = stringValue(meta.protocolVersion)
	}
	if versionOK && metaVersion != requested {
		return newError(codeHeaderMismatch, "Header mismatch: MCP-Protocol-Version does not match _meta io.modelcontextprotocol/protocolVersion")
	}
	g := s.admission()
	d, err := g.Negotiate(r.Context(), requested, negotiate.Peer{Authenticated: sub.Authenticated, Origin: r.Header.Get("Origin")}, admit.ScopeOf(sub))
	if err != nil {
		return err
	}
	if requested == "" {
		// The header-less revision rule (OpenWOP interop map, mcp.headers) refused it; upstream
		// answers a missing required header with -32020.
		return newError(codeHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is required")
	}
	if !d.Accepted() {
		return newError(codeUnsupportedVer, "Unsupported protocol version").withData(struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{d.Supported, d.RequestedRaw})
	}
	if rawMeta != nil && s.opts.Extension != nil {
		// Only an extension reads _meta whole (mount.Call.Meta).
		c.Meta, _ = paramMembers(rawMeta) // a valid object: cannot fail
	}
	if !versionOK {
		return errInvalidParams("Invalid params: _meta io.modelcontextprotocol/protocolVersion is required")
	}
	if meta.clientCapabilities == nil || !parseCaps(meta.clientCapabilities, &c.Caps) {
		return errInvalidParams("Invalid params: _meta io.modelcontextprotocol/clientCapabilities is required")
	}
	c.trace = traceFrom(r, meta.traceParent, meta.traceState)
	return nil
}

// requestMeta holds the members of params._meta the guard reads, each
// nil when absent.
type requestMeta struct {
	protocolVersion, clientCapabilities json.RawMessage
	traceParent, traceState             json.RawMessage
}

// readMeta picks the guard's members out of the _meta object raw (nil
// for none) as paramMembers would split it — names unquoted, the last of
// duplicated names kept — without building a map.
func readMeta(raw []byte) requestMeta {
	var m requestMeta
	if raw == nil {
		return m
	}
	sc := jsonbytes.Scanner{Data: raw}
	_ = sc.Members(func(name []byte, escaped bool, value []byte) error {
		switch {
		case mount.MemberIs(name, escaped, metaProtocolVersion):
			m.protocolVersion = value
		case mount.MemberIs(name, escaped, metaClientCapabilities):
			m.clientCapabilities = value
		case mount.MemberIs(name, escaped, metaTraceParent):
			m.traceParent = value
		case mount.MemberIs(name, escaped, metaTraceState):
			m.traceState = value
		}
		return nil
	})
	return m
}

// member is the last value of the member called name in the valid JSON
// object raw, nil when it has none.
func member(raw []byte, name string) json.RawMessage {
	v, _ := mount.ParamsOf(raw).Get(name)
	return v
}

// checkHeaders compares Mcp-Method and Mcp-Name with the body (guard step 6).
// member is the params member Mcp-Name names (nameMember), named its
// value (nil when absent).
func checkHeaders(r *http.Request, method, member string, named json.RawMessage) error {
	if strings.TrimSpace(r.Header.Get(headerMethod)) != method {
		return newError(codeHeaderMismatch, "Header mismatch: Mcp-Method must equal the body's method")
	}
	if member == "" {
		return nil
	}
	values := r.Header.Values(headerName)
	if len(values) != 1 {
		return newError(codeHeaderMismatch, "Header mismatch: one Mcp-Name header is required")
	}
	header, ok := decodeHeaderValue(strings.TrimSpace(values[0]))
	if !ok || named == nil || !stringValueIs(named, header) {
		return newError(codeHeaderMismatch, "Header mismatch: Mcp-Name must equal params."+member)
	}
	return nil
}

// nameMember is the params member the Mcp-Name header of method must
// equal, "" for a method without one.
func nameMember(method string) string {
	switch method {
	case methodToolsCall, mount.MethodPromptsGet:
		return "name"
	case mount.MethodResourcesRead:
		return "uri"
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		return "taskId"
	}
	return ""
}

// decodeHeaderValue undoes the Base64 sentinel encoding ("=?base64?…?=")
// of a header value; a plain value is returned as is. A sentinel that does
// not decode to UTF-8 text is reported false.
func decodeHeaderValue(v string) (string, bool) {
	const prefix, suffix = "=?base64?", "?="
	if len(v) < len(prefix)+len(suffix) || !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(prefix) : len(v)-len(suffix)])
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// stringValue reads a valid JSON value as json.Unmarshal into a string
// does, without its reflection: a string unquoted (invalid UTF-8 replaced
// by U+FFFD), null as "", any other value not ok.
func stringValue(raw json.RawMessage) (string, bool) {
	if string(raw) == "null" {
		return "", true
	}
	contents, escaped := jsonbytes.StringContents(raw)
	if contents == nil {
		return "", false
	}
	s, err := jsonbytes.Unquote(contents, escaped || !utf8.Valid(contents))
	return s, err == nil
}

// stringValueIs reports whether stringValue(raw) is want, without
// allocating for a plain string (the common case: no escapes, valid UTF-8).
func stringValueIs(raw json.RawMessage, want string) bool {
	if contents, escaped := jsonbytes.StringContents(raw); contents != nil && !escaped && utf8.Valid(contents) {
		return string(contents) == want
	}
	s, ok := stringValue(raw)
	return ok && s == want
}

// parseCaps reads the capabilities the mount acts on. raw must be a JSON
// object; members of any other shape count as not declared. The members
// are looked up in place: a capabilities object is small, and splitting
// it into maps cost more than reading it.
func parseCaps(raw json.RawMessage, out *mount.Caps) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	sc := jsonbytes.Scanner{Data: raw}
	if sc.Members(func([]byte, bool, []byte) error { return nil }) != nil {
		return false
	}
	if modes, ok := objectMember(raw, "elicitation"); ok {
		out.Elicitation = true
		form := member(modes, "form") != nil
		url := member(modes, "url") != nil
		out.ElicitationForm = form || !url
		out.ElicitationURL = url
	}
	if sub, ok := objectMember(raw, "sampling"); ok {
		out.Sampling = true
		_, out.SamplingTools = objectMember(sub, "tools")
		_, out.SamplingContext = objectMember(sub, "context")
	}
	_, out.Roots = objectMember(raw, "roots")
	if exts, ok := objectMember(raw, "extensions"); ok {
		_, out.Tasks = objectMember(exts, TasksExtension)
	}
	return true
}

// objectMember returns the member called name of the object raw when it
// is a JSON object.
func objectMember(raw []byte, name string) (json.RawMessage, bool) {
	v := member(raw, name)
	return v, len(v) > 0 && v[0] == '{'
}

// missingCapability is -32021 naming what the request did not declare, as
// a mount.Caps object (OpenWOP interop map, mcp.meta).
func missingCapability(required string) *Error {
	return newError(codeMissingCapability, "Missing required client capability").withData(json.RawMessage(`{"requiredCapabilities":` + required + `}`))
}

// Required-capability objects.
const (
	requiredElicitation     = `{"elicitation":{}}`
	requiredElicitationForm = `{"elicitation":{"form":{}}}`
	requiredTasks           = `{"extensions":{"` + TasksExtension + `":{}}}`
)
