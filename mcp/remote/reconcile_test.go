package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/outbound"
)

// rejected wraps err the way go-sdk's streamable transport does when it
// did not deliver a request as a call.
func rejected(err error) error {
	return fmt.Errorf("sending \"tools/call\": %w: %w", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, err)
}

// serverAnswer wraps a server's JSON-RPC error as go-sdk returns it from a
// non-2xx response.
func serverAnswer(code int64, data string) error {
	e := &jsonrpc.Error{Code: code, Message: "refused"}
	if data != "" {
		e.Data = []byte(data)
	}
	return fmt.Errorf("calling \"tools/call\": %w: %w: Bad Request", e, &jsonrpc.Error{Code: -32005, Message: "rejected by transport"})
}

func TestFailureReconciliation(t *testing.T) {
	dial := rejected(&url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}})
	reset := rejected(&url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}})
	for _, tc := range []struct {
		name      string
		err       error
		afterAsk  bool // the failing request is a retry
		want      outbound.Reconciliation
		wantIs    error
		wantCode  int64
		errorData bool
	}{
		{"invalid params (unknown tool)", serverAnswer(jsonrpc.CodeInvalidParams, ""), false, outbound.FailedNoEffect, nil, -32602, false},
		{"method not found", serverAnswer(jsonrpc.CodeMethodNotFound, ""), false, outbound.FailedNoEffect, nil, -32601, false},
		{"unsupported version", serverAnswer(-32022, `{"supported":["2026-07-28"]}`), false, outbound.FailedNoEffect, nil, -32022, true},
		{"missing capability", serverAnswer(-32021, ""), false, outbound.FailedNoEffect, nil, -32021, false},
		{"internal error", serverAnswer(jsonrpc.CodeInternalError, ""), false, outbound.FailedPossibleEffect, nil, -32603, false},
		{"retry refused", serverAnswer(jsonrpc.CodeInvalidParams, `{"reason":"state"}`), true, outbound.FailedPossibleEffect, nil, -32602, true},
		{"never connected", dial, false, outbound.FailedNoEffect, nil, 0, false},
		{"retry never connected", dial, true, outbound.FailedPossibleEffect, nil, 0, false},
		{"connection reset", reset, false, outbound.DisconnectedStillActive, ErrDisconnected, 0, false},
		{"connection closed", fmt.Errorf("%w: calling \"tools/call\": EOF", mcp.ErrConnectionClosed), false, outbound.DisconnectedStillActive, ErrDisconnected, 0, false},
		{"unreadable result", errors.New("unmarshaling result: unrecognized content type \"video\""), false, outbound.FailedPossibleEffect, nil, 0, false},
		// As the connection side's caller returns them.
		{"authentication challenge", &StatusError{StatusCode: 401}, false, outbound.FailedNoEffect, nil, 0, false},
		{"server failing", &StatusError{StatusCode: 503}, false, outbound.FailedPossibleEffect, nil, 0, false},
		{"egress refusal", &ExchangeError{Alias: "srv", Method: "tools/call", Err: &egress.RefusedError{}}, false, outbound.FailedNoEffect, nil, 0, false},
		{"revision refused locally", &RevisionError{Sent: "2025-11-25", Want: Revision}, false, outbound.FailedNoEffect, nil, 0, false},
		{"connection closed by the server", &ExchangeError{Alias: "srv", Method: "tools/call", Err: io.EOF}, false, outbound.DisconnectedStillActive, ErrDisconnected, 0, false},
		{"dial refused", &ExchangeError{Alias: "srv", Method: "tools/call", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, false, outbound.FailedNoEffect, nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failAt := 1
			if tc.afterAsk {
				failAt = 2
			}
			f := &fakeCaller{script: func(_ context.Context, n int, _ *mcp.CallToolParams) (*mcp.CallToolResult, error) {
				if n < failAt {
					return result(t, askForm), nil
				}
				return nil, tc.err
			}}
			s, sink := testSession(f)
			out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: acceptAll})
			if err == nil || out.Reconciliation != tc.want {
				t.Fatalf("Call = %+v, %v; want %s", out, err, tc.want)
			}
			// No replay: the failed request is never sent again.
			if f.calls() != failAt || out.Calls != failAt {
				t.Fatalf("server saw %d requests, want %d", f.calls(), failAt)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("err %v does not match %v", err, tc.wantIs)
			}
			var rpc *jsonrpc.Error
			if tc.wantCode != 0 && (!errors.As(err, &rpc) || rpc.Code != tc.wantCode) {
				t.Errorf("err %v: want the server's %d reachable with errors.As", err, tc.wantCode)
			}
			if got := len(sink.ofType(EventReconciled)); got != 1 {
				t.Errorf("%d reconciliation records, want 1", got)
			}
			losses := sink.ofType(EventTranslationLoss)
			if tc.errorData != (len(losses) == 1) {
				t.Errorf("loss records %+v (error data dropped: %v)", losses, tc.errorData)
			}
		})
	}
}

