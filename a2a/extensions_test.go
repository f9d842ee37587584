package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// Extensions the tests declare, in the declared order.
const (
	extA = "https://ext.example/a/v1"
	extB = "https://ext.example/b/v1"
)

// messageCapture is a RunStore that keeps the message of every CreateRun,
// as the host receives it.
type messageCapture struct {
	interop.RunStore
	mu   sync.Mutex
	msgs []interop.Message
}

func (m *messageCapture) CreateRun(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	if req.Message != nil {
		m.mu.Lock()
		m.msgs = append(m.msgs, *req.Message)
		m.mu.Unlock()
	}
	return m.RunStore.CreateRun(ctx, s, req)
}

// last is the message of the latest CreateRun.
func (m *messageCapture) last(t testing.TB) interop.Message {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.msgs) == 0 {
		t.Fatal("no run was created")
	}
	return m.msgs[len(m.msgs)-1]
}

// declaring declares extA and extB (with a description) and captures the
// messages the host receives.
func declaring(capture *messageCapture) func(*testConfig) {
	return func(c *testConfig) {
		c.Extensions = []wire.AgentExtension{{URI: extA}, {URI: extB, Description: "the second"}}
		capture.RunStore = c.Store
		c.Store = capture
	}
}

// extensionSend posts a SendMessage of noop to binding with the given
// A2A-Extensions header lines and returns the HTTP response.
func extensionSend(t *testing.T, binding string, mux http.Handler, values []string) *http.Response {
	t.Helper()
	msg := `{"messageId":"` + t.Name() + `","role":"ROLE_USER","parts":[{"text":"go"}],"metadata":{"skillId":"` + memstore.FixtureNoop + `"}}`
	var r *http.Request
	if binding == "JSON-RPC" {
		r = rpcCall{key: rpcKeyAcme, body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `}}`}.
			request(context.Background(), "http://internal.invalid"+rpcPath)
	} else {
		r = httptest.NewRequest(http.MethodPost, "http://internal.invalid"+restEnvPrefix+"/message:send", strings.NewReader(`{"message":`+msg+`}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("A2A-Version", "1.0")
		r.Header.Set("Authorization", "Bearer key-acme")
	}
	for _, v := range values {
		r.Header.Add("A2A-Extensions", v)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"error"`) {
		t.Fatalf("SendMessage: %d %s", w.Code, w.Body)
	}
	return w.Result()
}

// The extensions a request activates (A2A 1.0 §3.2.6 A2A-Extensions, A2A
// extensions §Extension Activation) are those it names that the card
// declares, every header line a comma-separated list, URIs compared
// exactly: they reach the host with the message in the declared order and
// come back in the response's A2A-Extensions; the rest is ignored, and a
// request that activates none gets no header. Both bindings.
func TestExtensionsActivatedReachTheHostAndAreEchoed(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   []string
	}{
		{"two lines, unknown and declared mixed", []string{extB + " , urn:x:unknown", "\t" + extA}, []string{extA, extB}},
		{"one of them", []string{extB}, []string{extB}},
		{"case differs", []string{strings.ToUpper(extA)}, nil},
		{"only unknown", []string{"urn:x:unknown,https://ext.example/c/v1"}, nil},
		{"a prefix of a declared URI", []string{"https://ext.example/a"}, nil},
		{"none", nil, nil},
	}
	rpcCapture, restCapture := &messageCapture{}, &messageCapture{}
	muxes := map[string]http.Handler{
		"JSON-RPC":  newRPCEnv(t, rpcOption(declaring(rpcCapture))).mux,
		"HTTP+JSON": newRESTEnv(t, restEnvOption(declaring(restCapture)), func(c *testConfig) { c.Routed = append(c.Routed, interop.Workflow{ID: memstore.FixtureNoop}) }).mux,
	}
	captures := map[string]*messageCapture{"JSON-RPC": rpcCapture, "HTTP+JSON": restCapture}
	for binding, mux := range muxes {
		for _, tc := range cases {
			t.Run(binding+"/"+tc.name, func(t *testing.T) {
				res := extensionSend(t, binding, mux, tc.values)
				if got := captures[binding].last(t).ActivatedExtensions; !slices.Equal(got, tc.want) {
					t.Errorf("the host got activated %q, want %q", got, tc.want)
				}
				echo, echoed := res.Header["A2a-Extensions"]
				switch {
				case tc.want == nil && echoed:
					t.Errorf("echoed %q for a request that activated nothing", echo)
				case tc.want != nil && !slices.Equal(echo, []string{strings.Join(tc.want, ", ")}):
					t.Errorf("echoed %q, want %q", echo, strings.Join(tc.want, ", "))
				}
			})
		}
	}
}

// An operation other than SendMessage echoes what its request activated
// too: the activation belongs to the request, whatever it asks.
func TestExtensionsEchoedOnEveryOperation(t *testing.T) {
	e := newRESTEnv(t, declaring(&messageCapture{}))
	res := e.do(t, restCall{method: http.MethodGet, path: "/tasks", key: "key-acme", header: map[string]string{"A2A-Extensions": extB}})
	if res.status != http.StatusOK || res.header.Get("A2A-Extensions") != extB {
		t.Fatalf("ListTasks: %d, A2A-Extensions %q", res.status, res.header.Get("A2A-Extensions"))
	}
	rpc := newRPCEnv(t, declaring(&messageCapture{}))
	r := rpcCall{key: rpcKeyAcme, body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`}.request(context.Background(), "http://internal.invalid"+rpcPath)
	r.Header.Set("A2A-Extensions", extA)
	w := httptest.NewRecorder()
	rpc.mux.ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Header().Get("A2A-Extensions") != extA {
		t.Fatalf("ListTasks: %d, A2A-Extensions %q", w.Code, w.Header().Get("A2A-Extensions"))
	}
}

// A server that declares no extension activates none: the request's
// A2A-Extensions stays opaque (OpenWOP interop map, a2a.fields: unknown
// extensions are opaque), nothing reaches the host as activated and no
// header answers it, while Message.extensions still travels as sent.
func TestNoDeclaredExtensionActivatesNothing(t *testing.T) {
	capture := &messageCapture{}
	mux := newRPCEnv(t, func(c *testConfig) { capture.RunStore = c.Store; c.Store = capture }).mux
	res := extensionSend(t, "JSON-RPC", mux, []string{extA})
	if got := capture.last(t).ActivatedExtensions; got != nil {
		t.Errorf("activated %q", got)
	}
	if v, ok := res.Header["A2a-Extensions"]; ok {
		t.Errorf("echoed %q", v)
	}
}

// The card declares the configured extensions in capabilities.extensions,
// as configured (golden bytes); the card of a server that declares none
// has no extensions member (the other card goldens).
func TestCardDeclaresExtensions(t *testing.T) {
	e := newRESTEnv(t, declaring(&messageCapture{}))
	res := cardFetch(t, e, "", nil, true)
	var card wire.AgentCard
	if err := json.Unmarshal(res.body, &card); err != nil {
		t.Fatal(err)
	}
	if want := []wire.AgentExtension{{URI: extA}, {URI: extB, Description: "the second"}}; !slices.EqualFunc(card.Capabilities.Extensions, want, func(a, b wire.AgentExtension) bool {
		return a.URI == b.URI && a.Description == b.Description && !a.Required && a.Params == nil
	}) {
		t.Fatalf("capabilities.extensions %+v", card.Capabilities.Extensions)
	}
	restGolden(t, "cards", "public-extensions", restTranscript(restCall{method: http.MethodGet, path: restEnvCardPath}, res))
}

// New refuses an extension that could not be activated or that it would
// have to enforce.
func TestNewRefusesBadExtensions(t *testing.T) {
	cfg := testConfigOf(newCoreEnv(t).srv)
	cfg.Extensions = []wire.AgentExtension{
		{URI: "relative/v1"}, {URI: "https://ext.example/a,b"}, {URI: "https://ext.example/x y"},
		{URI: extA}, {URI: extA}, {URI: extB, Required: true},
	}
	_, err := New(cfg.Deps, cfg.Options)
	if err == nil {
		t.Fatal("New accepted bad extensions")
	}
	for _, want := range []string{
		`Extensions[0].URI "relative/v1" is not an absolute URI without commas or whitespace`,
		`Extensions[1].URI "https://ext.example/a,b" is not an absolute URI without commas or whitespace`,
		`Extensions[2].URI "https://ext.example/x y" is not an absolute URI without commas or whitespace`,
		`Extensions[4].URI "` + extA + `" is declared twice`,
		`Extensions[5] is Required, which the server does not enforce`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nsays nothing of %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "Extensions[3]") {
		t.Errorf("the first declaration of a URI is refused: %v", err)
	}
}
