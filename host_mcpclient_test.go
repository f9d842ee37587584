package wopinterop_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/remote"
	"github.com/wopinterop/wopinterop/negotiate"
)

// localGuard is an egress guard that lets the client reach origins.
func localGuard(t *testing.T, origins ...string) *egress.Guard {
	t.Helper()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: origins})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestMCPClientFacet: the mcp record claims client (OpenWOP RFC 0204)
// exactly when the host configures its MCP client, which New then builds
// with the record's round ceiling; without one the record has no client
// member at all and there is no client. A client configuration that
// cannot back the claim is refused, naming the field.
func TestMCPClientFacet(t *testing.T) {
	cfg := mcpConfig(validConfig(newStore(t)))
	h := newHost(t, cfg)
	if rec := string(h.Records()["mcp"]); strings.Contains(rec, "client") || h.MCPClient() != nil {
		t.Fatalf("without MCPConfig.Client: record %s, client %v", rec, h.MCPClient())
	}

	cfg = mcpConfig(validConfig(newStore(t)))
	cfg.MCP.Server.MaxRounds = 4
	cfg.MCP.Client = &wopinterop.MCPClientConfig{Guard: localGuard(t)}
	h = newHost(t, cfg)
	if rec := string(h.Records()["mcp"]); !strings.HasSuffix(rec, `"mrtr":{"maxRounds":4},"client":true}`) {
		t.Fatalf("with MCPConfig.Client: record %s", rec)
	}
	if c := h.MCPClient(); c == nil || c.MaxRounds() != 4 {
		t.Fatalf("client %v, want one with the record's ceiling 4", c)
	}

	for field, client := range map[string]*wopinterop.MCPClientConfig{
		"MCP.Client.Guard": {},
		"MCP.Client":       {Guard: localGuard(t), Admissions: []remote.Admission{{Alias: "x", Endpoint: "ftp://x"}}},
	} {
		cfg := mcpConfig(validConfig(newStore(t)))
		cfg.MCP.Client = client
		_, err := wopinterop.New(cfg)
		if got := configFields(err); len(got) != 1 || got[0] != field {
			t.Errorf("err = %v (fields %v), want a ConfigError naming %s", err, got, field)
		}
	}
}

// TestMCPClientCallsATool: the client New builds serves a workflow end to
// end — admitted from a review at start, its ToolCaller handed to a
// memstore workflow, which calls the tool on its run: the run completes
// with the tool's result, and its log holds the one negotiation.decided
// record at the record's revision, valid against the upstream schema.
func TestMCPClientCallsATool(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	store := newStore(t)
	cfg := mcpConfig(validConfig(store))
	cfg.MCP.Client = &wopinterop.MCPClientConfig{Guard: localGuard(t, p.Base)}
	h := newHost(t, cfg)
	client := h.MCPClient()
	ctx := context.Background()

	a := remote.Admission{Alias: "peer", Endpoint: p.URL}
	listed, err := client.Review(ctx, negotiate.Scope{}, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
		if l.Tool.Name == mcppeers.Echo {
			a.Tools = append(a.Tools, remote.AdmittedTool{Name: l.Tool.Name, Digest: l.Digest})
		}
	}
	if err := client.Admit(a); err != nil {
		t.Fatal(err)
	}
	if err := store.Register("acme", memstore.WorkflowDef{
		Workflow:   interop.Workflow{ID: "call-echo"},
		ToolCaller: client.ToolCaller(),
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			res, err := rc.CallTool(ctx, "peer", mcppeers.Echo, json.RawMessage(`{"say":"hi"}`))
			if err != nil {
				return nil, err
			}
			return res.Structured, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	sub := interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}
	run, _, err := store.CreateRun(ctx, sub, interop.CreateRunRequest{WorkflowID: "call-echo", Transport: interop.TransportREST})
	if err != nil {
		t.Fatal(err)
	}
	evs, final, err := store.PollEvents(ctx, sub, run.ID, -1, 0)
	for err == nil && !final.Status.Terminal() {
		var more []interop.RunEvent
		more, final, err = store.PollEvents(ctx, sub, run.ID, evs[len(evs)-1].Sequence, 0)
		evs = append(evs, more...)
	}
	if err != nil || final.Status != interop.StatusCompleted || string(final.Output) != `{"say":"hi"}` {
		t.Fatalf("run %s output %s: %v", final.Status, final.Output, err)
	}
	validate := sharedspec.RunEventValidator(t)
	decided := 0
	for _, ev := range evs {
		doc, _ := json.Marshal(ev)
		if err := validate(doc); err != nil {
			t.Errorf("%s: %v\n%s", ev.Type, err, doc)
		}
		if ev.Type == interop.EventNegotiationDecided {
			decided++
			if !strings.Contains(string(ev.Payload), `"outcome":"accepted","at":`) || !strings.Contains(string(ev.Payload), `"version":"`+remote.Revision+`"`) {
				t.Errorf("record %s", ev.Payload)
			}
		}
	}
	if decided != 1 {
		t.Fatalf("%d negotiation.decided records on the run's log, want one", decided)
	}
}
