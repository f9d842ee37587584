package hostapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/internal/version"
	"github.com/wopinterop/wopinterop/mcp/remote"
)

// suiteRevisions are the revisions the OpenWOP suite's fake MCP server
// speaks: the current one and the legacy one.
var suiteRevisions = []string{remote.Revision, "2025-06-18"}

// seamTraceparent is the W3C trace context a caller of the seam sends.
const seamTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// invokeMCP calls the mcp seam as acme with body.
func (h *testHost) invokeMCP(body string) response {
	h.t.Helper()
	return h.post(mcpInvokePath, acmeKey, body)
}

// onlyMCPRecord is the one negotiation.decided of a log, an MCP one.
func onlyMCPRecord(t *testing.T, records []decided) decided {
	t.Helper()
	if len(records) != 1 {
		t.Fatalf("%d negotiation.decided records, want exactly one: %+v", len(records), records)
	}
	if r := records[0]; r.Protocol != "mcp" || !hex64.MatchString(r.PeerDigest) || r.Floor != remote.Revision {
		t.Fatalf("record %+v, want protocol mcp, floor %s and a 64-hex peerDigest", r, remote.Revision)
	}
	return records[0]
}

// mcpMethods are the JSON-RPC methods a server received, in order.
func mcpMethods(p *mcppeers.Server) []string {
	var out []string
	for _, q := range p.Requests() {
		out = append(out, q.Method)
	}
	return out
}

// hostOf is a server's host:port, which no log, record or answer may name.
func hostOf(url string) string { return strings.TrimPrefix(url, "http://") }

// TestMCPInvokeSeamAccepted: against a go-sdk server speaking the suite
// fake's revisions the seam answers 200 {negotiatedVersion, runId} (golden
// bytes), the run's log holds exactly one negotiation.decided — accepted
// at 2026-07-28, a 64-hex peerDigest, no server host in clear — and the
// run completed; without a tool the server got server/discover alone, at
// 2026-07-28, with the host's credential.
func TestMCPInvokeSeamAccepted(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{Revisions: suiteRevisions})
	h := newTestHost(t, withSeams, withPeerAllow(p.Base))
	r := h.do(req{Method: "POST", Path: mcpInvokePath, Key: acmeKey, Body: `{"serverUrl":"` + p.URL + `"}`,
		Headers: map[string]string{"traceparent": seamTraceparent}})
	wantStatus(t, r, http.StatusOK)
	got := decode[mcpInvokedView](t, r)
	if got.NegotiatedVersion != remote.Revision || !strings.HasPrefix(got.RunID, tenantAcme+"/") || got.MRTR != nil {
		t.Fatalf("seam answered %s", r.Body)
	}
	golden.Check(t, "mcp-invoke-accepted.json", normalizeRun(r.Body, got.RunID))

	events, records := h.runLog(got.RunID, hostOf(p.Base), "127.0.0.1")
	if rec := onlyMCPRecord(t, records); rec.Outcome != "accepted" || rec.Version != remote.Revision || rec.Requested != remote.Revision || rec.Reason != "ok" {
		t.Fatalf("record %+v", rec)
	}
	if last := events[len(events)-1]; last.Type != "run.completed" || !strings.Contains(string(last.Payload), `"negotiatedVersion":"`+remote.Revision+`"`) {
		t.Fatalf("run ends with %s %s", last.Type, last.Payload)
	}
	reqs := p.Requests()
	if len(reqs) != 1 || reqs[0].Method != "server/discover" || reqs[0].ProtocolVersion != remote.Revision || !strings.HasPrefix(reqs[0].Authorization, "Bearer ") {
		t.Fatalf("the server got %+v, want server/discover alone at %s with a bearer credential", reqs, remote.Revision)
	}
	// The run continues the caller's trace (OpenWOP interop.md §Trace
	// context): the same trace id, in the header and in _meta.
	traceID := strings.Split(seamTraceparent, "-")[1]
	if q := reqs[0]; !strings.Contains(q.Traceparent, traceID) || !strings.Contains(q.MetaString("traceparent"), traceID) {
		t.Fatalf("server/discover carried traceparent %q / %q, want trace %s", q.Traceparent, q.MetaString("traceparent"), traceID)
	}
	if strings.Contains(h.logs.String(), strings.TrimPrefix(reqs[0].Authorization, "Bearer ")) {
		t.Error("the seam's credential reached the log")
	}
}

