package workunit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/workunit"
)

// The test host: tenant acme, one caller, workflows that take a unit.
const (
	hostTenant = "acme"
	hostKey    = "key-acme"
	// reviewA2A takes a unit in the message that starts it.
	reviewA2A = "unit-review"
	// reviewMCP takes a unit in its arguments; its input schema declares
	// the envelope.
	reviewMCP = "unit-review-mcp"
	// plainMCP does not declare the envelope and accepts any arguments.
	plainMCP = "unit-plain-mcp"
	// verdictKind is the kind of the result units the workflows return.
	verdictKind = "com.example.invoice.verdict"
)

var alice = interop.Subject{Tenant: hostTenant, Principal: "alice", Authenticated: true}

// verdict is the body of every result unit.
var verdict = json.RawMessage(`{"approved":true}`)

// unitHost is the host's RunStore: memstore behind the check a host makes
// when a run would start from a unit — it opens the unit and refuses the
// run when the unit does not open, so a refused unit creates no run and
// the caller gets the protocol's invalid-params answer (A2A -32602, MCP
// -32602) in its own shape. It keeps every request it was given.
type unitHost struct {
	interop.RunStore
	mu       sync.Mutex
	requests []interop.CreateRunRequest
}

func (h *unitHost) CreateRun(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	h.mu.Lock()
	h.requests = append(h.requests, req)
	h.mu.Unlock()
	switch req.WorkflowID {
	case reviewA2A:
		if _, err := workunit.FromMessage(req.Message); err != nil {
			return interop.Run{}, false, &interop.InputError{Field: "message.parts", Reason: err.Error()}
		}
	case reviewMCP, plainMCP:
		if _, err := workunit.FromMCPArguments(req.Inputs, workunit.Declares(inputSchemaOf(req.WorkflowID))); err != nil {
			return interop.Run{}, false, &interop.InputError{Field: "inputs/" + strings.ReplaceAll(workunit.ArgumentName, "/", "~1"), Reason: err.Error()}
		}
	}
	return h.RunStore.CreateRun(ctx, s, req)
}

// last is the latest request the host was given.
func (h *unitHost) last(t testing.TB) interop.CreateRunRequest {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.requests) == 0 {
		t.Fatal("the host was given no request")
	}
	return h.requests[len(h.requests)-1]
}

