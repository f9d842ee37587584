package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/outbound"
)

func TestCallCompletes(t *testing.T) {
	f := &fakeCaller{script: answers(t, okResult)}
	s, sink := testSession(f)
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo", Arguments: json.RawMessage(` {"text":"hi","n":[1,2]} `)})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	want := &Result{Content: []Content{{Type: "text", Text: "hello Ada"}}}
	if !reflect.DeepEqual(out.Result, want) || out.Calls != 1 || out.Rounds != 0 || out.Reconciliation != "" || out.StateEchoed {
		t.Fatalf("outcome %+v result %+v", out, out.Result)
	}
	if !strings.HasPrefix(out.AttemptID, "att_") {
		t.Errorf("attempt id %q", out.AttemptID)
	}
	p := f.request(t, 1)
	if p.Name != "echo" || string(p.Arguments) != `{"text":"hi","n":[1,2]}` || p.RequestState != nil || p.InputResponses != nil {
		t.Errorf("request %+v", p)
	}
	// The capabilities declared for this call (none); the connection's
	// tap adds the trace context and go-sdk its protocol keys.
	if len(p.Meta) != 1 || string(p.Meta["io.modelcontextprotocol/clientCapabilities"]) != `{}` {
		t.Errorf("_meta %v", p.Meta)
	}
	if sink.count() != 0 {
		t.Errorf("events %+v, want none for a clean completion", sink.events)
	}
}

func TestCallDeclaresCapabilitiesOnlyOn20260728(t *testing.T) {
	for _, tc := range []struct {
		version string
		caps    *mcp.ElicitationCapabilities
		want    string // "" = key absent
	}{
		{"2026-07-28", formOnly, `{"elicitation":{"form":{}}}`},
		{"2026-07-28", &mcp.ElicitationCapabilities{}, `{"elicitation":{}}`},
		{"2026-07-28", &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}, `{"elicitation":{"url":{}}}`},
		{"2025-11-25", formOnly, ""},
	} {
		f := &fakeCaller{script: answers(t, okResult)}
		s, _ := testSession(f, func(s *Session) { s.Version = tc.version })
		if _, err := s.Call(t.Context(), CallRequest{Tool: "echo", Elicitation: tc.caps, Decide: acceptAll}); err != nil {
			t.Fatal(err)
		}
		got, ok := f.request(t, 1).Meta[mcp.MetaKeyClientCapabilities]
		if string(got) != tc.want || ok != (tc.want != "") {
			t.Errorf("%s %+v: clientCapabilities %s, want %q", tc.version, tc.caps, got, tc.want)
		}
	}
}

func TestCallRefusedBeforeSending(t *testing.T) {
	big := json.RawMessage(`{"x":"` + strings.Repeat("a", 100) + `"}`)
	for _, tc := range []struct {
		name    string
		req     CallRequest
		edit    func(*Session)
		field   string  // a *CallError on field, or
		problem Problem // an *AdmissionError with problem
	}{
		{"unadmitted tool", CallRequest{Tool: "delete_everything"}, nil, "", NotAdmitted},
		{"tool changed since admitted", CallRequest{Tool: "echo"}, func(s *Session) { s.Admission.Tools[0].Digest = strings.Repeat("0", 64) }, "", Changed},
		{"arguments not an object", CallRequest{Tool: "echo", Arguments: json.RawMessage(`[1]`)}, nil, "arguments", ""},
		{"arguments not JSON", CallRequest{Tool: "echo", Arguments: json.RawMessage(`{"a":`)}, nil, "arguments", ""},
		{"arguments too large", CallRequest{Tool: "echo", Arguments: big}, func(s *Session) { s.Admission.Limits.MaxArgumentBytes = 64 }, "arguments", ""},
		{"elicitation without decider", CallRequest{Tool: "ask", Elicitation: formOnly}, nil, "decider", ""},
		{"not connected", CallRequest{Tool: "echo"}, func(s *Session) { s.call = nil }, "session", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeCaller{script: answers(t)}
			s, sink := testSession(f, func(s *Session) {
				if tc.edit != nil {
					tc.edit(s)
				}
			})
			out, err := s.Call(t.Context(), tc.req)
			if out != nil {
				t.Fatalf("outcome %+v for a call never sent", out)
			}
			var ce *CallError
			var ae *AdmissionError
			switch {
			case tc.field != "" && (!errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, ErrCallRefused)):
				t.Fatalf("err %v; want a CallError on %q", err, tc.field)
			case tc.problem != "" && (!errors.As(err, &ae) || ae.Problem != tc.problem || ae.Name != tc.req.Tool):
				t.Fatalf("err %v; want an AdmissionError %q", err, tc.problem)
			}
			if f.calls() != 0 || sink.count() != 0 {
				t.Fatalf("sent %d requests, appended %d events; want none", f.calls(), sink.count())
			}
		})
	}
}

