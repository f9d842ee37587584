package hostapp

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// ctxMCPFake is an MCP server shaped like the OpenWOP suite's fake for
// the ctx.mcp fixture (RFC 0204 §A): server/discover at 2026-07-28 with
// the tools capability; structured-echo (its arguments as
// structuredContent, a nonce in _meta), always-error (isError), and a
// three-tool list paged 2 + 1 with nextCursor, ttlMs and cacheScope,
// every tool with an outputSchema and annotations. It answers JSON bodies
// and records every exchange: the request and the result it sent, as
// bytes.
type ctxMCPFake struct {
	srv *httptest.Server

	mu        sync.Mutex
	exchanges []ctxMCPExchange
	nonce     int
}

type ctxMCPExchange struct {
	Method      string
	Params      json.RawMessage
	Traceparent string
	Result      json.RawMessage
}

const suiteTool = `{"name":%q,"description":"d","inputSchema":{"type":"object"},` +
	`"outputSchema":{"type":"object","properties":{"echo":{"type":"string"}}},"annotations":{"readOnlyHint":true,"title":%q}}`

func suiteTools(names ...string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(suiteTool, "%q", `"`+n+`"`), `"title":"`+n+`"`, `"title":"`+strings.ToUpper(n)+`"`)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func startCtxMCPFake(t *testing.T) *ctxMCPFake {
	t.Helper()
	s := &ctxMCPFake{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *ctxMCPFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.ID == nil {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Cursor    string          `json:"cursor"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	var result string
	switch {
	case msg.Method == "server/discover":
		result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"suite-fake","version":"1.0.0"}}`
	case msg.Method == "tools/list" && p.Cursor == "":
		result = `{"resultType":"complete","tools":` + suiteTools("structured-echo", "always-error") + `,"nextCursor":"page-2","ttlMs":30000,"cacheScope":"private"}`
	case msg.Method == "tools/list" && p.Cursor == "page-2":
		result = `{"resultType":"complete","tools":` + suiteTools("third-tool") + `,"ttlMs":30000,"cacheScope":"private"}`
	case msg.Method == "tools/call" && p.Name == "structured-echo":
		s.nonce++
		args := string(p.Arguments)
		if args == "" {
			args = "{}"
		}
		text, _ := json.Marshal(args)
		result = `{"resultType":"complete","content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + args +
			`,"isError":false,"_meta":{"dev.openwop.conformance/nonce":"nonce-` + string(rune('0'+s.nonce)) + `"}}`
	case msg.Method == "tools/call" && p.Name == "always-error":
		result = `{"resultType":"complete","content":[{"type":"text","text":"always fails"}],"isError":true}`
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":{"code":-32601,"message":"no"}}`)
		return
	}
	s.exchanges = append(s.exchanges, ctxMCPExchange{Method: msg.Method, Params: msg.Params, Traceparent: r.Header.Get("Traceparent"), Result: json.RawMessage(result)})
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+`}`)
}

// last is the last exchange of method.
func (s *ctxMCPFake) last(t *testing.T, method string) ctxMCPExchange {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.exchanges) - 1; i >= 0; i-- {
		if s.exchanges[i].Method == method {
			return s.exchanges[i]
		}
	}
	t.Fatalf("the server saw no %s", method)
	return ctxMCPExchange{}
}

func (s *ctxMCPFake) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.exchanges)
}

// downURL is an address nothing answers: a port listened on, then closed.
func downURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr
}

// nodeEventSchemas restate the upstream payloads of node.completed and
// node.failed (openwop/openwop schemas/v2/run-event-payloads.schema.json
// $defs.nodeCompleted, nodeFailed and _errorObject at 11ad780, which the
// stored extract leaves out; the RFC 0185 extension members omitted, as
// the host writes none).
var nodeEventSchemas = map[string]string{
	"node.completed": `{"type":"object","required":["nodeId"],"additionalProperties":false,"properties":{` +
		`"nodeId":{"type":"string","pattern":"^[A-Za-z0-9._~:-]{1,128}$"},"outputs":{"type":"object"},"durationMs":{"type":"integer","minimum":0}}}`,
	"node.failed": `{"type":"object","required":["nodeId","error"],"additionalProperties":false,"properties":{` +
		`"nodeId":{"type":"string","pattern":"^[A-Za-z0-9._~:-]{1,128}$"},"attempts":{"type":"integer","minimum":1},` +
		`"error":{"type":"object","required":["code","message"],"additionalProperties":false,"properties":{` +
		`"code":{"type":"string","minLength":1},"message":{"type":"string","minLength":1},"details":{"type":"object"},"retryable":{"type":"boolean"}}}}}`,
}