// runs counts the runs of acme.
func (h *unitHost) runs(t testing.TB) int {
	t.Helper()
	page, err := h.RunStore.ListRuns(context.Background(), alice, interop.ListRunsQuery{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	return page.Total
}

// inputSchemaOf is the input schema of the test workflows.
func inputSchemaOf(workflow string) json.RawMessage {
	if workflow == reviewMCP {
		return json.RawMessage(`{"type":"object","properties":{"` + workunit.ArgumentName + `":` + string(workunit.InputSchema()) + `},"required":["` + workunit.ArgumentName + `"]}`)
	}
	return json.RawMessage(`{"type":"object"}`)
}

// newUnitStore registers the test workflows in a fresh memstore.
func newUnitStore(t testing.TB) (*memstore.Store, *unitHost) {
	t.Helper()
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	defs := []memstore.WorkflowDef{
		{Workflow: interop.Workflow{ID: reviewA2A, Name: "Review", Description: "Reviews the unit a message carries.", InputSchema: inputSchemaOf(reviewA2A)},
			Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
				// The unit as the run's first message holds it.
				run, err := store.GetRun(ctx, alice, rc.RunID())
				if err != nil {
					return nil, err
				}
				sent, err := workunit.FromMessage(&run.Messages[0])
				if err != nil {
					return nil, memstore.Fail(err.Error())
				}
				result, err := workunit.Seal(workunit.Unit{Kind: verdictKind, ResultOf: sent.Digest(), Body: verdict})
				if err != nil {
					return nil, err
				}
				if err := rc.PublishArtifact(interop.Artifact{ID: "verdict", Name: "verdict", Parts: []interop.Part{result.InteropPart()}}, false, true); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"received":"` + sent.Digest() + `"}`), nil
			}},
		{Workflow: interop.Workflow{ID: reviewMCP, Name: reviewMCP, Description: "Reviews the unit its arguments carry.", InputSchema: inputSchemaOf(reviewMCP)},
			Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
				sent, err := workunit.FromMCPArguments(rc.Inputs(), true)
				if err != nil {
					return nil, memstore.Fail(err.Error())
				}
				result, err := workunit.Seal(workunit.Unit{Kind: verdictKind, ResultOf: sent.Digest(), Body: verdict})
				if err != nil {
					return nil, err
				}
				return json.Marshal(map[string]any{workunit.ArgumentName: result.MCPArgument()})
			}},
		{Workflow: interop.Workflow{ID: plainMCP, Name: plainMCP, Description: "Takes any arguments.", InputSchema: inputSchemaOf(plainMCP)},
			Run: func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
				return json.RawMessage(`{}`), nil
			}},
	}
	for _, def := range defs {
		if err := store.Register(hostTenant, def); err != nil {
			t.Fatal(err)
		}
	}
	return store, &unitHost{RunStore: store}
}

// bearerSubjects authenticates "Authorization: Bearer key-acme" as alice.
var bearerSubjects = interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
	if r.Header.Get("Authorization") != "Bearer "+hostKey {
		return interop.Subject{}, interop.ErrUnauthenticated
	}
	return alice, nil
})

// a2aHost is the A2A server over the test host, on a real listener:
// JSON-RPC at /rpc, HTTP+JSON under /rest, the card at the well-known path.
type a2aHost struct {
	url  string
	host *unitHost
}

func newA2AHost(t testing.TB, declare bool) *a2aHost {
	t.Helper()
	store, host := newUnitStore(t)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	opts := a2a.Options{
		HTTPJSONURL: ts.URL + "/rest", AgentCardURL: ts.URL + "/.well-known/agent-card.json",
		Card:         a2a.CardConfig{Name: "Unit host", Description: "Reviews work units.", Version: "1.0.0"},
		BlockTimeout: 10 * time.Second,
	}
	if declare {
		opts.Extensions = []wire.AgentExtension{workunit.AgentExtension()}
	}
	srv, err := a2a.New(a2a.Deps{
		Store: host, Subjects: bearerSubjects, Policy: policy,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Map:     mapping.Builtin(), JSONRPCURL: ts.URL + "/rpc",
		Routed: []interop.Workflow{{ID: reviewA2A, Name: "Review", Description: "Reviews the unit a message carries."}},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/.well-known/agent-card.json", srv.AgentCard())
	mux.Handle("/rpc", srv.JSONRPC())
	mux.Handle("/rest/", http.StripPrefix("/rest", srv.HTTPJSON()))
	return &a2aHost{url: ts.URL, host: host}
}

// mcpHost is the MCP server over the test host at /mcp.
type mcpHost struct {
	url  string
	host *unitHost
}

func newMCPHost(t testing.TB) *mcpHost {
	t.Helper()
	store, host := newUnitStore(t)
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision})
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := sealed.NewSealer(sealed.Config{Key: []byte(strings.Repeat("k", sealed.MinKeyLen))})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.New(mcp.Deps{
		Store: host, Subjects: bearerSubjects, Policy: policy, Sealer: sealer,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
	}, mcp.Options{ServerInfo: mcp.Implementation{Name: "unit-host", Version: "1.0.0"}, BlockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return &mcpHost{url: ts.URL, host: host}
}

// exchangeLog records the A2A-Extensions header of every request and
// response that passes through it.
type exchangeLog struct {
	base http.RoundTripper
	mu   sync.Mutex
	sent [][]string // request A2A-Extensions per exchange
	echo [][]string // response A2A-Extensions per exchange
}

func (l *exchangeLog) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.base.RoundTrip(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, slices.Clone(r.Header.Values("A2A-Extensions")))
	if err == nil {
		l.echo = append(l.echo, slices.Clone(res.Header.Values("A2A-Extensions")))
	} else {
		l.echo = append(l.echo, nil)
	}
	return res, err
}

// lastExchange is what the latest exchange requested and echoed.
func (l *exchangeLog) lastExchange() (sent, echo []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sent) == 0 {
		return nil, nil
	}
	return l.sent[len(l.sent)-1], l.echo[len(l.echo)-1]
}
