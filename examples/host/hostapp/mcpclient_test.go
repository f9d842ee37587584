package hostapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/remote"
)

// withMCPServer admits p as alias (-mcp-server) and lets the client reach
// it (-peer-allow).
func withMCPServer(alias string, p *mcppeers.Server) hostOption {
	return func(c *config) {
		c.MCPServers = append(c.MCPServers, mcpServerSpec{Alias: alias, Endpoint: p.URL})
		c.PeerAllow = append(c.PeerAllow, p.Base)
	}
}

// mcpClientRun starts conformance-mcp-client as acme with inputs.
func (h *testHost) mcpClientRun(inputs string) string {
	h.t.Helper()
	return h.start(acmeKey, mcpClientWorkflowID, inputs).RunID
}

// toolOutputs are conformance-mcp-client's decoded outputs: the server's
// tools/call result.
type toolOutputs struct {
	Result callResult `json:"result"`
}

// callResult is the part of a CallToolResult these tests read.
type callResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
}

// Text is the result's text blocks, joined by newlines.
func (r callResult) Text() string {
	var out []string
	for _, c := range r.Content {
		if c.Type == "text" {
			out = append(out, c.Text)
		}
	}
	return strings.Join(out, "\n")
}

// completedCall waits for a conformance-mcp-client run to complete, checks
// its log (every event valid, one accepted MCP record, no server host)
// and returns its outputs.
func (h *testHost) completedCall(runID string, p *mcppeers.Server) toolOutputs {
	h.t.Helper()
	events, records := h.runLog(runID, hostOf(p.Base))
	if rec := onlyMCPRecord(h.t, records); rec.Outcome != "accepted" || rec.Version != remote.Revision {
		h.t.Fatalf("record %+v", rec)
	}
	if last := events[len(events)-1]; last.Type != "run.completed" {
		h.t.Fatalf("run ends with %s %s", last.Type, last.Payload)
	}
	snap := decode[snapshot](h.t, h.get(projected(runID), acmeKey))
	var raw struct {
		Result json.RawMessage `json:"result"`
	}
	dec := json.NewDecoder(bytes.NewReader(snap.Outputs))
	dec.DisallowUnknownFields() // outputs hold the result and nothing else
	var out toolOutputs
	if err := dec.Decode(&raw); err != nil || json.Unmarshal(raw.Result, &out.Result) != nil {
		h.t.Fatalf("outputs %s: %v", snap.Outputs, err)
	}
	return out
}