// TestMCPInvokeSeamCall: with a tool, the server's tools are admitted as
// listed and the tool is called once: echo completes without an mrtr
// block, its result the run's output; needs_input, with elicitation
// declared and an answer given, is answered once — the retry carries the
// server's requestState byte for byte and the answer under the server's
// key — and the seam reports the round (golden bytes).
func TestMCPInvokeSeamCall(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{Revisions: suiteRevisions})
	h := newTestHost(t, withSeams, withPeerAllow(p.Base))

	r := h.invokeMCP(`{"serverUrl":"` + p.URL + `","tool":"echo","arguments":{"text":"hi"}}`)
	wantStatus(t, r, http.StatusOK)
	got := decode[mcpInvokedView](t, r)
	if got.MRTR != nil {
		t.Fatalf("an echo reported input rounds: %s", r.Body)
	}
	h.runLog(got.RunID, hostOf(p.Base))
	snap := decode[snapshot](t, h.get(projected(got.RunID), acmeKey))
	if snap.Status != "completed" || !strings.Contains(string(snap.Outputs), `"structuredContent":{"text":"hi"}`) {
		t.Fatalf("run %s outputs %s", snap.Status, snap.Outputs)
	}
	// The review lists the tools; the call checks its tool's digest
	// against the list again (the server marks its list uncacheable).
	if m := mcpMethods(p); strings.Join(m, ",") != "server/discover,tools/list,tools/list,tools/call" {
		t.Fatalf("the server got %q", m)
	}

	before := len(p.Calls("tools/call"))
	r = h.invokeMCP(`{"serverUrl":"` + p.URL + `","tool":"needs_input","clientCapabilities":{"elicitation":{}},"elicitationAnswer":{"name":"Ada"}}`)
	wantStatus(t, r, http.StatusOK)
	got = decode[mcpInvokedView](t, r)
	if got.MRTR == nil || !got.MRTR.InputRequiredSeen || !got.MRTR.Retried || !got.MRTR.RequestStateEchoed {
		t.Fatalf("seam answered %s", r.Body)
	}
	golden.Check(t, "mcp-invoke-mrtr.json", normalizeRun(r.Body, got.RunID))
	_, records := h.runLog(got.RunID, hostOf(p.Base))
	onlyMCPRecord(t, records)
	calls := p.Calls("tools/call")[before:]
	if len(calls) != 2 {
		t.Fatalf("%d tools/call, want the call and its one retry", len(calls))
	}
	var retry struct {
		RequestState   *string `json:"requestState"`
		InputResponses map[string]struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		} `json:"inputResponses"`
	}
	if err := json.Unmarshal(calls[1].Params, &retry); err != nil {
		t.Fatal(err)
	}
	if retry.RequestState == nil || *retry.RequestState != mcppeers.NeedsInputState {
		t.Fatalf("the retry's requestState %s, want the server's byte for byte", calls[1].Params)
	}
	if a := retry.InputResponses[mcppeers.NeedsInputKey]; len(retry.InputResponses) != 1 || a.Action != "accept" || a.Content["name"] != "Ada" {
		t.Fatalf("inputResponses %+v", retry.InputResponses)
	}
	if bytes.Equal(calls[0].ID, calls[1].ID) {
		t.Fatalf("the retry reused the JSON-RPC id %s", calls[1].ID)
	}
	snap = decode[snapshot](t, h.get(projected(got.RunID), acmeKey))
	if snap.Status != "completed" || !strings.Contains(string(snap.Outputs), fmt.Sprintf(mcppeers.GreetingFormat, "Ada")) {
		t.Fatalf("run %s outputs %s", snap.Status, snap.Outputs)
	}

	// Without elicitation declared nothing is answered: the server refuses
	// the call (-32021) and the seam says so in the envelope.
	r = h.invokeMCP(`{"serverUrl":"` + p.URL + `","tool":"needs_input","elicitationAnswer":{"name":"Ada"}}`)
	d := wantError(t, r, http.StatusUnprocessableEntity, "capability_required")
	if d["protocol"] != "mcp" || d["runId"] == nil {
		t.Fatalf("details %v", d)
	}
}

