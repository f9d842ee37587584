package remote

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

// listedNames are the names of listed tools.
func listedNames(ts []ListedTool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Tool.Name
	}
	return out
}

// TestReview: a review negotiates like Connect and lists every tool the
// server offers with the digest an admission pins it by, whatever the
// admission names; its one record is a host event of the scope's tenant,
// none on any run. A server offering only 2025-06-18 is refused below the
// floor with only server/discover on the wire; an admission that is not
// well formed is refused before anything is sent.
func TestReview(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	f := peerFixture(t, p, []string{mcppeers.Echo})
	a := Admission{Alias: "review", Endpoint: p.URL, Tools: []AdmittedTool{{Name: "ignored", Digest: strings.Repeat("0", 64)}}}
	listed, err := f.client.Review(context.Background(), negotiate.Scope{Tenant: "acme"}, a)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tl := range mcppeers.DefaultTools() {
		want = append(want, tl.Name)
		i := slices.IndexFunc(listed, func(l ListedTool) bool { return l.Tool.Name == tl.Name })
		if i < 0 || listed[i].Digest != ToolDigest(tl) {
			t.Fatalf("%s listed as %+v, want digest %s", tl.Name, listed, ToolDigest(tl))
		}
	}
	if got := listedNames(listed); len(got) != len(want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	f.sink.mu.Lock()
	hosts, runs := f.sink.host, len(f.sink.runs)
	f.sink.mu.Unlock()
	if len(hosts) != 1 || hosts[0].Type != string(interop.EventNegotiationDecided) || runs != 0 ||
		!strings.Contains(string(hosts[0].Payload), `"outcome":"accepted"`) {
		t.Fatalf("host events %+v, %d run logs; want one accepted record as a host event", hosts, runs)
	}
	if got, _ := f.client.Admission("review"); got.Alias != "" {
		t.Fatal("the reviewed server was registered")
	}

	legacy := mcppeers.StartGo(t, mcppeers.Script{Revisions: []string{"2025-06-18"}})
	lf := peerFixture(t, legacy, nil)
	_, err = lf.client.Review(context.Background(), negotiate.Scope{RunID: runID}, Admission{Alias: "old", Endpoint: legacy.URL})
	wantProjection(t, err, http.StatusBadRequest, outbound.CodeVersionUnsupported, map[string]any{"protocol": "mcp", "runId": runID})
	if r, _ := lf.sink.onlyRecord(t, runID); r.Outcome != "refused" || r.Reason != "below-floor" {
		t.Fatalf("record %+v", r)
	}
	if reqs := legacy.Requests(); len(reqs) != 1 || reqs[0].Method != "server/discover" || reqs[0].ProtocolVersion != Revision {
		t.Fatalf("the server received %+v, want only server/discover at %s", reqs, Revision)
	}

	before := len(p.Requests())
	if _, err := f.client.Review(context.Background(), negotiate.Scope{}, Admission{Alias: "bad", Endpoint: "ftp://x"}); err == nil ||
		!strings.Contains(err.Error(), "Endpoint") {
		t.Fatalf("err = %v, want the endpoint refused", err)
	}
	if len(p.Requests()) != before {
		t.Fatal("a refused review reached a server")
	}
}

// TestAdmitTools: a session admitted with no tool lists none and calls
// none; Listed shows what the server offers; the tools admitted on the
// session from that review are callable as listed, the client's
// registered admission unchanged; a pin with another digest stays
// uncallable; a malformed list is refused and changes nothing.
func TestAdmitTools(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	f := peerFixture(t, p, nil)
	ctx := context.Background()
	sess := f.connect(t, ctx, runID, "peer")
	if tools, err := sess.Tools(ctx); err != nil || len(tools) != 0 {
		t.Fatalf("%q %v", toolNames(tools), err)
	}
	listed, err := sess.Listed(ctx)
	if err != nil || len(listed) != len(mcppeers.DefaultTools()) {
		t.Fatalf("%q %v", listedNames(listed), err)
	}
	var ae *AdmissionError
	if _, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Echo}); !errors.As(err, &ae) || ae.Problem != NotAdmitted {
		t.Fatalf("before admission: %v", err)
	}
	for _, bad := range [][]AdmittedTool{
		{{Name: mcppeers.Echo, Digest: "XYZ"}},
		{{Name: mcppeers.Echo, Digest: strings.Repeat("a", 64)}, {Name: mcppeers.Echo, Digest: strings.Repeat("a", 64)}},
		{{Digest: strings.Repeat("a", 64)}},
	} {
		if err := sess.AdmitTools(bad); err == nil {
			t.Fatalf("AdmitTools(%+v) accepted", bad)
		}
	}
	if len(sess.Admission.Tools) != 0 {
		t.Fatal("a refused AdmitTools changed the admission")
	}
	var pins []AdmittedTool
	for _, l := range listed {
		switch l.Tool.Name {
		case mcppeers.Echo:
			pins = append(pins, AdmittedTool{Name: l.Tool.Name, Digest: l.Digest})
		case mcppeers.Fails:
			pins = append(pins, AdmittedTool{Name: l.Tool.Name, Digest: strings.Repeat("0", 64)}) // not as listed
		}
	}
	if err := sess.AdmitTools(pins); err != nil {
		t.Fatal(err)
	}
	if tools, err := sess.Tools(ctx); err != nil || !slices.Equal(toolNames(tools), []string{mcppeers.Echo}) {
		t.Fatalf("%q %v", toolNames(tools), err)
	}
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Echo, Arguments: []byte(`{"x":1}`)})
	if err != nil || out.Result == nil || string(out.Result.Structured) != `{"x":1}` {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Fails}); !errors.As(err, &ae) || ae.Problem != Changed {
		t.Fatalf("a pin with another digest: %v", err)
	}
	if a, _ := f.client.Admission("peer"); len(a.Tools) != 0 {
		t.Fatalf("the registered admission changed: %+v", a.Tools)
	}
	if n := len(p.Calls("tools/call")); n != 1 {
		t.Fatalf("%d tools/call, want the one admitted call", n)
	}
}