// TestCallPathEnvelopes: the call path's own refusals in the OpenWOP error
// envelope, whole.
func TestCallPathEnvelopes(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		want   string
	}{
		{&CallError{Field: "arguments", Reason: "not a JSON object"}, 400,
			`{"details":{"protocol":"mcp","runId":"tenant-a/run-00000000000000001"},"error":"validation_error","message":"the tool call was refused before it was sent: arguments"}`},
		{&InputError{Reason: InputUndeclared, Request: "who"}, 422,
			`{"details":{"protocol":"mcp","runId":"tenant-a/run-00000000000000001"},"error":"capability_required","message":"the MCP server asked for input the host did not give"}`},
		{ErrUnexpectedResult, 503,
			`{"details":{"protocol":"mcp","runId":"tenant-a/run-00000000000000001"},"error":"runner_unavailable","message":"the MCP server answered with a result the call did not ask for"}`},
	} {
		e, ok := projectCall(testRunID, tc.err)
		if !ok {
			t.Fatalf("%v not projected", tc.err)
		}
		body, _ := json.Marshal(map[string]any{"error": e.Code, "message": e.Message, "details": e.Details})
		if e.Status != tc.status || string(body) != tc.want || !errors.Is(e, tc.err) {
			t.Errorf("%v: %d %s\nwant %d %s", tc.err, e.Status, body, tc.status, tc.want)
		}
	}
	if _, ok := projectCall(testRunID, ErrToolError); ok {
		t.Error("a tool error is the tool's answer, not the call path's refusal")
	}
}