// blockUntilDone is a server that never answers: the request ends when
// its context does, as go-sdk's does (returning the context's error).
func blockUntilDone(ctx context.Context, _ int, _ *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCancelBeforeSending(t *testing.T) {
	f := &fakeCaller{script: blockUntilDone}
	s, sink := testSession(f)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out, err := s.Call(ctx, CallRequest{Tool: "echo"})
	if !errors.Is(err, context.Canceled) || out.Reconciliation != outbound.CancelledBeforeAdmission || out.Calls != 0 || f.calls() != 0 {
		t.Fatalf("Call = %+v, %v; server saw %d", out, err, f.calls())
	}
	if len(sink.ofType(EventReconciled)) != 1 {
		t.Errorf("events %+v", sink.events)
	}
}

func TestCancelInFlight(t *testing.T) {
	f := &fakeCaller{script: blockUntilDone}
	s, sink := testSession(f)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	out, err := s.Call(ctx, CallRequest{Tool: "echo"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) || out.Reconciliation != outbound.CancelRequestedRemoteUnknown || out.Calls != 1 {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	// The request's own context was cancelled: that is what makes go-sdk
	// send notifications/cancelled (seen on the wire in
	// TestRealServerCancel).
	if f.ctx(1).Err() == nil {
		t.Error("the in-flight request's context was not cancelled")
	}
	if f.calls() != 1 || len(sink.ofType(EventReconciled)) != 1 {
		t.Errorf("server saw %d, events %+v", f.calls(), sink.events)
	}
}

func TestCancelWhileDeciding(t *testing.T) {
	f := &fakeCaller{script: answers(t, askForm)}
	s, _ := testSession(f)
	ctx, cancel := context.WithCancel(t.Context())
	decide := func(ctx context.Context, _ InputRound) (map[string]*mcp.ElicitResult, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	out, err := s.Call(ctx, CallRequest{Tool: "ask", Elicitation: formOnly, Decide: decide})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrInputRefused) || out.Reconciliation != outbound.CancelRequestedRemoteUnknown {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if f.calls() != 1 {
		t.Errorf("server saw %d requests, want only the first", f.calls())
	}
}

func TestResultArrivingWithTheCancelStands(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	f := &fakeCaller{script: func(context.Context, int, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
		cancel() // the cancel races the answer, which wins
		return result(t, okResult), nil
	}}
	s, sink := testSession(f)
	out, err := s.Call(ctx, CallRequest{Tool: "echo"})
	if err != nil || out.Result == nil || out.Reconciliation != outbound.CompletedBeforeCancel {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	// A verified fact needs no reconciliation record.
	if len(sink.ofType(EventReconciled)) != 0 {
		t.Errorf("events %+v", sink.events)
	}
}

func TestTimeoutIsNeverNoEffect(t *testing.T) {
	f := &fakeCaller{script: blockUntilDone}
	s, sink := testSession(f, func(s *Session) { s.Admission.Limits.Timeout = 30 * time.Millisecond })
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	// Cancelled on the server (go-sdk's notifications/cancelled), and never
	// sent again.
	if f.ctx(1).Err() == nil || f.calls() != 1 {
		t.Errorf("request context %v, server saw %d", f.ctx(1).Err(), f.calls())
	}
	if len(sink.ofType(EventReconciled)) != 1 {
		t.Errorf("events %+v", sink.events)
	}
}

func TestTimeoutWhileDeciding(t *testing.T) {
	f := &fakeCaller{script: answers(t, askForm)}
	s, _ := testSession(f, func(s *Session) { s.Admission.Limits.Timeout = 30 * time.Millisecond })
	decide := func(ctx context.Context, _ InputRound) (map[string]*mcp.ElicitResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: decide})
	if !errors.Is(err, ErrTimeout) || out.Reconciliation != outbound.FailedPossibleEffect || f.calls() != 1 {
		t.Fatalf("Call = %+v, %v; server saw %d", out, err, f.calls())
	}
}

func TestCallersDeadlineIsATimeout(t *testing.T) {
	f := &fakeCaller{script: blockUntilDone}
	s, _ := testSession(f)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	out, err := s.Call(ctx, CallRequest{Tool: "echo"})
	if !errors.Is(err, ErrTimeout) || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
}

func TestNoCancelOnTimeout(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	answered := make(chan error, 1)
	f := &fakeCaller{script: func(ctx context.Context, _ int, _ *mcp.CallToolParams) (*mcp.CallToolResult, error) {
		close(started)
		select {
		case <-release:
			answered <- ctx.Err()
			return result(t, okResult), nil
		case <-ctx.Done():
			answered <- ctx.Err()
			return nil, ctx.Err()
		}
	}}
	logs := &syncBuffer{}
	s, _ := testSession(f, func(s *Session) {
		s.Admission.Limits.Timeout = 30 * time.Millisecond
		s.Admission.Limits.NoCancelOnTimeout = true
		s.deps.log = slogTo(logs)
	})
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if !errors.Is(err, ErrTimeout) || out.Reconciliation != outbound.FailedPossibleEffect || out.Result != nil {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	<-started
	// The request outlived the timeout: its context is still live, so
	// go-sdk sent no notifications/cancelled.
	if e := f.ctx(1).Err(); e != nil {
		t.Fatalf("the request was cancelled at the timeout: %v", e)
	}
	close(release)
	if e := <-answered; e != nil {
		t.Fatalf("the request ended with %v, want the server's answer", e)
	}
	// The late answer is logged, content-free, not used.
	want := `"msg":"remote: answer after the timeout, not used","attemptId":"` + out.AttemptID + `","error":false`
	for deadline := time.Now().Add(2 * time.Second); !strings.Contains(logs.String(), want); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("log %s\nwant %s", logs.String(), want)
		}
	}
}

func TestPanickingCallerWithNoCancelOnTimeout(t *testing.T) {
	f := &fakeCaller{script: func(context.Context, int, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
		panic("transport bug")
	}}
	s, _ := testSession(f, func(s *Session) { s.Admission.Limits.NoCancelOnTimeout = true })
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if err == nil || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
}
