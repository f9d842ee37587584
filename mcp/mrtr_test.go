package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// inputRequired decodes an InputRequiredResult.
type inputRequired struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string `json:"method"`
		Params struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
			URL             string          `json:"url"`
		} `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

// key returns the single inputRequests key.
func (ir inputRequired) key(t testing.TB) string {
	t.Helper()
	if len(ir.InputRequests) != 1 {
		t.Fatalf("want one input request, have %d", len(ir.InputRequests))
	}
	for k := range ir.InputRequests {
		return k
	}
	return ""
}

func asInputRequired(t testing.TB, body []byte) inputRequired {
	t.Helper()
	var r struct {
		Result inputRequired `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("want an InputRequiredResult with requestState, got %s", body)
	}
	return r.Result
}

// call sends tools/call name with elicitation declared.
func (e *env) call(name string, extra map[string]any) rpc {
	params := map[string]any{"name": name}
	for k, v := range extra {
		params[k] = v
	}
	return rpc{method: "tools/call", caps: `{"elicitation":{}}`, params: params}
}

func (e *env) ask(t testing.TB, q rpc) inputRequired {
	t.Helper()
	rec := e.do(q)
	return asInputRequired(t, rec.Body.Bytes())
}

func retryWith(q rpc, state string, responses map[string]any) rpc {
	params := map[string]any{}
	for k, v := range q.params {
		params[k] = v
	}
	params["requestState"] = state
	if responses != nil {
		params["inputResponses"] = responses
	}
	q.params = params
	q.id = "2"
	return q
}

func toolResult(t testing.TB, res map[string]any) (text string, isError bool) {
	t.Helper()
	if res["resultType"] != "complete" {
		t.Fatalf("resultType = %v: %v", res["resultType"], res)
	}
	content := res["content"].([]any)
	return content[0].(map[string]any)["text"].(string), res["isError"].(bool)
}

// TestMRTRApproval: the conformance-approval fixture round trip through
// MRTR for each ElicitResult action (OpenWOP interop map, mcp.mrtr).
func TestMRTRApproval(t *testing.T) {
	cases := []struct {
		name     string
		response map[string]any
		text     string
		isError  bool
		status   interop.RunStatus
	}{
		{"accept", map[string]any{"action": "accept"}, `{"approved":true}`, false, interop.StatusCompleted},
		{"accept with an action", map[string]any{"action": "accept", "content": map[string]any{"action": "accept"}}, `{"approved":true}`, false, interop.StatusCompleted},
		{"accept choosing reject", map[string]any{"action": "accept", "content": map[string]any{"action": "reject"}}, memstore.FixtureRejectedMessage, true, interop.StatusFailed},
		{"decline", map[string]any{"action": "decline"}, memstore.FixtureRejectedMessage, true, interop.StatusFailed},
		{"cancel", map[string]any{"action": "cancel"}, "The tool call was cancelled.", true, interop.StatusCancelled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.call("conformance-approval", nil)
			ir := e.ask(t, q)
			run := e.onlyRun(alice)
			key := ir.key(t)
			if run.Status != interop.StatusWaitingApproval || len(run.Interrupts) != 1 || run.Interrupts[0].ID != key {
				t.Fatalf("key %q is not the open interrupt of %+v", key, run)
			}
			if !strings.Contains(key, "/") {
				t.Errorf("key %q is not tenant-bound", key)
			}
			if p := ir.InputRequests[key]; p.Method != "elicitation/create" || p.Params.Mode != "form" {
				t.Errorf("input request = %+v", p)
			}
			text, isError := toolResult(t, result(t, e.do(retryWith(q, ir.RequestState, map[string]any{key: tc.response}))))
			if text != tc.text || isError != tc.isError {
				t.Errorf("result = %q isError=%v, want %q isError=%v", text, isError, tc.text, tc.isError)
			}
			if got := e.onlyRun(alice).Status; got != tc.status {
				t.Errorf("run status = %s, want %s", got, tc.status)
			}
		})
	}
}

// TestMRTRKeysAreInterruptIDs: two runs suspended at the same node get
// different keys (OpenWOP interop map, mcp.mrtr).
func TestMRTRKeysAreInterruptIDs(t *testing.T) {
	e := newEnv(t)
	k1 := e.ask(t, e.call("conformance-approval", nil)).key(t)
	k2 := e.ask(t, e.call("conformance-approval", nil)).key(t)
	if k1 == k2 {
		t.Fatalf("both runs got key %q", k1)
	}
}