func TestInputRoundsThenComplete(t *testing.T) {
	f := &fakeCaller{script: answers(t, askForm, askAgain, okResult)}
	s, _ := testSession(f)
	var rounds []InputRound
	decide := func(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
		rounds = append(rounds, r)
		id := r.Requests[0].ID
		return map[string]*mcp.ElicitResult{id: {Action: "accept", Content: map[string]any{id: "answer-" + r.Requests[0].ID}}}, nil
	}
	out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Arguments: json.RawMessage(`{"q":1}`), Elicitation: formOnly, Decide: decide})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if out.Calls != 3 || out.Rounds != 2 || !out.StateEchoed || out.Reconciliation != "" || out.Result == nil {
		t.Fatalf("outcome %+v", out)
	}
	// One fresh decision per round, shown only that round's request.
	wantRounds := []InputRound{
		{AttemptID: out.AttemptID, Tool: "ask", Round: 1, Requests: []InputRequest{{ID: "who", Method: "elicitation/create", Mode: "form", Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"properties":{"name":{"type":"string"}},"type":"object"}`)}}},
		{AttemptID: out.AttemptID, Tool: "ask", Round: 2, Requests: []InputRequest{{ID: "color", Method: "elicitation/create", Mode: "form", Message: "Colour?",
			RequestedSchema: json.RawMessage(`{"properties":{"color":{"type":"string"}},"type":"object"}`)}}},
	}
	if !reflect.DeepEqual(rounds, wantRounds) {
		t.Fatalf("decider saw\n%+v\nwant\n%+v", rounds, wantRounds)
	}
	// Every retry is the same invocation: name, arguments and _meta keys
	// repeated, plus that round's answers and state.
	first := f.request(t, 1)
	for n, want := range map[int]struct{ state, responses string }{
		2: {"state-1", `{"who":{"action":"accept","content":{"who":"answer-who"}}}`},
		3: {"state-2", `{"color":{"action":"accept","content":{"color":"answer-color"}}}`},
	} {
		p := f.request(t, n)
		got, _ := json.Marshal(p.InputResponses)
		if p.RequestState == nil || *p.RequestState != want.state || string(got) != want.responses {
			t.Errorf("retry %d: state %v responses %s", n, p.RequestState, got)
		}
		if p.Name != first.Name || string(p.Arguments) != string(first.Arguments) || !reflect.DeepEqual(p.Meta, first.Meta) {
			t.Errorf("retry %d is not the same invocation: %+v vs %+v", n, p, first)
		}
	}
}

// TestRequestStateEchoedExactly: the requestState goes back exactly as the
// server issued it, whatever it holds — escapes, NUL, quotes, HTML
// characters, line separators, astral code points, 64 KiB of it.
func TestRequestStateEchoedExactly(t *testing.T) {
	for _, raw := range []string{
		`"\u0000\"\\\/\b\f\n\r\t<>&\u2028\u2029\ud83d\ude00é€"`,
		`"` + strings.Repeat("QUJD+/=", 64<<10/7) + `"`,
		`"   leading and trailing spaces   "`,
		`"{\"looks\":\"like json\"}"`,
	} {
		var issued string
		if err := json.Unmarshal([]byte(raw), &issued); err != nil {
			t.Fatal(err)
		}
		ask := `{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"?"}}},"requestState":` + raw + `}`
		f := &fakeCaller{script: answers(t, ask, okResult)}
		s, _ := testSession(f)
		if _, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: acceptAll}); err != nil {
			t.Fatal(err)
		}
		// What the call handed go-sdk, and what a server decodes from the
		// bytes go-sdk's encoding of it puts on the wire.
		if got := f.sent[1].RequestState; got != issued {
			t.Errorf("handed %q, want %q", got, issued)
		}
		if p := f.request(t, 2); p.RequestState == nil || *p.RequestState != issued {
			t.Errorf("echoed %q, want %q", *p.RequestState, issued)
		}
	}
}

func TestRequestStateIsLoggedContentFree(t *testing.T) {
	var logs strings.Builder
	f := &fakeCaller{script: answers(t, askForm, okResult)}
	s, _ := testSession(f, func(s *Session) { s.deps.log = slogTo(&logs) })
	if _, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: acceptAll}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("state-1"))
	want := `"requestState":{"sha256":"` + hex.EncodeToString(sum[:]) + `","len":7}`
	if strings.Contains(logs.String(), "state-1") || !strings.Contains(logs.String(), want) {
		t.Fatalf("log %s\nwant it to hold %s and not the state", logs.String(), want)
	}
}

func TestRoundsCeiling(t *testing.T) {
	for _, tc := range []struct {
		maxRounds, applied int
	}{{4, 4}, {1, 1}, {0, 0}, {-3, 0}, {99, 16}} {
		f := &fakeCaller{script: func(context.Context, int, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
			return result(t, askForm), nil
		}}
		s, sink := testSession(f, func(s *Session) { s.MaxRounds = tc.maxRounds })
		decisions := 0
		decide := func(ctx context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
			decisions++
			return acceptAll(ctx, r)
		}
		out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: decide})
		var re *RoundsError
		if !errors.As(err, &re) || !errors.Is(err, ErrRoundsExceeded) || re.MaxRounds != tc.applied || re.Alias != "srv" || re.Tool != "ask" {
			t.Fatalf("MaxRounds %d: err %v", tc.maxRounds, err)
		}
		// The server saw the first call and one retry per allowed round;
		// the round past the ceiling reached neither the decider nor the
		// server.
		if f.calls() != tc.applied+1 || out.Calls != tc.applied+1 || out.Rounds != tc.applied || decisions != tc.applied {
			t.Fatalf("MaxRounds %d: server saw %d calls, outcome %+v, %d decisions", tc.maxRounds, f.calls(), out, decisions)
		}
		if out.Reconciliation != outbound.FailedPossibleEffect || len(sink.ofType(EventReconciled)) != 1 {
			t.Errorf("reconciliation %q, events %+v", out.Reconciliation, sink.events)
		}
	}
}

func TestRoundsErrorEnvelope(t *testing.T) {
	f := &fakeCaller{script: func(context.Context, int, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
		return result(t, askForm), nil
	}}
	s, _ := testSession(f)
	_, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: acceptAll})
	e := ProjectError(s.RunID, err)
	body, _ := json.Marshal(map[string]any{"error": e.Code, "message": e.Message, "details": e.Details})
	const want = `{"details":{"maxRounds":4,"protocol":"mcp","runId":"tenant-a/run-00000000000000001"},"error":"mcp_mrtr_rounds_exceeded","message":"the MCP server asked for input more times than the host allows"}`
	if e.Status != 422 || string(body) != want || !errors.Is(e, ErrRoundsExceeded) {
		t.Fatalf("%d %s\nwant %s", e.Status, body, want)
	}
}

func TestEmptyRoundRetriesWithoutAsking(t *testing.T) {
	shed := `{"resultType":"input_required","inputRequests":{},"requestState":"busy"}`
	f := &fakeCaller{script: answers(t, shed, okResult)}
	s, _ := testSession(f)
	decide := func(context.Context, InputRound) (map[string]*mcp.ElicitResult, error) {
		t.Error("decider called for a round that asks nothing")
		return nil, nil
	}
	out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: decide})
	if err != nil || out.Calls != 2 || out.Rounds != 1 {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if p := f.request(t, 2); p.InputResponses != nil || *p.RequestState != "busy" {
		t.Errorf("retry %+v", p)
	}
}

func TestInputRefused(t *testing.T) {
	declined := errors.New("the approver said no")
	for _, tc := range []struct {
		name    string
		ask     string
		caps    *mcp.ElicitationCapabilities
		decide  InputDecider
		reason  InputReason
		request string
	}{
		{"url asked, form declared", askURL, formOnly, acceptAll, InputUndeclared, "auth"},
		{"form asked, url declared", askForm, &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}, acceptAll, InputUndeclared, "who"},
		{"asked, nothing declared", askForm, nil, nil, InputUndeclared, "who"},
		{"sampling asked", askSampled, formOnly, acceptAll, InputUndeclared, "s"},
		{"decider declines", askForm, formOnly, func(context.Context, InputRound) (map[string]*mcp.ElicitResult, error) {
			return nil, declined
		}, InputDeclined, ""},
		{"request unanswered", askForm, formOnly, answerWith(nil), InputBadAnswer, "who"},
		{"answer to a request not asked", askForm, formOnly, answerWith(map[string]*mcp.ElicitResult{
			"who": {Action: "decline"}, "other": {Action: "accept"}}), InputBadAnswer, "other"},
		{"unknown action", askForm, formOnly, answerWith(map[string]*mcp.ElicitResult{"who": {Action: "maybe"}}), InputBadAnswer, "who"},
		{"content on a decline", askForm, formOnly, answerWith(map[string]*mcp.ElicitResult{
			"who": {Action: "decline", Content: map[string]any{"name": "Ada"}}}), InputBadAnswer, "who"},
		{"content on a url answer", askURL, &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}, answerWith(map[string]*mcp.ElicitResult{
			"auth": {Action: "accept", Content: map[string]any{"token": "x"}}}), InputBadAnswer, "auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeCaller{script: answers(t, tc.ask)}
			s, sink := testSession(f)
			called := false
			var decide InputDecider
			if tc.decide != nil {
				decide = func(ctx context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
					called = true
					return tc.decide(ctx, r)
				}
			}
			out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: tc.caps, Decide: decide})
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInputRefused) || ie.Reason != tc.reason || ie.Request != tc.request {
				t.Fatalf("err %v, want %s on %q", err, tc.reason, tc.request)
			}
			if tc.reason == InputDeclined && !errors.Is(err, declined) {
				t.Errorf("the decider's error is not reachable: %v", err)
			}
			if tc.reason == InputUndeclared && called {
				t.Error("the decider was asked about what the call did not declare")
			}
			// Nothing more was sent, and the abandoned round is no proof
			// that the tool did nothing.
			if f.calls() != 1 || out.Calls != 1 || out.Rounds != 0 || out.Reconciliation != outbound.FailedPossibleEffect {
				t.Fatalf("server saw %d calls, outcome %+v", f.calls(), out)
			}
			if len(sink.ofType(EventReconciled)) != 1 {
				t.Errorf("events %+v", sink.events)
			}
		})
	}
}

func answerWith(m map[string]*mcp.ElicitResult) InputDecider {
	return func(context.Context, InputRound) (map[string]*mcp.ElicitResult, error) { return m, nil }
}

func TestURLModeAnswer(t *testing.T) {
	f := &fakeCaller{script: answers(t, askURL, okResult)}
	s, _ := testSession(f)
	var seen InputRequest
	decide := func(ctx context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
		seen = r.Requests[0]
		return acceptAll(ctx, r)
	}
	caps := &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	if _, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: caps, Decide: decide}); err != nil {
		t.Fatal(err)
	}
	want := InputRequest{ID: "auth", Method: "elicitation/create", Mode: "url", Message: "Sign in", URL: "https://example.com/connect", ElicitationID: "e1"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("decider saw %+v", seen)
	}
	got, _ := json.Marshal(f.request(t, 2).InputResponses)
	if string(got) != `{"auth":{"action":"accept"}}` {
		t.Errorf("responses %s", got)
	}
}

func TestToolErrorResult(t *testing.T) {
	f := &fakeCaller{script: answers(t, `{"resultType":"complete","content":[{"type":"text","text":"boom"}],"isError":true}`)}
	s, sink := testSession(f)
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if !errors.Is(err, ErrToolError) || out.Result == nil || !out.Result.IsError || out.Result.Content[0].Text != "boom" {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if out.Reconciliation != outbound.FailedPossibleEffect || len(sink.ofType(EventReconciled)) != 1 {
		t.Errorf("reconciliation %q events %+v", out.Reconciliation, sink.events)
	}
}

func TestTaskResultIsUnexpected(t *testing.T) {
	f := &fakeCaller{script: answers(t, `{"resultType":"task","taskId":"t1","status":"working","ttlMs":1000}`)}
	s, _ := testSession(f)
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if !errors.Is(err, ErrUnexpectedResult) || out.Result != nil || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	// An empty complete result is a result.
	f = &fakeCaller{script: answers(t, `{"resultType":"complete","content":[]}`)}
	s, _ = testSession(f)
	if out, err := s.Call(t.Context(), CallRequest{Tool: "echo"}); err != nil || out.Result == nil {
		t.Fatalf("empty result: %+v, %v", out, err)
	}
}

func TestResultProjection(t *testing.T) {
	body := `{"resultType":"complete","content":[
		{"type":"text","text":"t"},
		{"type":"image","data":"aW1n","mimeType":"image/png"},
		{"type":"audio","data":"YXVk","mimeType":"audio/wav"},
		{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"body"}},
		{"type":"resource","resource":{"uri":"file:///b.bin","blob":"YmxvYg=="}},
		{"type":"resource_link","uri":"https://example.com/r","name":"r","mimeType":"text/html"}
	],"structuredContent":{"n":7}}`
	f := &fakeCaller{script: answers(t, body)}
	s, _ := testSession(f)
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(out.Result)
	const want = `{"isError":false,"content":[{"type":"text","text":"t"},{"type":"image","data":"aW1n","mimeType":"image/png"},{"type":"audio","data":"YXVk","mimeType":"audio/wav"},{"type":"resource","text":"body","mimeType":"text/plain","uri":"file:///a.txt"},{"type":"resource","data":"YmxvYg==","uri":"file:///b.bin"},{"type":"resource_link","mimeType":"text/html","uri":"https://example.com/r","name":"r"}],"structuredContent":{"n":7}}`
	if string(got) != want {
		t.Fatalf("projection\n got %s\nwant %s", got, want)
	}
}

// The call path's own refusals reach the host as their OpenWOP errors,
// never as internal_error.
func TestProjectCallRefusals(t *testing.T) {
	d := map[string]any{"protocol": "mcp", "runId": "tenant-a/run-1"}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"arguments refused", &CallError{Field: "arguments", Reason: "not an object"}, 400, outbound.CodeValidation},
		{"input declined", &InputError{Reason: InputDeclined, Request: "r1"}, 422, outbound.CodeCapabilityRequired},
		{"unexpected result", fmt.Errorf("call: %w", ErrUnexpectedResult), 503, outbound.CodeRunnerUnavailable},
	} {
		e := ProjectError("tenant-a/run-1", tc.err)
		if e.Status != tc.status || e.Code != tc.code || !reflect.DeepEqual(e.Details, d) || e.Err != tc.err {
			t.Errorf("%s: %+v, want %d %s", tc.name, e, tc.status, tc.code)
		}
	}
}
