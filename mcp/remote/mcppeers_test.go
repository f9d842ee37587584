package remote

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// peerFixture is a client over an internal/mcppeers server, admitting the
// named default tools as the server defines them.
func peerFixture(t *testing.T, p *mcppeers.Server, admitted []string, opts ...fixtureOpt) *fixture {
	t.Helper()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{p.Base}})
	if err != nil {
		t.Fatal(err)
	}
	a := Admission{Alias: "peer", Endpoint: p.URL, Tenant: "acme", Principal: "user-1"}
	for _, tl := range mcppeers.DefaultTools() {
		if slices.Contains(admitted, tl.Name) {
			a.Tools = append(a.Tools, AdmittedTool{Name: tl.Name, Digest: ToolDigest(tl)})
		}
	}
	f := &fixture{sink: newSink(), creds: &staticCredentials{values: map[string]string{}}, clock: &clock{now: testNow}}
	d := Deps{Policy: mcpPolicy(t), Events: f.sink, Guard: g, Credentials: f.creds, Admissions: []Admission{a}, MaxRounds: 4}
	o := Options{Now: f.clock.Now}
	for _, opt := range opts {
		opt(&d, &o)
	}
	if f.client, err = New(d, o); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMCPPeers drives the connection side against the scripted go-sdk
// servers the host-as-client tests share.
func TestMCPPeers(t *testing.T) {
	t.Run("accepted, projected, called", func(t *testing.T) {
		p := mcppeers.StartGo(t, mcppeers.Script{ListCache: mcppeers.PrivateList()})
		f := peerFixture(t, p, []string{mcppeers.Echo, mcppeers.Annotated})
		ctx := WithTraceContext(context.Background(), interop.TraceContext{TraceParent: traceparent})
		sess := f.connect(t, ctx, runID, "peer")
		tools, err := sess.Tools(ctx)
		if err != nil || !slices.Equal(toolNames(tools), []string{mcppeers.Annotated, mcppeers.Echo}) { // go-sdk lists by name
			t.Fatalf("%q %v", toolNames(tools), err)
		}
		if _, err := sess.Tools(ctx); err != nil { // cached: private, 60s
			t.Fatal(err)
		}
		if _, err := sess.admitted(ctx, mcppeers.NeedsInput); err == nil {
			t.Fatal("an unadmitted tool passed")
		}
		if _, err := sess.call.CallTool(ctx, &mcp.CallToolParams{Name: mcppeers.Echo, Arguments: map[string]any{"x": 1}}); err != nil {
			t.Fatal(err)
		}
		var methods []string
		for _, q := range p.Requests() {
			methods = append(methods, q.Method)
			if q.ProtocolVersion != Revision || q.Traceparent != traceparent || q.MetaString("traceparent") != traceparent {
				t.Errorf("%s: version %q, traceparent %q / %q", q.Method, q.ProtocolVersion, q.Traceparent, q.MetaString("traceparent"))
			}
		}
		if want := []string{"server/discover", "tools/list", "tools/call"}; !slices.Equal(methods, want) {
			t.Fatalf("the server received %q, want %q", methods, want)
		}
		if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "accepted" || r.PeerDigest != sha(p.Base) {
			t.Fatalf("record %+v", r)
		}
	})
	t.Run("2025-06-18 only", func(t *testing.T) {
		p := mcppeers.StartGo(t, mcppeers.Script{Revisions: []string{"2025-06-18"}})
		f := peerFixture(t, p, nil)
		_, err := f.client.Connect(context.Background(), runID, "peer")
		wantProjection(t, err, http.StatusBadRequest, outbound.CodeVersionUnsupported, map[string]any{"protocol": "mcp", "runId": runID})
		if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "refused" || r.Reason != "below-floor" {
			t.Fatalf("record %+v", r)
		}
		reqs := p.Requests()
		if len(reqs) != 1 || reqs[0].Method != "server/discover" || reqs[0].ProtocolVersion != Revision {
			t.Fatalf("the server received %+v, want only server/discover at %s", reqs, Revision)
		}
	})
	t.Run("schema changed", func(t *testing.T) {
		p := mcppeers.StartGo(t, mcppeers.Script{})
		f := peerFixture(t, p, []string{mcppeers.Echo})
		changed := mcppeers.DefaultTools()
		changed[0].Description += " And more."
		p.SetTools(changed)
		sess := f.connect(t, context.Background(), runID, "peer")
		if tools, err := sess.Tools(context.Background()); err != nil || len(tools) != 0 {
			t.Fatalf("%q %v", toolNames(tools), err)
		}
		var ae *AdmissionError
		if _, err := sess.admitted(context.Background(), mcppeers.Echo); !errors.As(err, &ae) || ae.Problem != Changed {
			t.Fatalf("%v", err)
		}
		if n := len(p.Calls("tools/call")); n != 0 {
			t.Fatalf("%d tools/call", n)
		}
	})
	t.Run("bearer", func(t *testing.T) {
		p := mcppeers.StartGo(t, mcppeers.Script{BearerToken: "tok-1"})
		f := peerFixture(t, p, []string{mcppeers.Echo})
		_, err := f.client.Connect(context.Background(), runID, "peer")
		wantProjection(t, err, http.StatusUnprocessableEntity, outbound.CodeCredentialRequired, map[string]any{"protocol": "mcp", "runId": runID})
		f = peerFixture(t, p, []string{mcppeers.Echo}, withCredential("peer-key", "tok-1"))
		sess := f.connect(t, context.Background(), runID+"B", "peer")
		if tools, err := sess.Tools(context.Background()); err != nil || len(tools) != 1 {
			t.Fatalf("%q %v", toolNames(tools), err)
		}
		for _, q := range p.Requests()[1:] {
			if q.Authorization != "Bearer tok-1" {
				t.Fatalf("%s without the credential", q.Method)
			}
		}
	})
}