// mcpClientNode runs conformance-mcp-client with inputs (and headers) to
// its end and returns the run's status and its mcp-client node event, as
// the suite reads them: the poll of the run's events, the node.completed
// or node.failed whose payload.nodeId is mcp-client — held to the
// upstream payload schema — and checked against the run's own outputs.
func (h *testHost) mcpClientNode(inputs string, headers map[string]string) (string, pollEvent) {
	h.t.Helper()
	t := h.t
	r := h.do(req{Method: "POST", Path: "/runs", Key: acmeKey, Headers: headers,
		Body: `{"workflowId":"conformance-mcp-client","inputs":` + inputs + `}`})
	wantStatus(t, r, http.StatusCreated)
	runID := decode[created](t, r).RunID
	events, _ := h.runLog(runID)
	var node []pollEvent
	for _, e := range events {
		if (e.Type == "node.completed" || e.Type == "node.failed") && e.str("nodeId") == mcpClientNodeID {
			node = append(node, e)
		}
	}
	if len(node) != 1 || node[0].NodeID != mcpClientNodeID {
		t.Fatalf("mcp-client node events %+v", node)
	}
	c := jsonschema.NewCompiler()
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(nodeEventSchemas[node[0].Type]))
	if err := c.AddResource("mem://node.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://node.json")
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := jsonschema.UnmarshalJSON(bytes.NewReader(node[0].Payload))
	if err := sch.Validate(payload); err != nil {
		t.Fatalf("%s payload %s: %v", node[0].Type, node[0].Payload, err)
	}
	snap := decode[snapshot](t, h.get(projected(runID), acmeKey))
	if node[0].Type == "node.completed" {
		var p struct {
			Outputs json.RawMessage `json:"outputs"`
		}
		_ = json.Unmarshal(node[0].Payload, &p)
		if !jsonEqual(p.Outputs, snap.Outputs) {
			t.Fatalf("node outputs %s, run outputs %s", p.Outputs, snap.Outputs)
		}
	}
	return snap.Status, node[0]
}

