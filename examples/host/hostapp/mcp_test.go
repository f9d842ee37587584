package hostapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// The MCP mount as the demo host serves it: the wiring (path, credentials,
// Origin policy, drain, seal key), not the mount's own rules, which
// package mcp tests.

const (
	mcpRevision    = "2026-07-28"
	tasksExtID     = "io.modelcontextprotocol/tasks"
	metaVersion    = "io.modelcontextprotocol/protocolVersion"
	metaCaps       = "io.modelcontextprotocol/clientCapabilities"
	capElicitation = "elicitation"
)

// mcpReq is one request as a 2026-07-28 client sends it: the revision and
// the method (and Mcp-Name) as headers, the revision and client
// capabilities again in params._meta.
type mcpReq struct {
	Key     string
	Method  string
	Name    string         // Mcp-Name; "" sends none
	Params  map[string]any // without _meta
	Caps    map[string]any // clientCapabilities; nil is {}
	Version string         // the revision named in header and _meta; "" is 2026-07-28
	Headers map[string]string
}

// withTasks declares the Tasks extension (and form elicitation).
var withTasks = map[string]any{"extensions": map[string]any{tasksExtID: map[string]any{}}, capElicitation: map[string]any{"form": map[string]any{}}}

// mcpResult is a decoded JSON-RPC answer.
type mcpResult struct {
	ID     json.RawMessage `json:"id"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func (h *testHost) mcp(r mcpReq) (response, mcpResult) {
	h.t.Helper()
	return mcpPost(h.t, h.client, h.url, r)
}

func mcpPost(t *testing.T, client *http.Client, base string, r mcpReq) (response, mcpResult) {
	t.Helper()
	params := map[string]any{}
	for k, v := range r.Params {
		params[k] = v
	}
	caps := r.Caps
	if caps == nil {
		caps = map[string]any{}
	}
	version := r.Version
	if version == "" {
		version = mcpRevision
	}
	params["_meta"] = map[string]any{metaVersion: version, metaCaps: caps}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": r.Method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	hr, err := http.NewRequest(http.MethodPost, base+mcpPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	hr.Header.Set("MCP-Protocol-Version", version)
	hr.Header.Set("Mcp-Method", r.Method)
	if r.Name != "" {
		hr.Header.Set("Mcp-Name", r.Name)
	}
	if r.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.Key)
	}
	for k, v := range r.Headers {
		hr.Header.Set(k, v)
	}
	res, err := client.Do(hr)
	if err != nil {
		t.Fatalf("%s: %v", r.Method, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	out := response{Status: res.StatusCode, Header: res.Header, Body: buf.Bytes()}
	var dec mcpResult
	if err := json.Unmarshal(out.Body, &dec); err != nil {
		t.Fatalf("%s: %d %s is not JSON-RPC", r.Method, out.Status, out.Body)
	}
	return out, dec
}

// wantRPCError checks an MCP refusal: HTTP status, JSON-RPC code, a JSON
// body, and none of the REST surface's envelope or headers.
func wantRPCError(t *testing.T, r response, dec mcpResult, status, code int) {
	t.Helper()
	if r.Status != status || dec.Error == nil || dec.Error.Code != code || dec.Result != nil {
		t.Fatalf("got %d %s; want HTTP %d with JSON-RPC error %d", r.Status, r.Body, status, code)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if r.Header.Get("OpenWOP-Version") != "" {
		t.Errorf("an MCP answer carries the REST surface's OpenWOP-Version header")
	}
}

// TestMCPMounted: /mcp answers server/discover as the demo configures it —
// the one revision, the Tasks extension, the host's name and version —
// and is not subject to the REST routes' OpenWOP-Version check.
func TestMCPMounted(t *testing.T) {
	h := newTestHost(t)
	r, dec := h.mcp(mcpReq{Key: acmeKey, Method: "server/discover", Headers: map[string]string{"OpenWOP-Version": "9"}})
	wantStatus(t, r, http.StatusOK)
	res := dec.Result
	if res == nil || res["resultType"] != "complete" || res["cacheScope"] != "public" || res["ttlMs"] != float64(60000) {
		t.Fatalf("discover: %s", r.Body)
	}
	if v, _ := json.Marshal(res["supportedVersions"]); string(v) != `["2026-07-28"]` {
		t.Errorf("supportedVersions %s", v)
	}
	caps, _ := json.Marshal(res["capabilities"])
	if string(caps) != `{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}}` {
		t.Errorf("capabilities %s", caps)
	}
	meta, _ := json.Marshal(res["_meta"])
	if string(meta) != `{"io.modelcontextprotocol/serverInfo":{"name":"wopinterop example host","version":"0.0.0-dev"}}` {
		t.Errorf("_meta %s", meta)
	}
	if r.Header.Get("OpenWOP-Version") != "" {
		t.Error("the MCP answer carries the REST surface's OpenWOP-Version header")
	}
}

// TestMCPNegotiationOnHostEvents: every MCP request that reaches version
// selection leaves one negotiation.decided record, as a durable host event
// of the caller's tenant on GET /host/events — refusals too
// (OpenWOP RFC 0242 §B; interop.md §The audit event) — and no other tenant sees it.
func TestMCPNegotiationOnHostEvents(t *testing.T) {
	h := newTestHost(t)
	acme := h.openSSE(acmeKey, "")
	globex := h.openSSE(globexKey, "")
	read := func() map[string]any {
		t.Helper()
		f := acme.next()
		var ev struct {
			Type     string         `json:"type"`
			Delivery string         `json:"delivery"`
			Payload  map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(f.Data), &ev); err != nil || f.Event != "negotiation.decided" || ev.Type != f.Event || ev.Delivery != "durable" {
			t.Fatalf("frame %+v", f)
		}
		return ev.Payload
	}

	r, _ := h.mcp(mcpReq{Key: acmeKey, Method: "tools/list"})
	wantStatus(t, r, http.StatusOK)
	if rec := read(); rec["protocol"] != "mcp" || rec["outcome"] != "accepted" || rec["version"] != mcpRevision || rec["requested"] != mcpRevision {
		t.Errorf("accepted record %v", rec)
	}
	r, dec := h.mcp(mcpReq{Key: acmeKey, Method: "tools/list", Version: "2099-01-01"})
	wantRPCError(t, r, dec, http.StatusBadRequest, -32022)
	if supported, _ := json.Marshal(dec.Error.Data["supported"]); string(supported) != `["2026-07-28"]` || dec.Error.Data["requested"] != "2099-01-01" {
		t.Errorf("-32022 data %v", dec.Error.Data)
	}
	if rec := read(); rec["protocol"] != "mcp" || rec["outcome"] != "refused" || rec["requested"] != "2099-01-01" || rec["version"] != nil {
		t.Errorf("refusal record %v", rec)
	}
	globex.none(50 * time.Millisecond)
}

// TestMCPGuardAsConfigured: the demo's credentials and Origin policy. The
// bearer keys are the only way in (401 with a Bearer challenge otherwise);
// AllowedOrigins is empty, so a request with a browser Origin is 403 —
// except the host's own origin on its loopback listener — while requests
// without one pass; the loopback listener refuses a foreign Host (DNS
// rebinding).
func TestMCPGuardAsConfigured(t *testing.T) {
	h := newTestHost(t)
	for _, tc := range []struct {
		name    string
		key     string
		headers map[string]string
		status  int
		code    int
	}{
		{"no credential", "", nil, http.StatusUnauthorized, -32600},
		{"unknown key", "not-a-key", nil, http.StatusUnauthorized, -32600},
		{"a foreign origin", acmeKey, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, -32600},
		{"a loopback page on another port", acmeKey, map[string]string{"Origin": "http://localhost:3000"}, http.StatusForbidden, -32600},
		{"the host's own origin over https", acmeKey, map[string]string{"Origin": strings.Replace(h.url, "http://", "https://", 1)}, http.StatusForbidden, -32600},
		{"a rebinding Host", acmeKey, map[string]string{"Host": "evil.example"}, http.StatusForbidden, -32600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mcpReq{Key: tc.key, Method: "tools/list", Headers: tc.headers}
			var res response
			var dec mcpResult
			if host := tc.headers["Host"]; host != "" {
				res, dec = mcpPostHost(t, h, r, host)
			} else {
				res, dec = h.mcp(r)
			}
			wantRPCError(t, res, dec, tc.status, tc.code)
			if got := res.Header.Get("WWW-Authenticate"); (tc.status == http.StatusUnauthorized) != (got == "Bearer") {
				t.Errorf("WWW-Authenticate = %q", got)
			}
			if bytes.Contains(res.Body, []byte("conformance")) {
				t.Errorf("a refused request reached the tools: %s", res.Body)
			}
		})
	}
	// The host's own origin, as the listener's IP or as localhost, passes.
	port := h.url[strings.LastIndex(h.url, ":")+1:]
	for _, origin := range []string{h.url, "http://localhost:" + port} {
		r, dec := mcpPostHost(t, h, mcpReq{Key: acmeKey, Method: "tools/list", Headers: map[string]string{"Origin": origin}}, strings.TrimPrefix(origin, "http://"))
		wantStatus(t, r, http.StatusOK)
		if len(dec.Result["tools"].([]any)) != len(sortedFixtures()) {
			t.Errorf("own origin %s: %s", origin, r.Body)
		}
	}
	// Each demo key reaches its own tenant's tools.
	for key, tenant := range map[string]string{acmeKey: tenantAcme, globexKey: tenantGlobex} {
		r, dec := h.mcp(mcpReq{Key: key, Method: "tools/list"})
		wantStatus(t, r, http.StatusOK)
		if dec.Result["cacheScope"] != "private" || len(dec.Result["tools"].([]any)) != len(workflowIDs(tenant, h.url)) {
			t.Errorf("%s: %s", key, r.Body)
		}
	}
	// Other verbs are the mount's 405, not the REST fallback.
	r := h.do(req{Method: "GET", Path: mcpPath, Key: acmeKey})
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" || !bytes.Contains(r.Body, []byte(`"jsonrpc":"2.0"`)) {
		t.Errorf("GET /mcp: %d %v %s", r.Status, r.Header, r.Body)
	}
}

// mcpPostHost sends r with a Host header other than the listener's.
func mcpPostHost(t *testing.T, h *testHost, r mcpReq, host string) (response, mcpResult) {
	t.Helper()
	delete(r.Headers, "Host")
	client := &http.Client{Transport: hostRewriter{host: host, next: h.client.Transport}}
	return mcpPost(t, client, h.url, r)
}

type hostRewriter struct {
	host string
	next http.RoundTripper
}

func (h hostRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return h.next.RoundTrip(r)
}

// TestMCPDrainEndsListen: a subscriptions/listen stream never goes idle,
// so the host's drain ends it (Host.Drain), as it ends A2A streams.
func TestMCPDrainEndsListen(t *testing.T) {
	h := newTestHost(t)
	body := `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"notifications":{},` +
		`"_meta":{"` + metaVersion + `":"` + mcpRevision + `","` + metaCaps + `":{}}}}`
	hr, _ := http.NewRequest(http.MethodPost, h.url+mcpPath, strings.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+acmeKey)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	hr.Header.Set("MCP-Protocol-Version", mcpRevision)
	hr.Header.Set("Mcp-Method", "subscriptions/listen")
	res, err := h.client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("listen: %d %v", res.StatusCode, res.Header)
	}
	lines := bufio.NewScanner(res.Body)
	acked := false
	for !acked && lines.Scan() {
		acked = strings.Contains(lines.Text(), "notifications/subscriptions/acknowledged")
	}
	if !acked {
		t.Fatalf("no acknowledgement: %v", lines.Err())
	}
	ended := make(chan struct{})
	go func() {
		for lines.Scan() {
		}
		close(ended)
	}()
	h.drain()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the listen stream outlived the drain")
	}
}

// TestSealKeyFlag: -seal-key is read like -routing-secret and refused
// without repeating the value.
func TestSealKeyFlag(t *testing.T) {
	for _, tt := range []struct {
		in, err string
	}{
		{"abcd", "decodes to 2 bytes, at least 32 are needed"},
		{"!!not-a-key!!", "not hex or base64"},
		{strings.Repeat("ab", 31), "decodes to 31 bytes"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"-seal-key", tt.in}, &bytes.Buffer{}, &stderr, nil)
		if code != exitUsage || !strings.Contains(stderr.String(), "invalid -seal-key: "+tt.err) || strings.Contains(stderr.String(), tt.in) {
			t.Errorf("-seal-key %q: exit %d, %q", tt.in, code, stderr.String())
		}
	}
	for _, ok := range []string{strings.Repeat("0f", 32), "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="} {
		if b, err := parseSealKey(ok); err != nil || len(b) != 32 {
			t.Errorf("parseSealKey(%q) = %d bytes, %v", ok, len(b), err)
		}
	}
	if a, b := randomSealKey(), randomSealKey(); len(a) != 32 || bytes.Equal(a, b) {
		t.Error("randomSealKey is not 32 fresh bytes")
	}
}

// TestSealKeyCarriesRounds: a requestState sealed by one host opens on
// another host over the same store only when both were given the same
// -seal-key — what lets a pending approval round survive a restart or
// reach another replica. With another key the retry is -32602 and the run
// still waits.
func TestSealKeyCarriesRounds(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	a := newTestHost(t, func(c *config) { c.SealKey = key })
	same := a.sibling(key)
	other := a.sibling(bytes.Repeat([]byte{8}, 32))

	round := func() (string, string) {
		t.Helper()
		r, dec := a.mcp(mcpReq{Key: acmeKey, Method: "tools/call", Name: "conformance-approval",
			Params: map[string]any{"name": "conformance-approval", "arguments": map[string]any{}},
			Caps:   map[string]any{capElicitation: map[string]any{"form": map[string]any{}}}})
		wantStatus(t, r, http.StatusOK)
		state, _ := dec.Result["requestState"].(string)
		requests, _ := dec.Result["inputRequests"].(map[string]any)
		if dec.Result["resultType"] != "input_required" || state == "" || len(requests) != 1 {
			t.Fatalf("first round: %s", r.Body)
		}
		for id := range requests {
			return state, id
		}
		return "", ""
	}
	retry := func(h *testHost, state, interrupt string) (response, mcpResult) {
		t.Helper()
		return h.mcp(mcpReq{Key: acmeKey, Method: "tools/call", Name: "conformance-approval",
			Params: map[string]any{"name": "conformance-approval", "arguments": map[string]any{}, "requestState": state,
				"inputResponses": map[string]any{interrupt: map[string]any{"action": "accept", "content": map[string]any{"action": "accept"}}}},
			Caps: map[string]any{capElicitation: map[string]any{"form": map[string]any{}}}})
	}

	state, interrupt := round()
	r, dec := retry(other, state, interrupt)
	wantRPCError(t, r, dec, http.StatusBadRequest, -32602)
	runs := decode[struct {
		Runs []snapshot `json:"runs"`
	}](t, a.get("/runs?workflowId=conformance-approval", acmeKey))
	if len(runs.Runs) != 1 || runs.Runs[0].Status != "waiting-approval" {
		t.Fatalf("after a refused retry: %+v", runs.Runs)
	}

	r, dec = retry(same, state, interrupt)
	wantStatus(t, r, http.StatusOK)
	if dec.Result["resultType"] != "complete" || dec.Result["isError"] != false {
		t.Fatalf("retry on the sibling: %s", r.Body)
	}
	if sc, _ := json.Marshal(dec.Result["structuredContent"]); string(sc) != `{"approved":true}` {
		t.Errorf("structuredContent %s", sc)
	}
}

// sibling serves a second handler over h's store with sealKey, as another
// replica (or the same host after a restart) would.
func (h *testHost) sibling(sealKey []byte) *testHost {
	h.t.Helper()
	keys, err := parseKeys(defaultKeys)
	if err != nil {
		h.t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	handler, err := newHandler(config{Store: h.store, Auth: newBearerKeys(keys), BaseURL: "http://" + srv.Listener.Addr().String(), SealKey: sealKey})
	if err != nil {
		h.t.Fatal(err)
	}
	srv.Config.Handler = handler
	srv.Start()
	// Registered after h's cleanup, so it runs first: the sibling is gone
	// before the shared store closes.
	h.t.Cleanup(func() {
		srv.Close()
		if err := handler.Close(context.Background()); err != nil {
			h.t.Errorf("sibling Close: %v", err)
		}
	})
	return &testHost{t: h.t, url: srv.URL, store: h.store, client: srv.Client(), logs: h.logs, handler: handler}
}

// mcpTools lists the tool names of a tools/list answer.
func mcpTools(res map[string]any) []string {
	var names []string
	tools, _ := res["tools"].([]any)
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
	}
	return names
}

// sortedFixtures are acme's tools in tools/list order: the fixtures (with
// conformance-credential, the test hosts being on loopback) and acme's own
// workflow.
func sortedFixtures() []string { return workflowIDs(tenantAcme, "http://127.0.0.1") }

// FuzzParseSealKey: any -seal-key value either decodes to at least
// sealed.MinKeyLen bytes — what the sealer needs — or is refused with an
// error that never repeats it.
func FuzzParseSealKey(f *testing.F) {
	for _, seed := range []string{strings.Repeat("0f", 32), "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY", "", "abcd", "==", strings.Repeat("A", 42)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, err := parseSealKey(in)
		if err == nil && len(b) < sealed.MinKeyLen {
			t.Fatalf("%q accepted with %d bytes", in, len(b))
		}
		if err != nil && len(strings.TrimSpace(in)) >= 8 && strings.Contains(err.Error(), strings.TrimSpace(in)) {
			t.Fatalf("the error repeats the value: %v", err)
		}
		if err == nil {
			if _, serr := sealedSealer(b); serr != nil {
				t.Fatalf("an accepted key is refused by the sealer: %v", serr)
			}
		}
	})
}

func sealedSealer(key []byte) (*sealed.Sealer, error) {
	return sealed.NewSealer(sealed.Config{Key: key})
}