// TestMCPInvokeSeamRoundsExceeded: a server that keeps asking is refused
// at the host's ceiling (mrtr.maxRounds 4) before the retry past it is
// sent: 422 mcp_mrtr_rounds_exceeded naming the run (golden bytes), the
// server saw 5 calls, the run failed with that code and holds its one
// accepted record.
func TestMCPInvokeSeamRoundsExceeded(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{Revisions: suiteRevisions})
	h := newTestHost(t, withSeams, withPeerAllow(p.Base))
	r := h.invokeMCP(`{"serverUrl":"` + p.URL + `","tool":"needs_input_loop","arguments":{"rounds":9},"clientCapabilities":{"elicitation":{}},"elicitationAnswer":{"name":"Ada"}}`)
	d := wantError(t, r, http.StatusUnprocessableEntity, "mcp_mrtr_rounds_exceeded")
	runID, _ := d["runId"].(string)
	if d["protocol"] != "mcp" || !strings.HasPrefix(runID, tenantAcme+"/") {
		t.Fatalf("details %v", d)
	}
	golden.Check(t, "mcp-invoke-rounds.json", normalizeRun(r.Body, runID))
	if n := len(p.Calls("tools/call")); n != mcpMaxRounds+1 {
		t.Fatalf("the server saw %d calls, want maxRounds + 1 = %d", n, mcpMaxRounds+1)
	}
	events, records := h.runLog(runID, hostOf(p.Base))
	if rec := onlyMCPRecord(t, records); rec.Outcome != "accepted" {
		t.Fatalf("record %+v", rec)
	}
	if last := events[len(events)-1]; last.Type != "run.failed" || last.str("error.code") != "mcp_mrtr_rounds_exceeded" {
		t.Fatalf("run ends with %s %s", last.Type, last.Payload)
	}
}