// TestMCPClientWorkflow drives conformance-mcp-client over REST against a
// go-sdk server admitted with -mcp-server: every tool pinned at start and
// logged with its digest; a call completing with the tool's result as the
// run's output; an input request answered through the run's own
// interrupt, nothing sent back before the user answered; a tool's failure
// a result; the refusals (an unknown server not_found, a tool changed
// since admission forbidden, bad inputs refused with no run).
func TestMCPClientWorkflow(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{Revisions: suiteRevisions})
	h := newTestHost(t, withMCPServer("tools", p))
	var pins []string
	for _, tl := range mcppeers.DefaultTools() {
		pins = append(pins, regexp.QuoteMeta(tl.Name+"="+remote.ToolDigest(tl)))
	}
	if !regexp.MustCompile(`msg="remote MCP server admitted" server=tools tools=.*` + pins[0]).MatchString(h.logs.String()) {
		t.Fatalf("the start log does not pin the tools:\n%s", h.logs.String())
	}
	for _, pin := range pins {
		if !regexp.MustCompile(pin).MatchString(h.logs.String()) {
			t.Fatalf("%s is not pinned in the start log", pin)
		}
	}

	t.Run("echo", func(t *testing.T) {
		h.t = t
		before := len(p.Requests())
		r := h.do(req{Method: "POST", Path: "/runs", Key: acmeKey, Headers: map[string]string{"traceparent": seamTraceparent},
			Body: `{"workflowId":"` + mcpClientWorkflowID + `","inputs":{"method":"callTool","serverId":"tools","name":"echo","arguments":{"text":"hi"}}}`})
		wantStatus(t, r, http.StatusCreated)
		out := h.completedCall(decode[created](t, r).RunID, p)
		if out.Result.IsError || string(out.Result.Structured) != `{"text":"hi"}` || out.Result.Text() != `{"text":"hi"}` {
			t.Fatalf("result %+v", out.Result)
		}
		// Every request continues the run's trace (OpenWOP interop.md §Trace
		// context).
		traceID := strings.Split(seamTraceparent, "-")[1]
		for _, q := range p.Requests()[before:] {
			if !strings.Contains(q.Traceparent, traceID) || !strings.Contains(q.MetaString("traceparent"), traceID) {
				t.Fatalf("%s carried traceparent %q / %q, want trace %s", q.Method, q.Traceparent, q.MetaString("traceparent"), traceID)
			}
		}
	})
	t.Run("input through the run's interrupt", func(t *testing.T) {
		h.t = t
		before := len(p.Calls("tools/call"))
		runID := h.mcpClientRun(`{"method":"callTool","serverId":"tools","name":"needs_input"}`)
		h.waitStatus(acmeKey, projected(runID), "waiting-input")
		snap := decode[snapshot](t, h.get(projected(runID), acmeKey))
		if len(snap.Interrupts) != 1 || snap.Interrupts[0].Kind != "clarification" || snap.Interrupts[0].NodeID != memstore.ToolInputNodeID ||
			snap.Interrupts[0].Message != "The MCP server asks: "+mcppeers.NeedsInputMessage {
			t.Fatalf("interrupts %+v", snap.Interrupts)
		}
		if n := len(p.Calls("tools/call")) - before; n != 1 {
			t.Fatalf("%d calls before the user answered, want the first alone", n)
		}
		r := h.post(strings.TrimPrefix(snap.Interrupts[0].ResolveURL, h.url), acmeKey, `{"resumeValue":{"name":"Ada"}}`)
		wantStatus(t, r, http.StatusOK)
		out := h.completedCall(runID, p)
		if out.Result.Text() != fmt.Sprintf(mcppeers.GreetingFormat, "Ada") {
			t.Fatalf("result %+v", out.Result)
		}
	})
	t.Run("a tool's failure is a result", func(t *testing.T) {
		h.t = t
		out := h.completedCall(h.mcpClientRun(`{"method":"callTool","serverId":"tools","name":"fails"}`), p)
		if !out.Result.IsError || out.Result.Text() != mcppeers.FailureText {
			t.Fatalf("result %+v", out.Result)
		}
	})
	t.Run("unknown server", func(t *testing.T) {
		h.t = t
		before := len(p.Requests())
		events, records := h.runLog(h.mcpClientRun(`{"method":"callTool","serverId":"nobody","name":"echo"}`))
		if last := events[len(events)-1]; last.Type != "run.failed" || last.str("error.code") != codeNotFound || len(records) != 0 {
			t.Fatalf("run ends with %s %s, %d records", last.Type, last.Payload, len(records))
		}
		if len(p.Requests()) != before {
			t.Fatal("an unknown server id reached a server")
		}
	})
	t.Run("bad inputs", func(t *testing.T) {
		h.t = t
		for _, inputs := range []string{`{"method":"readResource","serverId":"tools","name":"echo"}`, `{"method":"callTool","serverId":"tools"}`,
			`{"method":"listTools","serverId":"tools","cursor":7}`, `{"method":"serverHealth"}`,
			`{"method":"callTool","serverId":"tools","name":"echo","arguments":[1]}`, `{"method":"callTool","serverId":"` + p.URL + `","name":"echo"}`} {
			r := h.post("/runs", acmeKey, `{"workflowId":"`+mcpClientWorkflowID+`","inputs":`+inputs+`}`)
			wantError(t, r, http.StatusBadRequest, codeValidation)
		}
	})
	t.Run("changed since admission", func(t *testing.T) {
		h.t = t
		changed := mcppeers.DefaultTools()
		for _, tl := range changed {
			if tl.Name == mcppeers.Echo {
				tl.Description += " And more."
			}
		}
		p.SetTools(changed)
		before := len(p.Calls("tools/call"))
		events, _ := h.runLog(h.mcpClientRun(`{"method":"callTool","serverId":"tools","name":"echo","arguments":{"text":"hi"}}`), hostOf(p.Base))
		if last := events[len(events)-1]; last.Type != "run.failed" || last.str("error.code") != codeForbidden {
			t.Fatalf("run ends with %s %s", last.Type, last.Payload)
		}
		if len(p.Calls("tools/call")) != before {
			t.Fatal("a tool changed since admission was called")
		}
	})
}

