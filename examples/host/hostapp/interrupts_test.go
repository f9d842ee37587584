package hostapp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

// The interrupt fixtures as the OpenWOP suite drives them, end to end on
// every surface that resolves interrupts: REST resolve, A2A SendMessage,
// MCP MRTR retries and tasks/update.

// listedKey authenticates acme's ListedApprover. No -keys entry can name a
// principal, so the tests add it beside the demo keys.
const listedKey = "listed-approver-key"

func withListedApprover(c *config) {
	c.Auth = listedApproverAuth{c.Auth}
}

type listedApproverAuth struct{ interop.SubjectResolver }

func (a listedApproverAuth) ResolveSubject(r *http.Request) (interop.Subject, error) {
	if r.Header.Get("Authorization") == "Bearer "+listedKey {
		return interop.Subject{Tenant: tenantAcme, Principal: memstore.ListedApprover, Authenticated: true}, nil
	}
	return a.SubjectResolver.ResolveSubject(r)
}

// suspended starts workflow as acme and waits until it is suspended
// (status want); it returns the run's path, its snapshot bytes, the
// decoded snapshot and the last poll.
func (h *testHost) suspended(key, workflow, want string) (string, response, snapshot, poll) {
	h.t.Helper()
	c := h.start(key, workflow, "")
	path := strings.TrimPrefix(c.StatusURL, h.url)
	p := h.waitStatus(key, path, want)
	r := h.get(path, key)
	wantStatus(h.t, r, http.StatusOK)
	snap := decode[snapshot](h.t, r)
	if len(snap.Interrupts) != 1 {
		h.t.Fatalf("%s: %s", workflow, r.Body)
	}
	return path, r, snap, p
}

// unchanged fails unless the run still reads byte for byte as before and
// its log has no new event.
func (h *testHost) unchanged(key, path string, before response, p poll) {
	h.t.Helper()
	if after := h.get(path, key); !bytes.Equal(after.Body, before.Body) {
		h.t.Errorf("a refused answer changed the run:\n%s\nthen\n%s", before.Body, after.Body)
	}
	if q := decode[poll](h.t, h.get(path+"/events/poll?timeout=0&afterSequence="+itoa(p.LastSequence), key)); len(q.Events) != 0 {
		h.t.Errorf("a refused answer appended %+v", q.Events)
	}
}

// taskOf is the MCP taskId of a run path: its projected id.
func taskOf(path string) string { return strings.TrimPrefix(path, "/runs/") }

// TestApprovalApproversEverySurface: conformance-approval-approvers may be
// resolved by ListedApprover alone. The run's own creator is refused over
// REST, A2A and MCP tasks/update, each in its protocol's shape, and the
// run does not change; the listed principal resolves it on each surface
// (OpenWOP interrupt §Approver enforcement).
func TestApprovalApproversEverySurface(t *testing.T) {
	h := newTestHost(t, withListedApprover)
	path, before, snap, p := h.suspended(acmeKey, memstore.FixtureApprovalApprovers, "waiting-approval")
	in := snap.Interrupts[0]
	runID := snap.RunID

	// REST resolve.
	r := h.post(strings.TrimPrefix(in.ResolveURL, h.url), acmeKey, `{"resumeValue":{"action":"accept"}}`)
	wantError(t, r, http.StatusForbidden, codeForbidden)
	if string(r.Body) != `{"error":"forbidden","message":"the caller may not resolve this interrupt"}`+"\n" {
		t.Errorf("REST refusal %s", r.Body)
	}
	h.unchanged(acmeKey, path, before, p)

	// A2A: a message answering the task.
	r = h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"approvers-acme","taskId":"`+runID+
		`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`)
	if r.Status != http.StatusOK || string(r.Body) != `{"jsonrpc":"2.0","id":7,"error":{"code":-31403,"message":"not allowed","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"PERMISSION_DENIED","domain":"a2a-protocol.org"}]}}` {
		t.Errorf("A2A refusal %d %s", r.Status, r.Body)
	}
	h.unchanged(acmeKey, path, before, p)

	// MCP: tasks/update of the run, which is the task.
	task := taskOf(path)
	r, dec := h.mcp(mcpReq{Key: acmeKey, Method: "tasks/update", Name: task, Caps: withTasks, Params: map[string]any{"taskId": task,
		"inputResponses": map[string]any{in.InterruptID: map[string]any{"action": "accept", "content": map[string]any{"action": "accept"}}}}})
	wantRPCError(t, r, dec, http.StatusBadRequest, -32602)
	if dec.Error.Message != "Invalid params: the caller may not answer this input request" || dec.Error.Data["reason"] != "not_eligible" {
		t.Errorf("MCP refusal %s", r.Body)
	}
	h.unchanged(acmeKey, path, before, p)

	// The listed principal resolves it, on each surface in turn.
	r = h.post(strings.TrimPrefix(in.ResolveURL, h.url), listedKey, `{"resumeValue":{"action":"accept"}}`)
	wantStatus(t, r, http.StatusOK)
	h.waitStatus(acmeKey, path, "completed")

	path, _, snap, _ = h.suspended(acmeKey, memstore.FixtureApprovalApprovers, "waiting-approval")
	task2 := rpcTask(t, h.rpc(listedKey, "1.0", `{"jsonrpc":"2.0","id":8,"method":"SendMessage","params":{"message":{"messageId":"approvers-listed","taskId":"`+snap.RunID+
		`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`))
	if task2.ID != wire.TaskID(snap.RunID) || task2.Status.State != wire.TaskStateCompleted {
		t.Errorf("A2A answer by the listed approver: %+v", task2.Status)
	}

	path, _, snap, _ = h.suspended(acmeKey, memstore.FixtureApprovalApprovers, "waiting-approval")
	task = taskOf(path)
	r, dec = h.mcp(mcpReq{Key: listedKey, Method: "tasks/update", Name: task, Caps: withTasks, Params: map[string]any{"taskId": task,
		"inputResponses": map[string]any{snap.Interrupts[0].InterruptID: map[string]any{"action": "accept", "content": map[string]any{"action": "accept"}}}}})
	wantStatus(t, r, http.StatusOK)
	if dec.Error != nil || dec.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update by the listed approver: %s", r.Body)
	}
	h.waitStatus(acmeKey, path, "completed")
}