// TestMRTRForm: a form answer's content is the resume value.
func TestMRTRForm(t *testing.T) {
	e := newEnv(t)
	q := e.call(wfAskName, nil)
	ir := e.ask(t, q)
	key := ir.key(t)
	res := result(t, e.do(retryWith(q, ir.RequestState, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, "extra-key": map[string]any{"anything": 1}})))
	if text, isError := toolResult(t, res); text != `{"name":"Ada"}` || isError {
		t.Fatalf("result %q isError=%v", text, isError)
	}
}

// TestMRTRRefusedContent: content the store refuses is -32602 naming the
// field, and the run keeps waiting.
func TestMRTRRefusedContent(t *testing.T) {
	e := newEnv(t)
	q := e.call(wfAskName, nil)
	ir := e.ask(t, q)
	before := e.onlyRun(alice)
	rec := e.do(retryWith(q, ir.RequestState, map[string]any{ir.key(t): map[string]any{"action": "accept", "content": map[string]any{"name": 5}}}))
	r := wantError(t, rec, 400, codeInvalidParams)
	if !bytes.Contains(r.Error.Data, []byte(`"field":"resumeValue/name"`)) {
		t.Errorf("data = %s", r.Error.Data)
	}
	e.unchanged(before)
}

// unchanged checks that run still has the status and log it had.
func (e *env) unchanged(before interop.Run) {
	e.t.Helper()
	now, err := e.store.GetRun(testCtx(e.t), alice, before.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if now.Status != before.Status || now.LastSequence != before.LastSequence {
		e.t.Fatalf("run changed: %s/%d → %s/%d", before.Status, before.LastSequence, now.Status, now.LastSequence)
	}
}

// TestMRTRMultiRound: each round asks the next open interrupt with a new
// state; a retry missing the key asks again instead of failing.
func TestMRTRMultiRound(t *testing.T) {
	e := newEnv(t)
	q := e.call(wfTwoSteps, nil)
	ir1 := e.ask(t, q)
	k1 := ir1.key(t)

	// No answer for the key: asked again, same key, new state.
	rec := e.do(retryWith(q, ir1.RequestState, map[string]any{"unrelated": map[string]any{"action": "accept"}}))
	again := asInputRequired(t, rec.Body.Bytes())
	if again.key(t) != k1 || again.RequestState == ir1.RequestState {
		t.Fatalf("re-ask: key %q state reused=%v", again.key(t), again.RequestState == ir1.RequestState)
	}
	// The first state was consumed by that retry.
	wantError(t, e.do(retryWith(q, ir1.RequestState, map[string]any{k1: map[string]any{"action": "accept", "content": map[string]any{"name": "a"}}})), 400, codeInvalidParams)

	rec = e.do(retryWith(q, again.RequestState, map[string]any{k1: map[string]any{"action": "accept", "content": map[string]any{"name": "a"}}}))
	ir2 := asInputRequired(t, rec.Body.Bytes())
	k2 := ir2.key(t)
	if k2 == k1 {
		t.Fatal("the second round asked the first interrupt again")
	}
	res := result(t, e.do(retryWith(q, ir2.RequestState, map[string]any{k2: map[string]any{"action": "accept", "content": map[string]any{"name": "b"}}})))
	if text, isError := toolResult(t, res); text != `{"done":true}` || isError {
		t.Fatalf("result %q isError=%v", text, isError)
	}
}

// TestMRTRStateRefusals: a forged, replayed, expired or foreign
// requestState, or one for another request, is one identical -32602 and
// changes nothing (OpenWOP interop map, mcp.mrtr).
func TestMRTRStateRefusals(t *testing.T) {
	e := newEnv(t)
	q := e.call("conformance-approval", map[string]any{"arguments": map[string]any{"message": "m"}})
	ir := e.ask(t, q)
	key := ir.key(t)
	run := e.onlyRun(alice)
	accept := map[string]any{key: map[string]any{"action": "accept"}}

	// Consume one state with a retry that answers nothing, so there is a
	// replay to try; the run keeps waiting.
	rec := e.do(retryWith(q, ir.RequestState, map[string]any{}))
	fresh := asInputRequired(t, rec.Body.Bytes())
	run = e.waitStatus(alice, run.ID, interop.StatusWaitingApproval)

	forged := []byte(fresh.RequestState)
	forged[len(forged)-3] ^= 1
	otherArgs := retryWith(q, fresh.RequestState, accept)
	otherArgs.params["arguments"] = map[string]any{"message": "changed"}
	otherTool := retryWith(q, fresh.RequestState, accept)
	otherTool.params["name"] = "conformance-noop"
	otherTool.hdr = map[string]string{"Mcp-Name": "conformance-noop"}
	bob := retryWith(q, fresh.RequestState, accept)
	bob.as = "acme:bob"
	foreignTenant := retryWith(q, fresh.RequestState, accept)
	foreignTenant.as = "globex:alice"

	const refusal = `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: requestState is not valid for this request"}}`
	for name, attempt := range map[string]rpc{
		"forged":          retryWith(q, string(forged), accept),
		"garbage":         retryWith(q, "not-a-state", accept),
		"replayed":        retryWith(q, ir.RequestState, accept),
		"other principal": bob,
		"other tenant":    foreignTenant,
		"other arguments": otherArgs,
		"other tool":      otherTool,
	} {
		rec := e.do(attempt)
		if rec.Code != http.StatusBadRequest || rec.Body.String() != refusal {
			t.Errorf("%s: got %d %s", name, rec.Code, rec.Body)
		}
	}
	e.unchanged(run)

	// Expired: the clock passes the sealer's TTL.
	e.clock.advance(2 * time.Minute)
	rec = e.do(retryWith(q, fresh.RequestState, accept))
	if rec.Code != http.StatusBadRequest || rec.Body.String() != refusal {
		t.Errorf("expired: got %d %s", rec.Code, rec.Body)
	}
	e.unchanged(run)
	if n := e.runsOf(alice).Total; n != 1 {
		t.Errorf("refused retries created runs: %d", n)
	}
}

// TestMRTRMalformedResponses: inputResponses that are not result objects
// are -32602 and change nothing.
func TestMRTRMalformedResponses(t *testing.T) {
	e := newEnv(t)
	q := e.call("conformance-approval", nil)
	ir := e.ask(t, q)
	key := ir.key(t)
	run := e.onlyRun(alice)
	for _, responses := range []any{"nope", []any{1}, map[string]any{key: "accept"}, map[string]any{key: map[string]any{"action": "maybe"}}, map[string]any{key: map[string]any{"action": "accept", "content": "x"}}} {
		qq := retryWith(q, ir.RequestState, nil)
		qq.params["inputResponses"] = responses
		wantError(t, e.do(qq), 400, codeInvalidParams)
		e.unchanged(run)
	}
	// Answers without a requestState start nothing.
	qq := e.call("conformance-approval", map[string]any{"inputResponses": map[string]any{key: map[string]any{"action": "accept"}}})
	wantError(t, e.do(qq), 400, codeInvalidParams)
	if n := e.runsOf(alice).Total; n != 1 {
		t.Fatalf("inputResponses without a state created a run")
	}
}

// TestMRTRMaxRounds: a retry beyond mcp.mrtr.maxRounds is -32602 with
// reason mcp_mrtr_rounds_exceeded and changes nothing (OpenWOP interop.md §The MCP round ceiling).
func TestMRTRMaxRounds(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.MaxRounds = 2 })
	q := e.call("conformance-approval", nil)
	ir := e.ask(t, q) // round 1
	for range 2 {     // rounds 2 and 3 are asked; retries 1 and 2 are allowed
		rec := e.do(retryWith(q, ir.RequestState, nil))
		ir = asInputRequired(t, rec.Body.Bytes())
	}
	run := e.onlyRun(alice)
	rec := e.do(retryWith(q, ir.RequestState, map[string]any{ir.key(t): map[string]any{"action": "accept"}}))
	r := wantError(t, rec, 400, codeInvalidParams)
	if string(r.Error.Data) != `{"reason":"mcp_mrtr_rounds_exceeded","maxRounds":2}` {
		t.Errorf("data = %s", r.Error.Data)
	}
	e.unchanged(run)
}