// TestMCPClientWorkflowOverMCP: conformance-mcp-client is a tool of the
// host's own MCP server too: a tools/call on it runs the workflow, which
// calls the remote tool, and answers with the run's outputs.
func TestMCPClientWorkflowOverMCP(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	h := newTestHost(t, withMCPServer("tools", p))
	rr, dec := h.mcp(mcpReq{Key: acmeKey, Method: "tools/call", Name: mcpClientWorkflowID, Params: map[string]any{
		"name":      mcpClientWorkflowID,
		"arguments": map[string]any{"method": "callTool", "serverId": "tools", "name": "echo", "arguments": map[string]any{"text": "via mcp"}},
	}})
	wantStatus(t, rr, http.StatusOK)
	sc, _ := json.Marshal(dec.Result["structuredContent"])
	if dec.Error != nil || dec.Result["isError"] == true || !strings.Contains(string(sc), `"structuredContent":{"text":"via mcp"}`) {
		t.Fatalf("tools/call answered %s", rr.Body)
	}
	if n := len(p.Calls("tools/call")); n != 1 {
		t.Fatalf("the remote server got %d calls", n)
	}
}

// TestMCPClientStart: the client facet and its fixture are claimed only by
// a host that registers the workflow exposing the client; an -mcp-server
// the host cannot review stops it without naming the address; bad flags
// are usage errors.
func TestMCPClientStart(t *testing.T) {
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	keys, _ := parseKeys(defaultKeys)
	auth := newBearerKeys(keys)
	bare, err := newHandler(config{Store: store, Auth: auth, BaseURL: "http://host.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bare.Close(context.Background()) })
	rec := string(bare.interop.Records()["mcp"])
	if strings.Contains(rec, "client") || bare.interop.MCPClient() != nil {
		t.Fatalf("a host without workflows claims the client: %s", rec)
	}

	p := mcppeers.StartGo(t, mcppeers.Script{})
	_, err = newHandler(config{Store: store, Auth: auth, BaseURL: "http://host.test", Workflows: store, Tenants: auth.Tenants(),
		MCPServers: []mcpServerSpec{{Alias: "tools", Endpoint: p.URL}}}) // no -peer-allow
	if err == nil || !strings.Contains(err.Error(), "-mcp-server tools") || !strings.Contains(err.Error(), "not allowed") ||
		strings.Contains(err.Error(), hostOf(p.Base)) {
		t.Fatalf("%v, want the server refused by the guard without its address", err)
	}
	if len(p.Requests()) != 0 {
		t.Fatal("the refused server was reached")
	}
	if _, err := newHandler(config{Store: store, Auth: auth, BaseURL: "http://host.test",
		MCPServers: []mcpServerSpec{{Alias: "tools", Endpoint: p.URL}}}); err == nil {
		t.Fatal("-mcp-server without a workflow registry was accepted")
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-mcp-server", "noequals"}, "want alias=URL"},
		{[]string{"-mcp-server", "bad alias=https://a.example/mcp"}, "want alias=URL"},
		{[]string{"-mcp-server", "a=ftp://a.example/mcp"}, "absolute http(s) URL"},
		{[]string{"-mcp-server", "a=https://u:p@a.example/mcp"}, "absolute http(s) URL"},
		{[]string{"-mcp-server", "a=https://a.example/mcp", "-mcp-server", "a=https://b.example/mcp"}, `alias "a" is given twice`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &stdout, &stderr, nil); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want usage and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
	var f mcpServerFlags
	if err := f.Set("a=https://a.example/mcp?x=1"); err != nil || f.String() != "a" || !slices.Equal(f, mcpServerFlags{{Alias: "a", Endpoint: "https://a.example/mcp?x=1"}}) {
		t.Fatalf("%v %v", f, err)
	}
}