// mcpRound is the first round of a tools/call of workflow declaring caps.
func (h *testHost) mcpRound(key, workflow string, caps map[string]any) (response, mcpResult) {
	h.t.Helper()
	return h.mcp(mcpReq{Key: key, Method: "tools/call", Name: workflow, Caps: caps,
		Params: map[string]any{"name": workflow, "arguments": map[string]any{}}})
}

// inputRequest is the one input request of an input_required answer.
func inputRequest(t *testing.T, r response, dec mcpResult) (id string, mode string, params map[string]any) {
	t.Helper()
	requests, _ := dec.Result["inputRequests"].(map[string]any)
	if dec.Result["resultType"] != "input_required" || len(requests) != 1 {
		t.Fatalf("not one input request: %s", r.Body)
	}
	for k, v := range requests {
		req, _ := v.(map[string]any)
		params, _ = req["params"].(map[string]any)
		mode, _ = params["mode"].(string)
		if req["method"] != "elicitation/create" {
			t.Fatalf("input request %v", req)
		}
		return k, mode, params
	}
	return "", "", nil
}

// wantToolError checks a CallToolResult with isError true: the input
// cannot be asked over MCP with what the request declared.
func wantToolError(t *testing.T, r response, dec mcpResult) {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	if dec.Error != nil || dec.Result["resultType"] != "complete" || dec.Result["isError"] != true || dec.Result["inputRequests"] != nil {
		t.Errorf("want an isError result: %s", r.Body)
	}
}

var (
	formCaps = map[string]any{capElicitation: map[string]any{"form": map[string]any{}}}
	urlCaps  = map[string]any{capElicitation: map[string]any{"url": map[string]any{}}}
	bothCaps = map[string]any{capElicitation: map[string]any{"form": map[string]any{}, "url": map[string]any{}}}
)

