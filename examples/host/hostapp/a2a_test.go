package hostapp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// rpc posts one JSON-RPC request to the A2A interface as key.
func (h *testHost) rpc(key, version, body string) response {
	h.t.Helper()
	hdr := map[string]string{}
	if version != "" {
		hdr["A2A-Version"] = version
	}
	return h.do(req{Method: "POST", Path: a2aPath, Key: key, Body: body, Headers: hdr})
}

// rpcTask is the Task of a JSON-RPC SendMessage or GetTask answer.
func rpcTask(t *testing.T, r response) wire.Task {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Error != nil {
		t.Fatalf("JSON-RPC answer %s", r.Body)
	}
	var wrapped struct {
		Task *wire.Task `json:"task"`
	}
	if err := json.Unmarshal(env.Result, &wrapped); err == nil && wrapped.Task != nil {
		return *wrapped.Task
	}
	var task wire.Task
	if err := json.Unmarshal(env.Result, &task); err != nil {
		t.Fatal(err)
	}
	return task
}

func sendMessage(id int, messageID, extra string) string {
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"SendMessage","params":{"message":{"messageId":"` + messageID +
		`","role":"ROLE_USER","parts":[{"text":"please approve"}]` + extra + `}}}`
}

// The card is public, names exactly the conformance-approval skill and the
// bearer scheme the host enforces, and its interfaces come from the base
// URL (OpenWOP interop map, a2a.card). The A2A routes answer in A2A shapes, outside the
// OpenWOP-Version handling of the REST routes (OpenWOP RFC 0211 §C).
func TestAgentCard(t *testing.T) {
	h := newTestHost(t)
	r := h.do(req{Method: "GET", Path: a2aCardPath, Headers: map[string]string{"A2A-Version": "1.0"}})
	wantStatus(t, r, http.StatusOK)
	if r.Header.Get("OpenWOP-Version") != "" || r.Header.Get("ETag") == "" {
		t.Errorf("card headers %v", r.Header)
	}
	var card wire.AgentCard
	if err := json.Unmarshal(r.Body, &card); err != nil {
		t.Fatal(err)
	}
	if len(card.Skills) != 1 || card.Skills[0].ID != memstore.FixtureApproval {
		t.Errorf("skills %+v, want exactly conformance-approval", card.Skills)
	}
	var ifaces []string
	for _, in := range card.SupportedInterfaces {
		ifaces = append(ifaces, string(in.ProtocolBinding)+" "+string(in.ProtocolVersion)+" "+in.URL+" "+in.Tenant)
	}
	want := []string{"JSONRPC 1.0 " + h.url + "/a2a ", "HTTP+JSON 1.0 " + h.url + "/a2a/rest "}
	if strings.Join(ifaces, "|") != strings.Join(want, "|") {
		t.Errorf("interfaces %q, want %q", ifaces, want)
	}
	c := card.Capabilities
	if !c.Streaming || !c.PushNotifications || !c.ExtendedAgentCard {
		t.Errorf("capabilities %+v", c)
	}
	if s, ok := card.SecuritySchemes[bearerScheme].(wire.HTTPAuthSecurityScheme); !ok || s.Scheme != "Bearer" ||
		len(card.SecurityRequirements) != 1 || len(card.SecurityRequirements[0]) != 1 {
		t.Errorf("security %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
	}
	if card.Version != defaultVersion || card.Name != implementationName {
		t.Errorf("card name/version %q %q", card.Name, card.Version)
	}
	// The public card names no routing value anywhere (OpenWOP interop.md §Per-agent cards).
	agents := h.get("/agents", acmeKey)
	var inv struct {
		Agents []struct {
			A2ATenant string `json:"a2aTenant"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(agents.Body, &inv); err != nil || len(inv.Agents) == 0 || inv.Agents[0].A2ATenant == "" {
		t.Fatalf("agents %s", agents.Body)
	}
	if bytes.Contains(r.Body, []byte(inv.Agents[0].A2ATenant)) {
		t.Error("the public card carries a routing value")
	}

	// An OpenWOP-Version the REST surface refuses does not reach A2A.
	got := h.do(req{Method: "POST", Path: a2aPath, Key: acmeKey, Body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`,
		Headers: map[string]string{"A2A-Version": "1.0", "OpenWOP-Version": "3"}})
	if got.Status != 200 || !bytes.Contains(got.Body, []byte(`"tasks":[]`)) {
		t.Errorf("ListTasks with OpenWOP-Version 3: %d %s", got.Status, got.Body)
	}
	// A wrong verb and a missing credential answer in JSON-RPC shape.
	if g := h.do(req{Method: "GET", Path: a2aPath}); g.Status != 405 || !bytes.Contains(g.Body, []byte(`"jsonrpc":"2.0"`)) {
		t.Errorf("GET %s: %d %s", a2aPath, g.Status, g.Body)
	}
	if g := h.rpc("", "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"acme/x"}}`); g.Status != 401 ||
		!bytes.Contains(g.Body, []byte(`"code":-31401`)) || bytes.Contains(g.Body, []byte(`"error":"unauthenticated"`)) {
		t.Errorf("no credential: %d %s", g.Status, g.Body)
	}
	// HTTP+JSON refusals are google.rpc.Status, the id %2F-encoded in one
	// segment as the suite sends it.
	g := h.do(req{Method: "GET", Path: a2aRESTPath + "/tasks/zz-conformance%2Fxxxxxxxxxxxxxxxxxxxx", Key: acmeKey, Headers: map[string]string{"A2A-Version": "1.0"}})
	if g.Status != 404 || !bytes.Contains(g.Body, []byte(`"status":"NOT_FOUND"`)) || !bytes.Contains(g.Body, []byte(`"reason":"TASK_NOT_FOUND"`)) {
		t.Errorf("HTTP+JSON unknown task: %d %s", g.Status, g.Body)
	}
}

// The approval fixture through JSON-RPC as the suite drives it: INPUT_REQUIRED
// with the bound id, the accept reply without contextId answering the same
// contextId, and no event appended to the run's log by a refused message
// (OpenWOP interop map, a2a.operations; interop.md §A2A multi-turn; RFC 0198 §C.5).
func TestA2AApprovalAsTheSuiteDrivesIt(t *testing.T) {
	h := newTestHost(t)
	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "suite-1", "")))
	if !strings.HasPrefix(string(task.ID), "acme/") || task.ContextID == "" || task.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("task %+v", task)
	}
	runPath := encoded(string(task.ID))
	before := decode[poll](t, h.get(runPath+"/events/poll?timeout=0", acmeKey))
	if before.Status != "waiting-approval" {
		t.Fatalf("run status %s", before.Status)
	}

	mismatch := h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"suite-2","taskId":"`+
		string(task.ID)+`","contextId":"ctx-other","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}],"metadata":{"openwop":{"interrupt":{"action":"accept"}}}}}}`)
	if !bytes.Contains(mismatch.Body, []byte(`"code":-32602`)) {
		t.Fatalf("contextId mismatch: %s", mismatch.Body)
	}
	after := decode[poll](t, h.get(runPath+"/events/poll?timeout=0", acmeKey))
	if after.LastSequence != before.LastSequence || after.Status != "waiting-approval" {
		t.Fatalf("a refused message changed the run: %d→%d %s", before.LastSequence, after.LastSequence, after.Status)
	}

	done := rpcTask(t, h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"suite-3","taskId":"`+
		string(task.ID)+`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}],"metadata":{"openwop":{"interrupt":{"action":"accept"}}}}}}`))
	if done.ID != task.ID || done.ContextID != task.ContextID || done.Status.State != wire.TaskStateCompleted {
		t.Fatalf("accept answered %+v", done)
	}
	// The REST surface reads the same run, completed.
	if s := decode[snapshot](t, h.get(runPath, acmeKey)); s.Status != "completed" {
		t.Errorf("getRun after accept: %s", s.Status)
	}
	final := decode[poll](t, h.get(runPath+"/events/poll?timeout=0", acmeKey))
	late := h.rpc(acmeKey, "1.0", sendMessage(4, "suite-4", `,"taskId":"`+string(task.ID)+`"`))
	if !bytes.Contains(late.Body, []byte(`"code":-32004`)) {
		t.Errorf("message to a completed task: %s", late.Body)
	}
	for _, e := range final.Events {
		if e.Type == "negotiation.decided" {
			t.Error("an inbound A2A request wrote to the run's log")
		}
	}
	if again := decode[poll](t, h.get(runPath+"/events/poll?timeout=0", acmeKey)); again.LastSequence != final.LastSequence {
		t.Error("a refused message to a completed task appended an event")
	}
}

