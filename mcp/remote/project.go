package remote

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/outbound"
)

// ProjectError is the one place an error of this package — from Connect,
// a list, or a call on a Session — becomes the OpenWOP error the host
// renders (OpenWOP errors.md §The envelope). A JSON-RPC error the server
// answered (a [*PeerError], or go-sdk's *jsonrpc.Error from a call) is
// projected by its code:
//
//	-32022 UnsupportedProtocolVersion             400 interop_version_unsupported
//	-32602, -32600, -32700, -32020 HeaderMismatch 400 validation_error
//	-32601 MethodNotFound, -32021 MissingRequiredClientCapabilities
//	                                              422 capability_required
//	-32042 URLElicitationRequired                 422 credential_required
//	-32002 ResourceNotFound (before 2025-11-25)   404 not_found
//	-32603, -32000 and any other code             503 runner_unavailable
//
// and the library's own refusals:
//
//	a round past the ceiling ([*RoundsError])            422 mcp_mrtr_rounds_exceeded
//	a revision refused at Connect                        400 interop_version_unsupported
//	an unknown alias                                     400 validation_error
//	a response over MaxResultBytes, a list past MaxPages 400 validation_error
//	a list the server would complete only with input     422 capability_required
//	an item not admitted, or changed ([*AdmissionError]) 403 forbidden
//	the egress guard                                     403 forbidden
//	a credential the host could not resolve              404 credential_not_found
//	an expired credential, an HTTP 401                   422 credential_required
//	an HTTP 403                                          403 credential_forbidden
//	another HTTP 4xx without a JSON-RPC error            400 validation_error
//	no answer, a timeout, a redirect, an HTTP 5xx        503 runner_unavailable
//	anything else                                        500 internal_error
//
// Details name the protocol ("mcp") and the run, and for a server's error
// its code ("remoteCode") and, for -32022, the revisions it supports —
// nothing else of the server's answer. The message is the library's own.
// An *outbound.Error is returned as it is. err stays the cause, for
// errors.Is and the host's logs; it is never rendered.
func ProjectError(runID string, err error) *outbound.Error {
	if err == nil {
		return nil
	}
	var oe *outbound.Error
	if errors.As(err, &oe) {
		return oe
	}
	if e, ok := projectCall(runID, err); ok {
		return e
	}
	mk := func(status int, code, msg string) *outbound.Error {
		return &outbound.Error{Status: status, Code: code, Message: msg, Details: details(runID), Err: err}
	}
	var (
		rounds *RoundsError
		adm    *AdmissionError
		list   *ListError
		status *StatusError
		redir  *egress.RedirectError
		nerr   net.Error
	)
	switch {
	case errors.As(err, &rounds):
		e := mk(http.StatusUnprocessableEntity, outbound.CodeMRTRRoundsExceeded, "the MCP server asked for input more times than the host allows")
		e.Details["maxRounds"] = rounds.MaxRounds
		return e
	case errors.Is(err, egress.ErrTooLarge):
		// Before a peer error: the cause a stream failure carries first.
		return mk(http.StatusBadRequest, outbound.CodeValidation, "the MCP server's response was larger than the admission allows")
	}
	if code, supported, ok := rpcError(err); ok {
		return projectPeer(runID, code, supported, err)
	}
	switch {
	case errors.Is(err, ErrUnknownServer):
		return mk(http.StatusBadRequest, outbound.CodeValidation, "no MCP server is admitted under that name")
	case errors.As(err, &adm):
		if adm.Problem == NotAdmitted {
			return mk(http.StatusForbidden, outbound.CodeForbidden, "the MCP server's "+adm.Kind+" is not admitted")
		}
		return mk(http.StatusForbidden, outbound.CodeForbidden, "the MCP server's "+adm.Kind+" changed or is gone since it was admitted; it must be admitted again")
	case errors.As(err, &list) && list.InputRequired:
		return mk(http.StatusUnprocessableEntity, outbound.CodeCapabilityRequired, "the MCP server asked for input to complete a list")
	case errors.As(err, &list):
		return mk(http.StatusBadRequest, outbound.CodeValidation, "the MCP server's list could not be used")
	case errors.Is(err, egress.ErrRefused):
		return mk(http.StatusForbidden, outbound.CodeForbidden, "the MCP server's address is not allowed")
	case errors.Is(err, ErrCredential):
		return mk(http.StatusNotFound, outbound.CodeCredentialNotFound, "the credential admitted for the MCP server could not be resolved")
	case errors.Is(err, ErrCredentialExpired):
		return mk(http.StatusUnprocessableEntity, outbound.CodeCredentialRequired, "the credential admitted for the MCP server has expired")
	case errors.As(err, &status):
		return projectStatus(status.StatusCode, mk)
	case errors.As(err, &redir):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the MCP server answered with a redirect, which is never followed")
	case errors.Is(err, context.DeadlineExceeded):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the MCP server did not answer in time")
	case errors.Is(err, context.Canceled):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the exchange with the MCP server was cancelled")
	case errors.As(err, &nerr), errors.Is(err, mcp.ErrConnectionClosed):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the MCP server could not be reached")
	}
	return mk(http.StatusInternalServerError, outbound.CodeInternal, "the exchange with the MCP server failed")
}

