package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/outbound"
)

// What a call's end says about its effect on the server
// (admission-boundaries §18.9). Only a result that arrived is a verified
// fact; a timeout, a lost connection or a cancel leaves the effect open,
// and only a refusal that proves the tool never ran is failed-no-effect.

// JSON-RPC and MCP error codes a server answers before a tool runs: the
// request was refused as a whole (JSON-RPC 2.0 §5.1; MCP 2026-07-28
// -32020 header mismatch, -32021 missing client capability, -32022
// unsupported protocol version). An unknown tool is -32602.
var refusedBeforeExecution = map[int64]bool{
	jsonrpc.CodeParseError:     true,
	jsonrpc.CodeInvalidRequest: true,
	jsonrpc.CodeMethodNotFound: true,
	jsonrpc.CodeInvalidParams:  true,
	-32020:                     true,
	-32021:                     true,
	-32022:                     true,
}

// failed ends a call whose request failed.
func (c *call) failed(ctx, dctx context.Context, out *CallOutcome, err error) (*CallOutcome, error) {
	if dctx.Err() != nil {
		return c.stopped(ctx, dctx, out)
	}
	// Only the first request proves anything by being refused: a retry
	// follows requests the tool already answered input_required to.
	first := out.Calls == 1
	if rpc := serverRPCError(err); rpc != nil {
		if len(rpc.Data) > 0 {
			c.loss.dropped.ErrorData++
		}
		out.Reconciliation = outbound.FailedPossibleEffect
		if first && refusedBeforeExecution[rpc.Code] {
			out.Reconciliation = outbound.FailedNoEffect
		}
		return out, fmt.Errorf("remote: tools/call: %w", err)
	}
	switch {
	case first && refusedUnexecuted(err):
		out.Reconciliation = outbound.FailedNoEffect
		return out, fmt.Errorf("remote: tools/call refused: %w", err)
	case disconnected(err):
		out.Reconciliation = outbound.DisconnectedStillActive
		return out, fmt.Errorf("%w: %w", ErrDisconnected, err)
	}
	out.Reconciliation = outbound.FailedPossibleEffect
	return out, fmt.Errorf("remote: tools/call: %w", err)
}

// stopped ends a call whose context ended: before anything was sent, the
// server never saw it; a cancel afterwards leaves the server's state
// unknown (go-sdk sent notifications/cancelled if a request was in
// flight); a deadline is never "nothing happened".
func (c *call) stopped(ctx, dctx context.Context, out *CallOutcome) (*CallOutcome, error) {
	cause := context.Cause(dctx)
	switch {
	case out.Calls == 0:
		out.Reconciliation = outbound.CancelledBeforeAdmission
		return out, fmt.Errorf("remote: call not sent: %w", cause)
	case errors.Is(ctx.Err(), context.Canceled):
		out.Reconciliation = outbound.CancelRequestedRemoteUnknown
		return out, fmt.Errorf("remote: call cancelled: %w", cause)
	}
	out.Reconciliation = outbound.FailedPossibleEffect
	return out, fmt.Errorf("%w: %w", ErrTimeout, context.DeadlineExceeded)
}

// refusedUnexecuted reports an error that proves the request never reached
// the tool: it never left (the connection could not be opened, the egress
// guard refused the destination, the transport refused a request not at
// the negotiated revision), or the server's HTTP layer refused it with a
// 4xx before any MCP processing (an authentication challenge, a
// forbidden credential).
func refusedUnexecuted(err error) bool {
	var op *net.OpError
	var rev *RevisionError
	var st *StatusError
	switch {
	case errors.As(err, &op) && op.Op == "dial", errors.Is(err, egress.ErrRefused), errors.As(err, &rev):
		return true
	case errors.As(err, &st):
		return st.StatusCode >= 400 && st.StatusCode < 500
	}
	return false
}

// disconnected reports a connection lost while a request was in flight:
// go-sdk's session ended, or the HTTP exchange broke after the request
// went out (the server closed or reset the connection instead of
// answering).
func disconnected(err error) bool {
	for _, target := range []error{mcp.ErrConnectionClosed, mcp.ErrSessionMissing,
		io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// EventReconciled is the run event recording how a call ended when that is
// not a verified fact about the server: content-free, the attempt id and
// the reconciliation state. It is the same vendor type, under the
// library's own org (OpenWOP RFC 0171 §A.1), as the A2A delegation's, with
// protocol "mcp".
const EventReconciled = outbound.EventReconciled

type reconciledRecord struct {
	Protocol       string                  `json:"protocol"`
	AttemptID      string                  `json:"attemptId,omitempty"`
	Reconciliation outbound.Reconciliation `json:"reconciliation"`
}

// recordReconciliation appends EventReconciled for an outcome whose
// reconciliation is not verified.
func (s *Session) recordReconciliation(ctx context.Context, out *CallOutcome) {
	if out == nil || out.Reconciliation == "" || out.Reconciliation.Verified() {
		return
	}
	s.appendEvent(ctx, EventReconciled, reconciledRecord{
		Protocol: protocolMCP, AttemptID: out.AttemptID, Reconciliation: out.Reconciliation,
	})
}