// Every inbound A2A request leaves one negotiation.decided record on
// GET /host/events of the caller's tenant and of no other, refusals
// included (OpenWOP interop.md §The audit event; RFC 0242 §B; events.md §Host events).
func TestNegotiationRecordsOnHostEvents(t *testing.T) {
	h := newTestHost(t)
	acme := h.openSSE(acmeKey, "")
	globex := h.openSSE(globexKey, "")

	type record struct {
		Protocol, Outcome, Version, Requested, Reason, PeerDigest string
	}
	read := func(s *sseStream) (record, sseFrame) {
		t.Helper()
		f := s.next()
		var ev struct {
			EventID  string          `json:"eventId"`
			Type     string          `json:"type"`
			Delivery string          `json:"delivery"`
			Payload  json.RawMessage `json:"payload"`
			RunID    *string         `json:"runId"`
		}
		if err := json.Unmarshal([]byte(f.Data), &ev); err != nil {
			t.Fatalf("frame %+v", f)
		}
		if f.Event != "negotiation.decided" || ev.Type != f.Event || ev.Delivery != "durable" || !f.HasID || f.ID != ev.EventID || ev.RunID != nil {
			t.Fatalf("frame %+v", f)
		}
		var rec record
		if err := json.Unmarshal(ev.Payload, &rec); err != nil {
			t.Fatal(err)
		}
		return rec, f
	}

	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "hev-1", "")))
	if rec, _ := read(acme); rec.Protocol != "a2a" || rec.Outcome != "accepted" || rec.Version != "1.0" || rec.Requested != "1.0" || rec.Reason != "ok" {
		t.Errorf("acme record %+v", rec)
	}
	refused := h.rpc(acmeKey, "9.9", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+string(task.ID)+`"}}`)
	if !bytes.Contains(refused.Body, []byte(`"code":-32009`)) {
		t.Fatalf("A2A-Version 9.9: %s", refused.Body)
	}
	if rec, _ := read(acme); rec.Outcome != "refused" || rec.Requested != "9.9" || rec.Version != "" {
		t.Errorf("refusal record %+v", rec)
	}
	// A card fetch with acme's credential is acme's too.
	h.do(req{Method: "GET", Path: a2aCardPath, Key: acmeKey})
	if rec, _ := read(acme); rec.Outcome != "accepted" || rec.Requested != "" {
		t.Errorf("card record %+v", rec)
	}

	// globex's stream saw none of acme's three records: its first frame is
	// the record of its own call, the only one without a requested
	// version.
	h.rpc(globexKey, "", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`)
	if rec, _ := read(globex); rec.Requested != "" || rec.Outcome != "accepted" || rec.Version != "1.0" {
		t.Errorf("globex's first record %+v is not its own", rec)
	}
	globex.none(50 * time.Millisecond)
	// An anonymous call is recorded for no tenant.
	h.rpc("", "1.0", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`)
	acme.none(50 * time.Millisecond)
}