// resultOf is a node.completed's outputs.result.
func resultOf(t *testing.T, e pollEvent) json.RawMessage {
	t.Helper()
	var p struct {
		Outputs struct {
			Result json.RawMessage `json:"result"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil || p.Outputs.Result == nil {
		t.Fatalf("payload %s", e.Payload)
	}
	return p.Outputs.Result
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestMCPClientSuiteFixture holds conformance-mcp-client to the OpenWOP
// suite's legs (RFC 0204 §A; host-services.md §mcp) against a server
// shaped like its fake, bound as the suite's operator contract binds it
// (-mcp-server conformance=…, conformance.down=… an address nothing
// answers, admitted although down at start): callTool resolves with the
// server's result unaltered (structuredContent, _meta nonce; isError too,
// the run completing); listTools with one page as sent, the cursor
// passed through, the last page without nextCursor; serverHealth
// reachable with the discover result as sent, unreachable for the down
// server, never the words connected/disconnected; an unknown serverId
// fails the node not_found; a caller's traceparent reaches the server.
func TestMCPClientSuiteFixture(t *testing.T) {
	fake := startCtxMCPFake(t)
	down := downURL(t)
	h := newTestHost(t, func(c *config) {
		c.MCPServers = append(c.MCPServers,
			mcpServerSpec{Alias: "conformance", Endpoint: fake.srv.URL + "/mcp"},
			mcpServerSpec{Alias: "conformance.down", Endpoint: down + "/mcp"})
		c.PeerAllow = append(c.PeerAllow, fake.srv.URL, down)
	})
	completed := func(t *testing.T, inputs string) json.RawMessage {
		t.Helper()
		status, e := h.mcpClientNode(inputs, nil)
		if status != "completed" || e.Type != "node.completed" {
			t.Fatalf("%s: run %s, node %s %s", inputs, status, e.Type, e.Payload)
		}
		return resultOf(t, e)
	}

	t.Run("callTool", func(t *testing.T) {
		got := completed(t, `{"method":"callTool","serverId":"conformance","name":"structured-echo","arguments":{"echo":"hi","n":[1,2]}}`)
		sent := fake.last(t, "tools/call")
		if !jsonEqual(got, sent.Result) || !strings.Contains(string(got), `"dev.openwop.conformance/nonce":"nonce-`) {
			t.Fatalf("result %s, the server sent %s", got, sent.Result)
		}
	})
	t.Run("callTool isError", func(t *testing.T) {
		got := completed(t, `{"method":"callTool","serverId":"conformance","name":"always-error","arguments":{}}`)
		if sent := fake.last(t, "tools/call"); !jsonEqual(got, sent.Result) {
			t.Fatalf("result %s, the server sent %s", got, sent.Result)
		}
	})
	t.Run("listTools", func(t *testing.T) {
		first := completed(t, `{"method":"listTools","serverId":"conformance"}`)
		sent := fake.last(t, "tools/list")
		if !jsonEqual(first, sent.Result) || strings.Contains(string(sent.Params), "page-2") {
			t.Fatalf("first page %s, the server sent %s for %s", first, sent.Result, sent.Params)
		}
		last := completed(t, `{"method":"listTools","serverId":"conformance","cursor":"page-2"}`)
		sent = fake.last(t, "tools/list")
		if !jsonEqual(last, sent.Result) || !strings.Contains(string(sent.Params), `"cursor":"page-2"`) || strings.Contains(string(last), "nextCursor") {
			t.Fatalf("last page %s, the server sent %s for %s", last, sent.Result, sent.Params)
		}
	})
	t.Run("serverHealth reachable", func(t *testing.T) {
		got := completed(t, `{"method":"serverHealth","serverId":"conformance"}`)
		var hl struct {
			State    string          `json:"state"`
			Discover json.RawMessage `json:"discover"`
		}
		if err := json.Unmarshal(got, &hl); err != nil || hl.State != "reachable" || !jsonEqual(hl.Discover, fake.last(t, "server/discover").Result) {
			t.Fatalf("health %s", got)
		}
		noWords(t, got)
	})
	t.Run("serverHealth unreachable", func(t *testing.T) {
		got := completed(t, `{"method":"serverHealth","serverId":"conformance.down"}`)
		golden.Check(t, "mcp-client-health-unreachable.json", got)
		noWords(t, got)
	})
	t.Run("unknown serverId", func(t *testing.T) {
		before := fake.count()
		for _, in := range []string{
			`{"method":"callTool","serverId":"nobody","name":"structured-echo","arguments":{}}`,
			`{"method":"listTools","serverId":"nobody"}`,
			`{"method":"serverHealth","serverId":"nobody"}`,
		} {
			status, e := h.mcpClientNode(in, nil)
			if status != "failed" || e.Type != "node.failed" {
				t.Fatalf("%s: run %s, node %s", in, status, e.Type)
			}
			golden.Check(t, "mcp-client-node-not-found.json", e.Payload)
		}
		if fake.count() != before {
			t.Fatal("an unknown serverId reached the server")
		}
	})
	t.Run("traceparent carried", func(t *testing.T) {
		const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		status, _ := h.mcpClientNode(`{"method":"callTool","serverId":"conformance","name":"structured-echo","arguments":{}}`, map[string]string{"traceparent": tp})
		sent := fake.last(t, "tools/call")
		traceID := "4bf92f3577b34da6a3ce929d0e0e4736"
		if status != "completed" || !strings.Contains(sent.Traceparent, traceID) || !strings.Contains(string(sent.Params), traceID) {
			t.Fatalf("run %s; the server got traceparent %q, params %s", status, sent.Traceparent, sent.Params)
		}
	})
}

// noWords: a health result never speaks of a connection.
func noWords(t *testing.T, got json.RawMessage) {
	t.Helper()
	if s := strings.ToLower(string(got)); strings.Contains(s, "connected") {
		t.Fatalf("health %s speaks of a connection", got)
	}
}