// TestMCPInvokeSeamBelowFloor: a server offering only 2025-06-18 — a
// legacy server without server/discover, a go-sdk server listing only
// that revision — and a call asking for it are refused: 400
// interop_version_unsupported with exactly details {runId, protocol: mcp}
// (golden bytes), one record refused/below-floor on that run's log, the
// run failed, and nothing at 2025-06-18 on the wire: server/discover at
// 2026-07-28 at most, no initialize.
func TestMCPInvokeSeamBelowFloor(t *testing.T) {
	legacy := mcppeers.StartLegacy(t, "2025-06-18")
	only := mcppeers.StartGo(t, mcppeers.Script{Revisions: []string{"2025-06-18"}})
	dual := mcppeers.StartGo(t, mcppeers.Script{Revisions: suiteRevisions})
	h := newTestHost(t, withSeams, withPeerAllow(legacy.Base, only.Base, dual.Base))
	for name, tc := range map[string]struct {
		body     string
		server   *mcppeers.Server
		requests int
	}{
		"legacy server":          {`{"serverUrl":"` + legacy.URL + `","tool":"echo"}`, legacy, 1},
		"2025-06-18 only":        {`{"serverUrl":"` + only.URL + `","authenticated":true}`, only, 1},
		"requestVersion":         {`{"serverUrl":"` + dual.URL + `","requestVersion":"2025-06-18"}`, dual, 0},
		"requestVersion, a tool": {`{"serverUrl":"` + dual.URL + `","requestVersion":"2025-06-18","tool":"echo"}`, dual, 0},
	} {
		t.Run(name, func(t *testing.T) {
			before := len(tc.server.Requests())
			r := h.invokeMCP(tc.body)
			d := wantError(t, r, http.StatusBadRequest, "interop_version_unsupported")
			runID, _ := d["runId"].(string)
			if len(d) != 2 || d["protocol"] != "mcp" || !strings.HasPrefix(runID, tenantAcme+"/") {
				t.Fatalf("details %v, want exactly runId and protocol", d)
			}
			golden.Check(t, "mcp-invoke-below-floor.json", normalizeRun(r.Body, runID))
			events, records := h.runLog(runID, hostOf(tc.server.Base))
			if rec := onlyMCPRecord(t, records); rec.Outcome != "refused" || rec.Reason != "below-floor" || rec.Version != "" {
				t.Fatalf("record %+v", rec)
			}
			if last := events[len(events)-1]; last.Type != "run.failed" || last.str("error.code") != "interop_version_unsupported" {
				t.Fatalf("run ends with %s %s", last.Type, last.Payload)
			}
			reqs := tc.server.Requests()[before:]
			if len(reqs) != tc.requests {
				t.Fatalf("the server got %d requests, want %d", len(reqs), tc.requests)
			}
			for _, q := range reqs {
				if q.Method != "server/discover" || q.ProtocolVersion != remote.Revision {
					t.Fatalf("the server got %s at %q: only server/discover at %s may go out", q.Method, q.ProtocolVersion, remote.Revision)
				}
			}
		})
	}
}

// TestMCPInvokeSeamUnauthenticated: an unauthenticated exchange never goes
// below the preferred revision — refused (below-floor, or
// unauthenticated) with no credential presented — and toward a current
// server it is accepted without one.
func TestMCPInvokeSeamUnauthenticated(t *testing.T) {
	only := mcppeers.StartGo(t, mcppeers.Script{Revisions: []string{"2025-06-18"}})
	ok := mcppeers.StartGo(t, mcppeers.Script{Revisions: suiteRevisions})
	h := newTestHost(t, withSeams, withPeerAllow(only.Base, ok.Base))
	r := h.invokeMCP(`{"serverUrl":"` + only.URL + `","authenticated":false}`)
	d := wantError(t, r, http.StatusBadRequest, "interop_version_unsupported")
	_, records := h.runLog(d["runId"].(string))
	if rec := onlyMCPRecord(t, records); rec.Outcome != "refused" || (rec.Reason != "below-floor" && rec.Reason != "unauthenticated") {
		t.Fatalf("record %+v", rec)
	}
	wantStatus(t, h.invokeMCP(`{"serverUrl":"`+ok.URL+`","authenticated":false,"tool":"echo"}`), http.StatusOK)
	for _, p := range []*mcppeers.Server{only, ok} {
		for _, q := range p.Requests() {
			if q.Authorization != "" {
				t.Fatalf("%s carried Authorization %q", q.Method, q.Authorization)
			}
		}
	}
}

// TestMCPInvokeSeamEgressGuard: a local server outside -peer-allow is
// refused by the egress guard before any request: 403 forbidden naming the
// run (golden bytes, no server host), which failed with no negotiation
// record, and the server saw nothing.
func TestMCPInvokeSeamEgressGuard(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	h := newTestHost(t, withSeams)
	r := h.invokeMCP(`{"serverUrl":"` + p.URL + `","tool":"echo"}`)
	d := wantError(t, r, http.StatusForbidden, "forbidden")
	runID, _ := d["runId"].(string)
	if len(d) != 2 || d["protocol"] != "mcp" || runID == "" {
		t.Fatalf("details %v", d)
	}
	golden.Check(t, "mcp-invoke-egress.json", normalizeRun(r.Body, runID))
	if strings.Contains(string(r.Body), hostOf(p.Base)) {
		t.Fatalf("the refusal names the server: %s", r.Body)
	}
	events, records := h.runLog(runID, hostOf(p.Base))
	if len(records) != 0 || events[len(events)-1].Type != "run.failed" {
		t.Fatalf("run log %+v", events)
	}
	if q := p.Requests(); len(q) != 0 {
		t.Fatalf("the server got %d requests", len(q))
	}
}