func details(runID string) map[string]any {
	d := map[string]any{"protocol": "mcp"}
	if runID != "" {
		d["runId"] = runID
	}
	return d
}

// rpcError finds the JSON-RPC error a server answered in err's chain: a
// [*PeerError] or go-sdk's *jsonrpc.Error, with the revisions a -32022
// names.
func rpcError(err error) (code int64, supported []string, ok bool) {
	var pe *PeerError
	if errors.As(err, &pe) {
		return pe.Code, pe.SupportedVersions, true
	}
	if we := serverRPCError(err); we != nil {
		if we.Code == mcp.CodeUnsupportedProtocolVersion {
			supported = supportedFromData(we.Data)
		}
		return we.Code, supported, true
	}
	return 0, nil, false
}

// codeRejected is the code of go-sdk's own "rejected by transport" error,
// which it wraps around every failure of its HTTP client: a *jsonrpc.Error
// that no server sent.
const codeRejected = -32005

// serverRPCError returns the first *jsonrpc.Error in err's tree that a
// server sent, skipping go-sdk's transport rejection.
func serverRPCError(err error) *jsonrpc.Error {
	for err != nil {
		if we, ok := err.(*jsonrpc.Error); ok && we.Code != codeRejected {
			return we
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if we := serverRPCError(e); we != nil {
					return we
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}

// projectPeer projects a server's JSON-RPC error by its code.
func projectPeer(runID string, code int64, supported []string, err error) *outbound.Error {
	if code == mcp.CodeUnsupportedProtocolVersion {
		e := outbound.VersionUnsupported("mcp", runID, err)
		e.Details["remoteCode"] = code
		if len(supported) > 0 {
			e.Details["supportedVersions"] = append([]string(nil), supported...)
		}
		return e
	}
	status, oc, msg := http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the MCP server failed"
	switch code {
	case jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest, jsonrpc.CodeParseError, mcp.CodeHeaderMismatch:
		status, oc, msg = http.StatusBadRequest, outbound.CodeValidation, "the MCP server refused the request as invalid"
	case jsonrpc.CodeMethodNotFound, mcp.CodeMissingRequiredClientCapabilities:
		status, oc, msg = http.StatusUnprocessableEntity, outbound.CodeCapabilityRequired, "the MCP server needs a capability the exchange does not have"
	case mcp.CodeURLElicitationRequired:
		status, oc, msg = http.StatusUnprocessableEntity, outbound.CodeCredentialRequired, "the MCP server needs an authorization the host must obtain out of band"
	case codeResourceNotFound:
		status, oc, msg = http.StatusNotFound, outbound.CodeNotFound, "the MCP server has no such resource"
	}
	d := details(runID)
	d["remoteCode"] = code
	return &outbound.Error{Status: status, Code: oc, Message: msg, Details: d, Err: err}
}

// codeResourceNotFound is the resource-not-found code of the revisions
// before 2025-11-25 (SEP-2164 moved it to -32602).
const codeResourceNotFound = -32002

// projectStatus projects an HTTP answer without a JSON-RPC error.
func projectStatus(code int, mk func(int, string, string) *outbound.Error) *outbound.Error {
	switch {
	case code == http.StatusUnauthorized:
		return mk(http.StatusUnprocessableEntity, outbound.CodeCredentialRequired, "the MCP server requires a credential the exchange did not present")
	case code == http.StatusForbidden:
		return mk(http.StatusForbidden, outbound.CodeCredentialForbidden, "the MCP server refused the credential presented")
	case code == http.StatusTooManyRequests || code >= 500:
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the MCP server is unavailable")
	case code >= 400:
		return mk(http.StatusBadRequest, outbound.CodeValidation, "the MCP server refused the request")
	}
	return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the MCP server answered unexpectedly")
}