func TestCancelRunColonForm(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureCancellable, "")
	path := projected(c.RunID)

	wantError(t, h.post(path+":cancel", globexKey, `{}`), http.StatusForbidden, codeTenantMismatch)
	wantError(t, h.post(path+":cancel", "", `{}`), http.StatusUnauthorized, codeUnauthenticated)
	wantError(t, h.post(path+":cancel", acmeKey, `{"reason":7}`), http.StatusBadRequest, codeValidation)
	// A POST to the plain run path is still a method the path does not serve.
	r := h.post(path, acmeKey, `{}`)
	wantError(t, r, http.StatusNotFound, codeNotFound)
	if r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("Allow = %q", r.Header.Get("Allow"))
	}
	wantError(t, h.post(path+":pause", acmeKey, `{}`), http.StatusNotFound, codeNotFound)

	// The percent-encoded id with an encoded colon is the same run.
	r = h.post(encoded(c.RunID)+"%3Acancel", acmeKey, `{"reason":"colon"}`)
	wantStatus(t, r, http.StatusOK)
	got := decode[map[string]any](t, r)
	if got["runId"] != c.RunID || (got["status"] != "cancelling" && got["status"] != "cancelled") {
		t.Errorf("cancel answer %s", r.Body)
	}
	h.waitStatus(acmeKey, path, "cancelled")
	wantError(t, h.post(path+":cancel", acmeKey, ""), http.StatusConflict, codeRunTerminal)
}