// TestMCPInvokeSeamOff: without -conformance-seams the path is an unknown
// route, byte for byte, and nothing is reached.
func TestMCPInvokeSeamOff(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	h := newTestHost(t, withPeerAllow(p.Base))
	r := h.invokeMCP(`{"serverUrl":"` + p.URL + `"}`)
	wantError(t, r, http.StatusNotFound, codeNotFound)
	if string(r.Body) != `{"error":"not_found","message":"no such resource"}`+"\n" {
		t.Errorf("seam while off: %s", r.Body)
	}
	if q := p.Requests(); len(q) != 0 {
		t.Fatalf("the server got %d requests", len(q))
	}
}

// TestMCPInvokeSeamBadInput: a body the seam cannot use is a 400
// validation_error naming the member (golden bytes), and creates no run.
func TestMCPInvokeSeamBadInput(t *testing.T) {
	h := newTestHost(t, withSeams)
	const ok = `"serverUrl":"https://mcp.example/mcp"`
	for body, field := range map[string]string{
		`{}`:                                "serverUrl",
		`{"serverUrl":"/relative"}`:         "serverUrl",
		`{"serverUrl":"ftp://mcp.example"}`: "serverUrl",
		`{"serverUrl":"https://u:p@mcp.example"}`:                  "serverUrl",
		`{"serverUrl":"https://mcp.example/#x"}`:                   "serverUrl",
		`{"serverUrl":7}`:                                          "serverUrl",
		`{` + ok + `,"authenticated":"yes"}`:                       "authenticated",
		`{` + ok + `,"requestVersion":"latest"}`:                   "requestVersion",
		`{` + ok + `,"requestVersion":"1.0"}`:                      "requestVersion",
		`{` + ok + `,"tool":["echo"]}`:                             "tool",
		`{` + ok + `,"arguments":"x"}`:                             "arguments",
		`{` + ok + `,"arguments":[1]}`:                             "arguments",
		`{` + ok + `,"clientCapabilities":true}`:                   "clientCapabilities",
		`{` + ok + `,"clientCapabilities":{"elicitation":"form"}}`: "clientCapabilities",
		`{` + ok + `,"elicitationAnswer":"Ada"}`:                   "elicitationAnswer",
		`{` + ok + `,"tenant":"globex"}`:                           "tenant",
	} {
		r := h.invokeMCP(body)
		if d := wantError(t, r, http.StatusBadRequest, codeValidation); d["field"] != field {
			t.Errorf("%s: details %v, want field %s", body, d, field)
		}
	}
	golden.Check(t, "mcp-invoke-validation.json", h.invokeMCP(`{"serverUrl":"/relative"}`).Body)
	wantError(t, h.do(req{Method: "POST", Path: mcpInvokePath, Key: acmeKey, Body: `{` + ok + `}`, Type: "text/plain"}),
		http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	wantError(t, h.post(mcpInvokePath, "", `{`+ok+`}`), http.StatusUnauthorized, codeUnauthenticated)
	runs := decode[struct {
		Runs []snapshot `json:"runs"`
	}](t, h.get("/runs", acmeKey))
	if len(runs.Runs) != 0 {
		t.Fatalf("refused calls created %d runs", len(runs.Runs))
	}
}

// TestMCPInvokeSeamWorkflowHidden: the mcp seam's workflow is on no
// surface: not an MCP tool, not listed, and starting it is answered as for
// a workflow that does not exist.
func TestMCPInvokeSeamWorkflowHidden(t *testing.T) {
	h := newTestHost(t, withSeams)
	rr, dec := h.mcp(mcpReq{Key: acmeKey, Method: "tools/list"})
	wantStatus(t, rr, http.StatusOK)
	if got := mcpTools(dec.Result); strings.Join(got, ",") != strings.Join(workflowIDs(tenantAcme, h.url), ",") {
		t.Errorf("MCP tools with the seams on: %v", got)
	}
	hidden := h.post("/runs", acmeKey, `{"workflowId":"`+mcpSeamWorkflowID+`","inputs":{"call":"x"}}`)
	unknown := h.post("/runs", acmeKey, `{"workflowId":"no-such-workflow","inputs":{"call":"x"}}`)
	if hidden.Status != unknown.Status || !bytes.Equal(hidden.Body, unknown.Body) {
		t.Errorf("starting the hidden workflow: %d %s; an unknown one: %d %s", hidden.Status, hidden.Body, unknown.Status, unknown.Body)
	}
}

// suiteServer is an MCP server shaped like the OpenWOP suite's seam peers
// (its reference host's seam tests): server/discover answers
// {resultType: complete, supportedVersions, capabilities: {}} — no tools
// capability, so no list — needs_input asks for "who" once under
// requestState "mrtr:needs_input:1" and greets the name answered; with
// loop set every other request is answered input_required, with a
// requestState counting them.
type suiteServer struct {
	srv  *httptest.Server
	loop bool
	mu   sync.Mutex
	seen []suiteCall // every request but server/discover
}

type suiteCall struct {
	Method  string
	Version string
	Params  json.RawMessage
}

func startSuiteServer(t *testing.T, loop bool) *suiteServer {
	s := &suiteServer{loop: loop}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *suiteServer) serve(w http.ResponseWriter, r *http.Request) {
	var rpc struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	_ = json.NewDecoder(r.Body).Decode(&rpc)
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(rpc.ID)+`,"result":`+result+`}`)
	}
	if rpc.Method == "server/discover" {
		reply(`{"resultType":"complete","supportedVersions":["2026-07-28","2025-06-18"],"capabilities":{}}`)
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, suiteCall{Method: rpc.Method, Version: r.Header.Get("MCP-Protocol-Version"), Params: rpc.Params})
	n := len(s.seen)
	s.mu.Unlock()
	var p struct {
		Name           string `json:"name"`
		InputResponses map[string]struct {
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		} `json:"inputResponses"`
	}
	_ = json.Unmarshal(rpc.Params, &p)
	switch {
	case s.loop:
		reply(`{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{}}},"requestState":"loop:` + strconv.Itoa(n) + `"}`)
	case p.Name == "needs_input" && p.InputResponses["who"].Content.Name != "":
		reply(`{"resultType":"complete","content":[{"type":"text","text":"hello ` + p.InputResponses["who"].Content.Name + `"}],"isError":false}`)
	case p.Name == "needs_input":
		reply(`{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"mode":"form","message":"What is your name?","requestedSchema":{}}}},"requestState":"mrtr:needs_input:1"}`)
	default:
		reply(`{"resultType":"complete","content":[{"type":"text","text":"ok"}],"isError":false}`)
	}
}

