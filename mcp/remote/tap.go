package remote

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/internal/version"
)

// MCP methods the connection side names.
const (
	methodDiscover      = "server/discover"
	methodListTools     = "tools/list"
	methodListResources = "resources/list"
	methodListPrompts   = "prompts/list"
)

// maxSupported bounds how many revisions of a server's list are read.
const maxSupported = 32

// tap is the go-sdk sending middleware of one session. It sees every
// request as go-sdk sends it, typed, and every result before go-sdk acts
// on it:
//
//   - server/discover: it keeps what the server answered, so Connect
//     decides the revision from the server's own supportedVersions (MCP
//     2026-07-28 §server/discover) with the host's policy — go-sdk's
//     Connect does not expose them;
//   - every request: the run's W3C trace context goes into
//     params._meta.traceparent/tracestate (unprefixed keys; OpenWOP
//     interop.md §Trace context prefers the in-message carrier, the only
//     one a proxy cannot drop);
//   - every cacheable result: the server's ttlMs goes to the list's
//     hints, and is then zeroed, so
//     go-sdk's own per-session cache — keyed by cursor alone, blind to
//     cacheScope and to whose credential fetched the result — keeps
//     nothing it would serve. The client's list cache, keyed by
//     authorization, is the only one.
type tap struct {
	mu sync.Mutex
	// answered: the server answered server/discover, with a result
	// (final) or with an error naming what it speaks.
	answered, final bool
	offers          []string
	// legacy: the server answered server/discover as a server that does
	// not have it (method not found, a bare 400 or 404).
	legacy bool
	// failed is why server/discover got no answer, when it got none
	// (network, egress guard, timeout).
	failed error
}

func (t *tap) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p := req.GetParams(); !nilParams(p) {
			setTraceMeta(ctx, p)
		}
		res, err := next(ctx, method, req)
		if method == methodDiscover {
			t.discovered(res, err)
		}
		if err == nil {
			takeHints(ctx, res)
		}
		return res, err
	}
}

// nilParams reports whether p is nil or a typed nil pointer (whose
// GetMeta would dereference it).
func nilParams(p mcp.Params) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// setTraceMeta puts the trace context of ctx into p's _meta, keeping a
// value the caller already set.
func setTraceMeta(ctx context.Context, p mcp.Params) {
	tc, ok := tracecontext.FromContext(ctx)
	if !ok {
		return
	}
	m := p.GetMeta()
	if m == nil {
		m = map[string]any{}
	}
	if _, set := m["traceparent"]; !set {
		m["traceparent"] = tc.TraceParent
		if tc.TraceState != "" {
			m["tracestate"] = tc.TraceState
		} else {
			delete(m, "tracestate")
		}
	}
	p.SetMeta(m)
}

// discovered keeps the answer to server/discover. go-sdk may send it twice
// (after a -32022 naming a revision it prefers): a result is final, an
// answer replaces an earlier answer, and a failure is kept only while
// there is no answer.
func (t *tap) discovered(res mcp.Result, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.final {
		return
	}
	if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil && dr != nil {
		t.answered, t.final, t.offers, t.legacy, t.failed = true, true, wellFormed(dr.SupportedVersions), false, nil
		return
	}
	offers, legacy, answered := classifyDiscoverError(err)
	switch {
	case answered:
		t.answered, t.offers, t.legacy, t.failed = true, offers, legacy, nil
	case !t.answered:
		t.failed = err
	}
}

// outcome returns what server/discover established: the revisions the
// server offers, whether it is a server without server/discover, or, when
// it never answered, why.
func (t *tap) outcome() (offers []string, legacy bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.answered {
		if t.failed == nil {
			return nil, false, errors.New("remote: server/discover was never sent")
		}
		return nil, false, t.failed
	}
	return t.offers, t.legacy, nil
}

// classifyDiscoverError reads a failed server/discover. answered is false
// when the server gave no answer (a network failure, the egress guard, a
// timeout, an authentication challenge): there is then nothing to
// negotiate from. Otherwise:
//
//   - -32022 UnsupportedProtocolVersionError: its data.supported are the
//     server's revisions (MCP 2026-07-28 §Versioning);
//   - method not found, invalid request, or the generic server error
//     legacy SDKs answer an unknown MCP-Protocol-Version with, and a bare
//     400, 404 or 405: a server without server/discover, that is one of
//     the revisions before 2026-07-28 only (legacy);
//   - any other JSON-RPC error is a failed exchange, not a negotiation.
func classifyDiscoverError(err error) (offers []string, legacy, answered bool) {
	if we := serverRPCError(err); we != nil {
		switch we.Code {
		case mcp.CodeUnsupportedProtocolVersion:
			return supportedFromData(we.Data), false, true
		case jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidRequest, codeLegacyServerError:
			return nil, true, true
		}
		return nil, false, false
	}
	var se *StatusError
	if errors.As(err, &se) {
		switch se.StatusCode {
		case 400, 404, 405:
			return nil, true, true
		}
	}
	return nil, false, false
}

// codeLegacyServerError is the JSON-RPC code the TypeScript SDK's
// pre-2026 servers answer a request at an unknown MCP-Protocol-Version
// with ("Bad Request: Unsupported protocol version").
const codeLegacyServerError = -32000

// supportedFromData reads data.supported of a -32022 error: the
// well-formed revisions it names, at most maxSupported of them. Anything
// else in data, and a malformed entry, is ignored.
func supportedFromData(data json.RawMessage) []string {
	var d struct {
		Supported []json.RawMessage `json:"supported"`
	}
	if len(data) == 0 || json.Unmarshal(data, &d) != nil {
		return nil
	}
	var out []string
	for _, raw := range d.Supported {
		var v string
		if json.Unmarshal(raw, &v) == nil && version.Date(v) {
			out = append(out, v)
			if len(out) == maxSupported {
				break
			}
		}
	}
	return out
}

// wellFormed keeps the well-formed revisions of a server's list, at most
// maxSupported of them.
func wellFormed(vs []string) []string {
	var out []string
	for _, v := range vs {
		if version.Date(v) {
			out = append(out, v)
			if len(out) == maxSupported {
				break
			}
		}
	}
	return out
}

// listHints are a list's cache hints, collected over its pages.
type listHints struct {
	pages         int
	minTTLMs      int
	inputRequired bool
}

type listHintsKey struct{}

func withListHints(ctx context.Context) (context.Context, *listHints) {
	h := &listHints{}
	return context.WithValue(ctx, listHintsKey{}, h), h
}

// takeHints reads the cache hints of a cacheable result into the list's
// hints (when ctx carries them) and zeroes ttlMs, so go-sdk's cache never
// serves it.
func takeHints(ctx context.Context, res mcp.Result) {
	var c *mcp.Cacheable
	inputRequired := false
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		c, inputRequired = &r.Cacheable, r.ResultType == "input_required"
	case *mcp.ListResourcesResult:
		c, inputRequired = &r.Cacheable, r.ResultType == "input_required"
	case *mcp.ListPromptsResult:
		c, inputRequired = &r.Cacheable, r.ResultType == "input_required"
	case *mcp.ListResourceTemplatesResult:
		c = &r.Cacheable
	case *mcp.ReadResourceResult:
		c = &r.Cacheable
	default:
		return
	}
	if h, ok := ctx.Value(listHintsKey{}).(*listHints); ok {
		if h.pages == 0 || c.TTLMs < h.minTTLMs {
			h.minTTLMs = c.TTLMs
		}
		h.pages++
		h.inputRequired = h.inputRequired || inputRequired
	}
	c.TTLMs = 0
}