// TestMRTRNotEligible: the store decides who may answer; a non-approver's
// answer is -32602 and the run keeps waiting (OpenWOP interrupt.md §Approver enforcement; interop map, mcp.mrtr).
func TestMRTRNotEligible(t *testing.T) {
	e := newEnv(t)
	err := e.store.Register(tenantA, memstore.WorkflowDef{
		Workflow: interop.Workflow{ID: "carol-approves"},
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			_, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptApproval, Key: "a", NodeID: "a", Message: "ok?", Actions: []string{"accept", "reject"}, Approvers: []string{"carol"}})
			return nil, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := e.call("carol-approves", nil)
	ir := e.ask(t, q)
	run := e.onlyRun(alice)
	r := wantError(t, e.do(retryWith(q, ir.RequestState, map[string]any{ir.key(t): map[string]any{"action": "accept"}})), 400, codeInvalidParams)
	if string(r.Error.Data) != `{"reason":"not_eligible"}` {
		t.Errorf("data = %s", r.Error.Data)
	}
	e.unchanged(run)
}

// TestMRTRCredential: a credential interrupt is asked in URL mode with its
// connectUrl; the accept retry asks the host to re-check.
func TestMRTRCredential(t *testing.T) {
	e := newEnv(t)
	q := e.call(wfCredential, nil)
	q.caps = `{"elicitation":{"url":{}}}`
	ir := e.ask(t, q)
	key := ir.key(t)
	if p := ir.InputRequests[key].Params; p.Mode != "url" || p.URL != "https://host.example/connect/github" || p.RequestedSchema != nil {
		t.Fatalf("params = %+v", p)
	}
	res := result(t, e.do(retryWith(q, ir.RequestState, map[string]any{key: map[string]any{"action": "accept"}})))
	if text, isError := toolResult(t, res); text != `{"connected":true}` || isError {
		t.Fatalf("result %q isError=%v", text, isError)
	}
}