func (s *suiteServer) calls() []suiteCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]suiteCall(nil), s.seen...)
}

// TestMCPInvokeSeamSuiteServer: the suite's seam peers, which declare no
// tools capability (and so are never asked for a list), are met as the
// suite expects: {serverUrl} → 200 at 2026-07-28 with one accepted record;
// needs_input answered once with the state echoed → 200 with the mrtr
// block; a server that keeps asking → 422 mcp_mrtr_rounds_exceeded after
// at most 5 calls.
func TestMCPInvokeSeamSuiteServer(t *testing.T) {
	s := startSuiteServer(t, false)
	loop := startSuiteServer(t, true)
	h := newTestHost(t, withSeams, withPeerAllow(s.srv.URL, loop.srv.URL))

	r := h.invokeMCP(`{"serverUrl":"` + s.srv.URL + `"}`)
	wantStatus(t, r, http.StatusOK)
	got := decode[mcpInvokedView](t, r)
	if got.NegotiatedVersion != remote.Revision {
		t.Fatalf("seam answered %s", r.Body)
	}
	_, records := h.runLog(got.RunID, hostOf(s.srv.URL))
	if rec := onlyMCPRecord(t, records); rec.Outcome != "accepted" || rec.Version != remote.Revision {
		t.Fatalf("record %+v", rec)
	}

	r = h.invokeMCP(`{"serverUrl":"` + s.srv.URL + `","tool":"needs_input","clientCapabilities":{"elicitation":{}},"elicitationAnswer":{"name":"Ada"}}`)
	wantStatus(t, r, http.StatusOK)
	got = decode[mcpInvokedView](t, r)
	if got.MRTR == nil || !got.MRTR.InputRequiredSeen || !got.MRTR.RequestStateEchoed {
		t.Fatalf("seam answered %s", r.Body)
	}
	calls := s.calls()
	if len(calls) != 2 || calls[0].Method != "tools/call" || calls[1].Method != "tools/call" ||
		!strings.Contains(string(calls[1].Params), `"requestState":"mrtr:needs_input:1"`) ||
		!strings.Contains(string(calls[1].Params), `"inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}}`) {
		t.Fatalf("the server got %+v", calls)
	}
	for _, c := range calls {
		if c.Version != remote.Revision {
			t.Fatalf("a call at %q", c.Version)
		}
	}

	r = h.invokeMCP(`{"serverUrl":"` + loop.srv.URL + `/mcp","tool":"needs_input_loop","arguments":{"rounds":9},"clientCapabilities":{"elicitation":{}},"elicitationAnswer":{"name":"Ada"}}`)
	wantError(t, r, http.StatusUnprocessableEntity, "mcp_mrtr_rounds_exceeded")
	if n := len(loop.calls()); n > 5 {
		t.Fatalf("the server saw %d requests, want at most 5", n)
	}
}

