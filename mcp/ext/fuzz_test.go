package ext

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp"
)

// fuzzMeta is the _meta member every seed request carries.
const fuzzMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// validHeaderValue reports whether v may be sent as a header value.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// benignHost is the test host without the entries that fault on purpose,
// so any 5xx under fuzzing is the mount's.
type benignHost struct{ *testHost }

func (h benignHost) ListTools(ctx context.Context, s interop.Subject) ([]Tool, error) {
	ts, err := h.testHost.ListTools(ctx, s)
	return slices.DeleteFunc(ts, func(t Tool) bool {
		return t.Name == "fails" || t.Name == "ask-all" || strings.HasPrefix(t.Name, "handoff")
	}), err
}

func (h benignHost) ListPrompts(ctx context.Context, s interop.Subject) ([]*sdk.Prompt, error) {
	ps, err := h.testHost.ListPrompts(ctx, s)
	return slices.DeleteFunc(ps, func(p *sdk.Prompt) bool { return p != nil && (p.Name == "broken" || p.Name == "both") }), err
}

// FuzzExtensionRequest drives the extension methods (native tools with
// input rounds and progress, prompts, resources, completion) with
// arbitrary bodies and headers: the mount never panics and never answers
// a client's input with a 5xx.
func FuzzExtensionRequest(f *testing.F) {
	seeds := []struct{ body, method, name string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},` + fuzzMeta + `}}`, "tools/call", "echo"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","inputResponses":{"name":{"action":"accept","content":{"name":"A"}}},"requestState":"rs1.AAAA",` + fuzzMeta + `}}`, "tools/call", "ask"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}}}`, "tools/call", "progress"},
		{`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"greeting","arguments":{"name":"x"},` + fuzzMeta + `}}`, "prompts/get", "greeting"},
		{`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"ask-context","inputResponses":{"ctx":{"action":"decline"}},` + fuzzMeta + `}}`, "prompts/get", "ask-context"},
		{`{"jsonrpc":"2.0","id":6,"method":"prompts/list","params":{"cursor":null,` + fuzzMeta + `}}`, "prompts/list", ""},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"test://items/%2e%2E",` + fuzzMeta + `}}`, "resources/read", "test://items/%2e%2E"},
		{`{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"test://ask","requestState":"x",` + fuzzMeta + `}}`, "resources/read", "test://ask"},
		{`{"jsonrpc":"2.0","id":9,"method":"resources/list","params":{` + fuzzMeta + `}}`, "resources/list", ""},
		{`{"jsonrpc":"2.0","id":10,"method":"resources/templates/list","params":{` + fuzzMeta + `}}`, "resources/templates/list", ""},
		{`{"jsonrpc":"2.0","id":11,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greeting"},"argument":{"name":"name","value":"a"},"context":{"arguments":{}},` + fuzzMeta + `}}`, "completion/complete", ""},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.method, s.name)
	}
	h := newTestHost()
	e := newEnv(f, withHost(h), func(o *options) {
		o.ext.Tools, o.ext.Prompts = benignHost{h}, benignHost{h}
		o.BlockTimeout = 20 * time.Millisecond
		o.MaxBodyBytes = 1 << 16
	})
	f.Fuzz(func(t *testing.T, body []byte, method, name string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(string(body)))
		r.Header.Set("Authorization", "Bearer acme:alice")
		r.Header.Set("MCP-Protocol-Version", mcp.Revision)
		for k, v := range map[string]string{"Mcp-Method": method, "Mcp-Name": name} {
			if v != "" && validHeaderValue(v) {
				r.Header.Set(k, v)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r.WithContext(ctx))
		if rec.Code >= 500 {
			t.Fatalf("HTTP %d for client input: %s", rec.Code, rec.Body)
		}
	})
}

// FuzzNormalizeURI: normalization never panics, is idempotent, keeps an
// allowed scheme and never lets a traversal segment through.
func FuzzNormalizeURI(f *testing.F) {
	for _, s := range []string{"test://doc", "TEST://A/%7e/x?q=%2a", "test://items/%2e%2E/x", "https://h/a/./b", "test:opaque", "test://u@h/", "test://h/%zz", "test://h/caf\u00e9"} {
		f.Add(s)
	}
	e := newEnv(f, withHost(newTestHost()))
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := e.x.normalizeURI(raw)
		if !ok {
			return
		}
		again, ok := e.x.normalizeURI(got)
		if !ok || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", raw, got, again, ok)
		}
		scheme, _, _ := strings.Cut(got, ":")
		if !e.x.schemes[scheme] {
			t.Fatalf("%q normalized to a scheme outside the allowlist: %q", raw, got)
		}
		path, _, _ := strings.Cut(got, "?")
		for _, seg := range strings.Split(path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("%q normalized with a traversal segment: %q", raw, got)
			}
		}
	})
}
