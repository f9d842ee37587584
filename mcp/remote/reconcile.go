package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
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

// codeRejectedByTransport is go-sdk's own marker for a request its
// transport did not deliver as a call (jsonrpc2.ErrRejected); it wraps the
// real cause and is never a server's answer.
const codeRejectedByTransport = -32005

// failed ends a call whose request failed.
func (c *call) failed(ctx, dctx context.Context, out *CallOutcome, err error) (*CallOutcome, error) {
	if dctx.Err() != nil {
		return c.stopped(ctx, dctx, out)
	}
	// Only the first request proves anything by being refused: a retry
	// follows requests the tool already answered input_required to.
	first := out.Calls == 1
	if rpc := serverError(err); rpc != nil {
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
	case notSent(err) && first:
		out.Reconciliation = outbound.FailedNoEffect
		return out, fmt.Errorf("remote: tools/call not sent: %w", err)
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

// serverError is the JSON-RPC error the server answered with, if any.
func serverError(err error) *jsonrpc.Error {
	var found *jsonrpc.Error
	walkErrors(err, func(e error) bool {
		if w, ok := e.(*jsonrpc.Error); ok && w.Code != codeRejectedByTransport {
			found = w
			return true
		}
		return false
	})
	return found
}

// notSent reports an error that proves the request never left: the
// connection to the server could not be opened.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// disconnected reports a connection lost while a request was in flight:
// go-sdk's session ended, or the HTTP exchange broke after the request
// went out (the server closed or reset the connection instead of
// answering).
func disconnected(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) && (errors.Is(ue.Err, io.EOF) || errors.Is(ue.Err, io.ErrUnexpectedEOF) ||
		errors.Is(ue.Err, syscall.ECONNRESET) || errors.Is(ue.Err, syscall.EPIPE))
}

// walkErrors visits err's tree depth first until visit returns true.
func walkErrors(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walkErrors(e, visit) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// EventReconciled is the run event recording how a call ended when that is
// not a verified fact about the server: content-free, the attempt id and
// the reconciliation state. It is the same vendor type, under the
// library's own org (OpenWOP RFC 0171 §A.1), as the A2A delegation's, with
// protocol "mcp".
const EventReconciled interop.EventType = "wopinterop.delegation.reconciled"

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