// A drain ends open A2A streams, so a subscription does not hold the
// shutdown up.
func TestDrainEndsA2AStreams(t *testing.T) {
	h := newTestHost(t)
	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "drain-1", "")))
	rq, _ := http.NewRequest("POST", h.url+a2aPath, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"`+string(task.ID)+`"}}`))
	rq.Header.Set("Authorization", "Bearer "+acmeKey)
	rq.Header.Set("Content-Type", "application/json")
	rq.Header.Set("A2A-Version", "1.0")
	resp, err := h.client.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("subscribe: %d %v", resp.StatusCode, resp.Header)
	}
	ended := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				close(ended)
				return
			}
		}
	}()
	h.drain()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription outlived the drain")
	}
}

func TestParseRoutingSecret(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab, 0x01}, 16)
	for _, tt := range []struct {
		in      string
		want    []byte
		wantErr string
	}{
		{hex.EncodeToString(raw), raw, ""},
		{base64.StdEncoding.EncodeToString(raw), raw, ""},
		{base64.RawURLEncoding.EncodeToString(raw), raw, ""},
		{"  " + hex.EncodeToString(raw) + "\n", raw, ""},
		{hex.EncodeToString(raw[:31]), nil, "decodes to 31 bytes, at least 32"},
		{"not a secret!", nil, "not hex or base64"},
	} {
		got, err := parseRoutingSecret(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), strings.TrimSpace(tt.in)) {
				t.Errorf("%q: %v, want %q without the value", tt.in, err, tt.wantErr)
			}
		case err != nil || !bytes.Equal(got, tt.want):
			t.Errorf("%q = %x, %v", tt.in, got, err)
		}
	}
	if a, b := randomRoutingSecret(), randomRoutingSecret(); len(a) != 32 || bytes.Equal(a, b) {
		t.Error("the default secret is not fresh 32 bytes")
	}
}

// The flag reaches the routing values: two hosts given one secret publish
// one a2aTenant, and a bad value is a usage error that never echoes it.
func TestRoutingSecretFlag(t *testing.T) {
	secret := strings.Repeat("5a", 32)
	first, second := runTenant(t, secret), runTenant(t, secret)
	if first == "" || first != second {
		t.Errorf("a2aTenant %q then %q with one -routing-secret", first, second)
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-routing-secret", "abcd"}, &bytes.Buffer{}, &stderr, nil); code != exitUsage ||
		!strings.Contains(stderr.String(), "invalid -routing-secret: decodes to 2 bytes") || strings.Contains(stderr.String(), "abcd") {
		t.Errorf("short secret: exit %d %q", code, stderr.String())
	}
}

// runTenant starts run with -routing-secret, reads the demo agent's
// a2aTenant and stops it.
func runTenant(t *testing.T, secret string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{lines: make(chan string, 4)}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-routing-secret", secret}, out, &bytes.Buffer{}, nil)
	}()
	defer func() { cancel(); <-done }()
	var base string
	select {
	case line := <-out.lines:
		var ok bool
		if base, ok = listeningURL(line); !ok {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no listening line")
	}
	rq, _ := http.NewRequest("GET", base+"/agents", nil)
	rq.Header.Set("Authorization", "Bearer "+acmeKey)
	resp, err := http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var inv struct {
		Agents []struct {
			A2ATenant string `json:"a2aTenant"`
		} `json:"agents"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&inv); err != nil || len(inv.Agents) == 0 {
		t.Fatalf("agents: %v", err)
	}
	return inv.Agents[0].A2ATenant
}

// lineWriter hands each written line to a channel.
type lineWriter struct {
	buf   []byte
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- string(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

// FuzzParseRoutingSecret: any -routing-secret value either decodes to at
// least 32 bytes or is refused with an error that never repeats it.
func FuzzParseRoutingSecret(f *testing.F) {
	for _, seed := range []string{strings.Repeat("ab", 32), base64.StdEncoding.EncodeToString(make([]byte, 40)), "", "zz", "==", strings.Repeat("a", 43)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, err := parseRoutingSecret(in)
		if err == nil && len(b) < 32 {
			t.Fatalf("%q accepted with %d bytes", in, len(b))
		}
		if err != nil && len(strings.TrimSpace(in)) >= 8 && strings.Contains(err.Error(), strings.TrimSpace(in)) {
			t.Fatalf("the error repeats the value: %v", err)
		}
	})
}
