package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// asker is a ToolInput.Ask that records what it is asked and answers with
// answer.
type asker struct {
	mu     sync.Mutex
	asked  []interop.ToolInputRequest
	answer func(interop.ToolInputRequest) (interop.ToolInputAnswer, error)
}

func (a *asker) ask(_ context.Context, r interop.ToolInputRequest) (interop.ToolInputAnswer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, r)
	a.mu.Unlock()
	return a.answer(r)
}

func accept(content string) func(interop.ToolInputRequest) (interop.ToolInputAnswer, error) {
	return func(interop.ToolInputRequest) (interop.ToolInputAnswer, error) {
		return interop.ToolInputAnswer{Action: interop.InputAccept, Content: json.RawMessage(content)}, nil
	}
}

// wantToolError is the *outbound.Error a ToolCaller call ended in.
func wantToolError(t *testing.T, err error, status int, code string) *outbound.Error {
	t.Helper()
	var oe *outbound.Error
	if !errors.As(err, &oe) || oe.Status != status || oe.Code != code || oe.Details["runId"] != runID || oe.Details["protocol"] != "mcp" {
		t.Fatalf("err = %#v, want %d %s naming the run and the protocol", err, status, code)
	}
	return oe
}

// wantInputRefused: a round the host did not answer ends the call in 422
// capability_required naming the run, its cause ErrInputRefused.
func wantInputRefused(t *testing.T, err error) {
	t.Helper()
	oe := wantToolError(t, err, http.StatusUnprocessableEntity, outbound.CodeCapabilityRequired)
	if !errors.Is(oe, ErrInputRefused) {
		t.Fatalf("err = %#v, want the projected ErrInputRefused", err)
	}
}

