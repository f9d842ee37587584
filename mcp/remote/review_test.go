package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
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

// bareServer is a 2026-07-28 server shaped like the OpenWOP suite's round
// ceiling peer: server/discover declares no capability at all, and every
// other request — tools/list included — is answered input_required with
// a requestState that counts the requests.
type bareServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	other []string // the method of every request but server/discover
}

func startBareServer(t *testing.T) *bareServer {
	b := &bareServer{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rpc struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&rpc)
		w.Header().Set("Content-Type", "application/json")
		if rpc.Method == "server/discover" {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(rpc.ID)+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}}`)
			return
		}
		b.mu.Lock()
		b.other = append(b.other, rpc.Method)
		n := len(b.other)
		b.mu.Unlock()
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(rpc.ID)+`,"result":{"resultType":"input_required",`+
			`"inputRequests":{"who":{"method":"elicitation/create","params":{}}},"requestState":"loop:`+strconv.Itoa(n)+`"}}`)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *bareServer) methods() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.other)
}

// TestAdmitUnlisted: a server that declares no tools capability has no
// list to pin from; a tool admitted on the session by name is called
// without a tools/list before it — here into the round ceiling, refused
// after maxRounds + 1 calls — while a tool not admitted is refused with
// nothing sent. A server that declares tools refuses the name-only
// admission.
func TestAdmitUnlisted(t *testing.T) {
	b := startBareServer(t)
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{b.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := New(Deps{Policy: mcpPolicy(t), Events: newSink(), Guard: g, MaxRounds: 4,
		Admissions: []Admission{{Alias: "bare", Endpoint: b.srv.URL + "/mcp"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := client.Connect(ctx, runID, "bare")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if sess.DeclaresTools() {
		t.Fatal("a server with capabilities {} declares tools")
	}
	var ae *AdmissionError
	if _, err := sess.Call(ctx, CallRequest{Tool: "needs_input_loop"}); !errors.As(err, &ae) || ae.Problem != NotAdmitted || len(b.methods()) != 0 {
		t.Fatalf("before admission: %v, the server got %q", err, b.methods())
	}
	if err := sess.AdmitUnlisted(""); err == nil {
		t.Fatal("an empty name was admitted")
	}
	if err := sess.AdmitUnlisted("needs_input_loop"); err != nil {
		t.Fatal(err)
	}
	answer := func(context.Context, InputRound) (map[string]*mcp.ElicitResult, error) {
		return map[string]*mcp.ElicitResult{"who": {Action: "accept", Content: map[string]any{"name": "Ada"}}}, nil
	}
	out, err := sess.Call(ctx, CallRequest{Tool: "needs_input_loop", Elicitation: &mcp.ElicitationCapabilities{}, Decide: answer})
	if !errors.Is(err, ErrRoundsExceeded) || out == nil || out.Calls != 5 {
		t.Fatalf("%+v %v, want the ceiling after 5 calls", out, err)
	}
	if got := b.methods(); !slices.Equal(got, []string{"tools/call", "tools/call", "tools/call", "tools/call", "tools/call"}) {
		t.Fatalf("the server got %q, want five tools/call and no list", got)
	}
	if _, err := sess.Call(ctx, CallRequest{Tool: "other"}); !errors.As(err, &ae) || ae.Problem != NotAdmitted {
		t.Fatalf("another tool: %v", err)
	}

	p := mcppeers.StartGo(t, mcppeers.Script{})
	f := peerFixture(t, p, nil)
	listing := f.connect(t, ctx, runID, "peer")
	if !listing.DeclaresTools() || listing.AdmitUnlisted(mcppeers.Echo) == nil {
		t.Fatal("a server declaring tools took a name-only admission")
	}
}