// TestFormSchema: which resume schemas may be asked in form mode
// (OpenWOP interop map, mcp.mrtr; RFC 0199 §D.2): flat objects of primitives only, never a secret.
func TestFormSchema(t *testing.T) {
	cases := []struct {
		schema string
		ok     bool
	}{
		{`{"type":"object","properties":{"n":{"type":"string","maxLength":3},"b":{"type":"boolean","default":true},"i":{"type":"integer","minimum":1}},"required":["n"]}`, true},
		{`{"type":"object","properties":{"e":{"type":"string","enum":["x","y"]},"d":{"type":"string","format":"date"}}}`, true},
		{`{"type":"object","properties":{"p":{"type":"string","format":"password"}}}`, false},
		{`{"type":"object","properties":{"p":{"type":"string","writeOnly":true}}}`, false},
		{`{"type":"object","properties":{"p":{"type":"string","writeOnly":false}}}`, true},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{}}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`, false},
		{`{"type":"object","properties":{"r":{"$ref":"#/$defs/x"}}}`, false},
		{`{"type":"object","$defs":{},"properties":{}}`, false},
		{`{"type":"string"}`, false},
		{`{"type":"object","properties":{"u":{"type":"string","format":"uuid"}}}`, false},
	}
	for _, tc := range cases {
		_, ok := formSchema(interop.Interrupt{Kind: interop.InterruptClarification, ResumeSchema: json.RawMessage(tc.schema)})
		if ok != tc.ok {
			t.Errorf("%s: form = %v, want %v", tc.schema, ok, tc.ok)
		}
	}
	got, ok := formSchema(interop.Interrupt{Kind: interop.InterruptApproval, Actions: []string{"accept", "reject"}})
	if !ok || string(got) != `{"properties":{"action":{"enum":["accept","reject"],"type":"string"}},"required":["action"],"type":"object"}` {
		t.Errorf("approval without schema: %s", got)
	}
}

// credentialRefusingStore refuses a credential resolution the way a host
// does while no credential resolves yet (OpenWOP RFC 0199 §C.4).
type credentialRefusingStore struct{ interop.RunStore }

func (s credentialRefusingStore) ResolveInterrupt(ctx context.Context, sub interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
	return interop.Run{}, &interop.InputError{Field: "resumeValue", Reason: "no credential resolves yet"}
}

// TestMRTRCredentialStillMissing: an accept while the credential is still
// missing asks again with the same URL instead of failing (OpenWOP RFC 0199 §D.2).
func TestMRTRCredentialStillMissing(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.Store = credentialRefusingStore{c.Store} })
	q := e.call(wfCredential, nil)
	q.caps = `{"elicitation":{"url":{}}}`
	ir := e.ask(t, q)
	key := ir.key(t)
	rec := e.do(retryWith(q, ir.RequestState, map[string]any{key: map[string]any{"action": "accept"}}))
	again := asInputRequired(t, rec.Body.Bytes())
	if again.key(t) != key || again.InputRequests[key].Params.URL != ir.InputRequests[key].Params.URL {
		t.Fatalf("re-ask = %+v", again)
	}
}

// TestMRTRInterruptURL: input that cannot be a form goes to the host's
// page in URL mode when the request declared it, and is never asked as a
// form (OpenWOP RFC 0199 §C.6, §D.2; interop map, mcp.mrtr).
func TestMRTRInterruptURL(t *testing.T) {
	e := newEnv(t, func(c *testConfig) {
		c.InterruptURL = func(_ context.Context, s interop.Subject, run interop.Run, in interop.Interrupt) string {
			return "https://host.example/interrupts/" + in.Key + "?for=" + s.Principal
		}
	})
	q := e.call(wfAskSecret, nil)
	q.caps = `{"elicitation":{"form":{},"url":{}}}`
	ir := e.ask(t, q)
	if p := ir.InputRequests[ir.key(t)].Params; p.Mode != "url" || p.URL != "https://host.example/interrupts/apiKey?for=alice" {
		t.Fatalf("params = %+v", p)
	}
	q.caps = `{"elicitation":{"form":{}}}`
	text, isError := toolResult(t, result(t, e.do(q)))
	if !isError || !strings.Contains(text, "out of band") {
		t.Fatalf("form-only caller got %q isError=%v", text, isError)
	}
}