// FuzzMCPInvokeBody: the seam's body decoder never panics, refuses only
// with a validation_error, and what it accepts is usable: an http(s)
// endpoint, an MCP revision or none, object arguments.
func FuzzMCPInvokeBody(f *testing.F) {
	for _, s := range []string{
		`{"serverUrl":"http://127.0.0.1:9/mcp"}`,
		`{"serverUrl":"https://mcp.example/mcp?x=1","authenticated":false,"requestVersion":"2025-06-18","tool":"echo","arguments":{"text":"hi"}}`,
		`{"serverUrl":"https://mcp.example","clientCapabilities":{"elicitation":{"form":{},"url":{}}},"elicitationAnswer":{"name":"Ada"}}`,
		`{"serverUrl":"https://mcp.example","clientCapabilities":{"sampling":{}},"authenticated":null}`,
		`{"serverUrl":1}`, `[]`, `{"serverUrl":"x","serverUrl":"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		members, err := decodeObject(body, mcpInvokeMembers...)
		if err != nil {
			return
		}
		call, err := parseMCPInvoke(members)
		if err != nil {
			if e, ok := err.(*apiError); !ok || e.Status != http.StatusBadRequest || e.Code != codeValidation {
				t.Fatalf("refusal %v is not a validation_error", err)
			}
			return
		}
		if !strings.HasPrefix(call.Endpoint, "http://") && !strings.HasPrefix(call.Endpoint, "https://") {
			t.Fatalf("endpoint %q", call.Endpoint)
		}
		if call.Revision != "" && !version.Date(call.Revision) {
			t.Fatalf("revision %q", call.Revision)
		}
		if len(call.Arguments) > 0 && call.Arguments[0] != '{' {
			t.Fatalf("arguments %s", call.Arguments)
		}
	})
}