// TestToolCaller drives the interop.ToolCaller over a go-sdk server: one
// Connect and one call per CallTool on the call's run, the run's trace on
// the wire, the result projected into the host contract's terms; input
// requests asked one by one through Input.Ask under the modes declared;
// the tool's own failure a result, every other end the projected OpenWOP
// error naming the run.
func TestToolCaller(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	f := peerFixture(t, p, []string{mcppeers.Echo, mcppeers.NeedsInput, mcppeers.NeedsInputLoop, mcppeers.URLInput, mcppeers.Fails})
	tc := f.client.ToolCaller()
	ctx := context.Background()
	trace := interop.TraceContext{TraceParent: traceparent}

	t.Run("echo", func(t *testing.T) {
		before := len(p.Requests())
		res, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.Echo, Arguments: json.RawMessage(`{"x":[1,"y"]}`), Trace: trace})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.AttemptID, "att_") || res.IsError || string(res.Structured) != `{"x":[1,"y"]}` ||
			len(res.Content) != 1 || res.Content[0].Type != "text" || res.Text() != `{"x":[1,"y"]}` {
			t.Fatalf("result %+v", res)
		}
		var methods []string
		for _, q := range p.Requests()[before:] {
			methods = append(methods, q.Method)
			if q.Traceparent != traceparent {
				t.Errorf("%s without the run's trace", q.Method)
			}
			if q.Method == "tools/call" && strings.Contains(string(q.Params), "elicitation") {
				t.Errorf("a call without Input declared elicitation: %s", q.Params)
			}
		}
		if !slices.Equal(methods, []string{"server/discover", "tools/list", "tools/call"}) {
			t.Fatalf("the server received %q", methods)
		}
	})
	t.Run("form input", func(t *testing.T) {
		a := &asker{answer: accept(`{"name":"Ada"}`)}
		res, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.NeedsInput,
			Input: &interop.ToolInput{Form: true, Ask: a.ask}})
		if err != nil || res.Text() != fmt.Sprintf(mcppeers.GreetingFormat, "Ada") {
			t.Fatalf("%+v %v", res, err)
		}
		if len(a.asked) != 1 {
			t.Fatalf("asked %+v", a.asked)
		}
		q := a.asked[0]
		if q.Round != 1 || q.ID != mcppeers.NeedsInputKey || q.Mode != "form" || q.Message != mcppeers.NeedsInputMessage ||
			!strings.Contains(string(q.Schema), `"name"`) || q.URL != "" {
			t.Fatalf("asked %+v", q)
		}
	})
	t.Run("url input", func(t *testing.T) {
		a := &asker{answer: accept("")}
		res, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.URLInput,
			Input: &interop.ToolInput{URL: true, Ask: a.ask}})
		if err != nil || res.Text() != mcppeers.AuthorizedText {
			t.Fatalf("%+v %v", res, err)
		}
		if len(a.asked) != 1 || a.asked[0].Mode != "url" || a.asked[0].URL != p.Base+mcppeers.AuthorizePath+mcppeers.URLElicitationID {
			t.Fatalf("asked %+v", a.asked)
		}
	})
	t.Run("declined", func(t *testing.T) {
		a := &asker{answer: func(interop.ToolInputRequest) (interop.ToolInputAnswer, error) {
			return interop.ToolInputAnswer{Action: interop.InputDecline}, nil
		}}
		res, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.NeedsInput, Input: &interop.ToolInput{Ask: a.ask}})
		if err != nil || !res.IsError || res.Text() != mcppeers.DeclinedText {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("tool failure is a result", func(t *testing.T) {
		res, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.Fails})
		if err != nil || !res.IsError || res.Text() != mcppeers.FailureText || res.AttemptID == "" {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("rounds ceiling", func(t *testing.T) {
		before := len(p.Calls("tools/call"))
		a := &asker{answer: accept(`{"name":"Ada"}`)}
		_, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.NeedsInputLoop, Input: &interop.ToolInput{Ask: a.ask}})
		oe := wantToolError(t, err, http.StatusUnprocessableEntity, outbound.CodeMRTRRoundsExceeded)
		if !errors.Is(oe, ErrRoundsExceeded) {
			t.Fatal("the projection lost its cause")
		}
		if n := len(p.Calls("tools/call")) - before; n != 5 || len(a.asked) != 4 {
			t.Fatalf("%d calls and %d questions, want maxRounds+1 = 5 and 4", n, len(a.asked))
		}
	})
	t.Run("input not declared", func(t *testing.T) {
		_, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.NeedsInput})
		wantToolError(t, err, http.StatusUnprocessableEntity, outbound.CodeCapabilityRequired)
	})
	t.Run("ask refuses", func(t *testing.T) {
		before := len(p.Calls("tools/call"))
		a := &asker{answer: func(interop.ToolInputRequest) (interop.ToolInputAnswer, error) {
			return interop.ToolInputAnswer{}, errors.New("the user went away")
		}}
		_, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.NeedsInput, Input: &interop.ToolInput{Ask: a.ask}})
		wantInputRefused(t, err)
		if n := len(p.Calls("tools/call")) - before; n != 1 {
			t.Fatalf("%d calls, want the first alone: nothing answers a refused round", n)
		}
	})
	t.Run("content not an object", func(t *testing.T) {
		a := &asker{answer: accept(`["Ada"]`)}
		_, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.NeedsInput, Input: &interop.ToolInput{Ask: a.ask}})
		wantInputRefused(t, err)
	})
	t.Run("refusals before sending", func(t *testing.T) {
		before, calls := len(p.Requests()), len(p.Calls("tools/call"))
		_, err := tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "nobody", Tool: mcppeers.Echo})
		wantToolError(t, err, http.StatusBadRequest, outbound.CodeValidation)
		if len(p.Requests()) != before {
			t.Fatal("an unknown alias reached a server")
		}
		_, err = tc.CallTool(ctx, interop.ToolCall{RunID: runID, Server: "peer", Tool: mcppeers.Slow})
		wantToolError(t, err, http.StatusForbidden, outbound.CodeForbidden)
		if len(p.Calls("tools/call")) != calls {
			t.Fatal("an unadmitted tool was called")
		}
	})
}