// A flat clarification is asked in form mode and the answer completes it.
func TestClarificationOverMCP(t *testing.T) {
	h := newTestHost(t)
	r, dec := h.mcpRound(acmeKey, memstore.FixtureClarification, formCaps)
	id, mode, params := inputRequest(t, r, dec)
	schema, _ := json.Marshal(params["requestedSchema"])
	if mode != "form" || params["message"] != "What should the workflow call you?" ||
		string(schema) != `{"properties":{"name":{"description":"What the workflow should call you.","title":"Name","type":"string"}},"required":["name"],"type":"object"}` {
		t.Fatalf("clarification asked as %s", r.Body)
	}
	r, dec = h.mcp(mcpReq{Key: acmeKey, Method: "tools/call", Name: memstore.FixtureClarification, Caps: formCaps,
		Params: map[string]any{"name": memstore.FixtureClarification, "arguments": map[string]any{}, "requestState": dec.Result["requestState"],
			"inputResponses": map[string]any{id: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}})
	wantStatus(t, r, http.StatusOK)
	if sc, _ := json.Marshal(dec.Result["structuredContent"]); dec.Result["isError"] != false || string(sc) != `{"answer":{"name":"Ada"}}` {
		t.Errorf("answered clarification: %s", r.Body)
	}
}

// A nested or secret answer is never asked in a form: with only form mode
// declared the call is an isError result; with URL mode it is asked at the
// interrupt's page, where GET shows what is asked and POST answers it.
// The secret field is not asked in a form even when both modes are
// declared, nor on a task (MCP elicitation §Security; RFC 0199 §C.6).
func TestNestedAndSensitiveClarificationsOverMCP(t *testing.T) {
	h := newTestHost(t)
	for _, tt := range []struct {
		workflow, answer, output string
	}{
		{memstore.FixtureClarificationNested, `{"address":{"city":"Paris"}}`, `{"answer":{"address":{"city":"Paris"}}}`},
		{memstore.FixtureClarificationSensitive, `{"passphrase":"correct horse"}`, `{"received":true}`},
	} {
		t.Run(tt.workflow, func(t *testing.T) {
			r, dec := h.mcpRound(acmeKey, tt.workflow, formCaps)
			wantToolError(t, r, dec)

			for _, caps := range []map[string]any{urlCaps, bothCaps} {
				r, dec = h.mcpRound(acmeKey, tt.workflow, caps)
				id, mode, params := inputRequest(t, r, dec)
				url, _ := params["url"].(string)
				runID, _, _ := strings.Cut(strings.TrimPrefix(url, h.url+"/runs/"), "/")
				if mode != "url" || params["requestedSchema"] != nil || url != h.url+"/runs/"+runID+"/interrupts/"+isolation.Project(id) {
					t.Fatalf("asked as %s", r.Body)
				}
				// The page: the same Subject reads what is asked …
				page := h.get(strings.TrimPrefix(url, h.url), acmeKey)
				wantStatus(t, page, http.StatusOK)
				var got struct {
					InterruptID  string          `json:"interruptId"`
					Kind         string          `json:"kind"`
					ResolveURL   string          `json:"resolveUrl"`
					ResumeSchema json.RawMessage `json:"resumeSchema"`
				}
				if err := json.Unmarshal(page.Body, &got); err != nil || got.InterruptID != id || got.Kind != "clarification" || got.ResolveURL != url || len(got.ResumeSchema) == 0 {
					t.Fatalf("interrupt page %s", page.Body)
				}
				// … another tenant learns nothing …
				wantError(t, h.get(strings.TrimPrefix(url, h.url), globexKey), http.StatusForbidden, codeTenantMismatch)
				// … and POST answers it, out of the MCP client's hands.
				wantStatus(t, h.post(strings.TrimPrefix(url, h.url), acmeKey, `{"resumeValue":`+tt.answer+`}`), http.StatusOK)
				done := h.waitStatus(acmeKey, "/runs/"+runID, "completed")
				if done.Status != "completed" {
					t.Fatal(done)
				}
				snap := decode[snapshot](t, h.get("/runs/"+runID, acmeKey))
				if string(snap.Outputs) != tt.output {
					t.Errorf("outputs %s", snap.Outputs)
				}
				// The page of an answered interrupt is gone.
				wantError(t, h.get(strings.TrimPrefix(url, h.url), acmeKey), http.StatusNotFound, codeNotFound)
			}
			if strings.Contains(h.logs.String(), "correct horse") {
				t.Errorf("the secret answer reached the log:\n%s", h.logs.String())
			}

			// On a task, too, the input is asked at the page, never in a form.
			r, dec = h.mcp(mcpReq{Key: acmeKey, Method: "tools/call", Name: tt.workflow, Caps: withTasks,
				Params: map[string]any{"name": tt.workflow, "arguments": map[string]any{}}})
			task, _ := dec.Result["taskId"].(string)
			if dec.Result["resultType"] != "task" {
				t.Fatalf("task: %s", r.Body)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				r, dec = h.mcp(mcpReq{Key: acmeKey, Method: "tasks/get", Name: task, Caps: withTasks, Params: map[string]any{"taskId": task}})
				if dec.Result["status"] == "input_required" || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if _, mode, params := inputRequest(t, r, mcpResult{Result: map[string]any{"resultType": "input_required", "inputRequests": dec.Result["inputRequests"]}}); mode != "url" || params["requestedSchema"] != nil {
				t.Errorf("task asks %s", r.Body)
			}
		})
	}
}

// conformance-credential: over A2A the run is TASK_STATE_AUTH_REQUIRED,
// its status message naming the provider and the connectUrl on the
// host's own origin; over MCP the connectUrl is asked in URL mode, and
// without URL mode the call is an isError result; over REST an
// "authorized" answer is refused while no credential resolves and
// "declined" fails the run (OpenWOP oauth §The credential interrupt, RFC
// 0199 §C–§D).
func TestCredentialFixtureEverySurface(t *testing.T) {
	h := newTestHost(t)
	connect := h.url + connectPath
	path, before, snap, p := h.suspended(acmeKey, memstore.FixtureCredential, "waiting-input")
	if snap.Interrupts[0].Kind != "credential" {
		t.Fatalf("interrupt %+v", snap.Interrupts[0])
	}

	task := rpcTask(t, h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+snap.RunID+`"}}`))
	var text string
	if task.Status.Message != nil {
		for _, part := range task.Status.Message.Parts {
			text += part.Text()
		}
	}
	ow, _ := task.Metadata["openwop"].(map[string]any)
	interrupt, _ := ow["interrupt"].(map[string]any)
	if task.Status.State != wire.TaskStateAuthRequired || interrupt["kind"] != "credential" ||
		!strings.Contains(text, memstore.CredentialProvider) || !strings.Contains(text, connect) {
		t.Errorf("A2A task %+v metadata %v, message %q", task.Status, task.Metadata, text)
	}

	r, dec := h.mcpRound(acmeKey, memstore.FixtureCredential, urlCaps)
	if _, mode, params := inputRequest(t, r, dec); mode != "url" || params["url"] != connect {
		t.Errorf("MCP asks %s", r.Body)
	}
	r, dec = h.mcpRound(acmeKey, memstore.FixtureCredential, formCaps)
	wantToolError(t, r, dec)

	resolve := strings.TrimPrefix(snap.Interrupts[0].ResolveURL, h.url)
	r = h.post(resolve, acmeKey, `{"resumeValue":{"outcome":"authorized"}}`)
	if d := wantError(t, r, http.StatusBadRequest, codeValidation); d["field"] != "resumeValue" {
		t.Errorf("authorized without a credential: %s", r.Body)
	}
	h.unchanged(acmeKey, path, before, p)
	wantStatus(t, h.post(resolve, acmeKey, `{"resumeValue":{"outcome":"declined"}}`), http.StatusOK)
	h.waitStatus(acmeKey, path, "failed")
	if s := decode[snapshot](t, h.get(path, acmeKey)); s.Error == nil || s.Error.Message != memstore.FixtureCredentialDeclinedMessage {
		t.Errorf("declined: %+v", s.Error)
	}
}

// On an origin that is neither https nor loopback no credential interrupt
// is offered: conformance-credential is not registered or listed, and
// discovery carries no oauth record.
func TestNoCredentialFixtureOffAnInsecureOrigin(t *testing.T) {
	const base = "http://192.0.2.7:8080"
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	keys, _ := parseKeys(defaultKeys)
	if err := seed(store, newBearerKeys(keys).Tenants(), base); err != nil {
		t.Fatal(err)
	}
	wfs, err := store.ListWorkflows(t.Context(), interop.Subject{Tenant: tenantAcme, Principal: "key:acme", Authenticated: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wfs {
		if w.ID == memstore.FixtureCredential {
			t.Error("conformance-credential registered on an http origin")
		}
	}
	doc, err := newDiscoveryDocument("1", base, false, map[string]json.RawMessage{"a2a": []byte("{}"), "mcp": []byte("{}"), "agents": []byte("{}"), "hostEvents": []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(doc.body, []byte(`"oauth"`)) || bytes.Contains(doc.body, []byte(memstore.FixtureCredential)) {
		t.Errorf("discovery %s", doc.body)
	}
}

// The page's bytes: an approval (its approvers and data stay on the
// host) and a credential interrupt (provider, scopes, reason, connectUrl).
func TestInterruptPageGolden(t *testing.T) {
	l := links{base: "https://host.example"}
	approval := interop.Interrupt{
		ID: "acme/INT0000000000000000000001", Kind: interop.InterruptApproval, Key: "approval", NodeID: "gate",
		Message: "Approve <the> request?", Actions: []string{"accept", "reject"}, Approvers: []string{memstore.ListedApprover},
		ResumeSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["accept","reject"]}},"required":["action"]}`),
		Data:         json.RawMessage(`{"secret":"not shown"}`),
	}
	cred := interop.CredentialData{Provider: "synthetic", Scopes: []string{"openwop.read"}, Reason: "missing", ConnectURL: "https://host.example/connect/synthetic"}
	credential := interop.Interrupt{
		ID: "acme/INT0000000000000000000002", Kind: interop.InterruptCredential, Key: "credential", NodeID: "use-credential",
		Message: "Connect your synthetic account to continue.", Credential: &cred,
	}
	var all []byte
	for _, in := range []interop.Interrupt{approval, credential} {
		b, err := encodeJSON(l.interruptPage("acme/RUN0000000000000000000001", in))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	golden.Check(t, "interrupt-page.jsonl", all)
}
