package delegate

import (
	"context"
	"errors"
	"net"
	"net/http"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/outbound"
)

// ProjectError is the one place an error of this package — from Connect
// or from any call on a Conn — becomes the OpenWOP error the host renders
// (OpenWOP errors.md §The envelope). A peer's error is projected by its
// kind as the interop map's a2a.errors table says (OpenWOP RFC 0211 §F):
//
//	-32001 TaskNotFound, -32007 ExtendedCardNotConfigured   404 not_found
//	-32002 TaskNotCancelable                                409 run_terminal
//	-32003, -32004 (push, operation unsupported), -32601    422 capability_required
//	-32005, -32006, -32008, -32602, -32600, -32700          400 validation_error
//	-32009 VersionNotSupported                              400 interop_version_unsupported
//	-31401 Unauthenticated                                  422 credential_required
//	-31403 Unauthorized                                     403 credential_forbidden
//	-32603, -32000, an error the library does not know      503 runner_unavailable
//
// and the library's own refusals:
//
//	a malformed or oversized response (InvalidAgentResponse)   400 validation_error
//	an unknown alias, a malformed or oversized card            400 validation_error
//	a card signature, a re-admission or the egress guard       403 forbidden
//	a credential the host could not resolve                    404 credential_not_found
//	a version refused at Connect                               400 interop_version_unsupported
//	a step the admission does not cover (ErrStepRefused)       400 validation_error
//	a remote task that asks for authentication                 422 credential_required
//	an input request the host did not answer                   422 wopinterop.remote_input_declined
//	a remote task that failed or was rejected                  422 wopinterop.remote_task_failed
//	a remote task cancelled by the agent                       409 wopinterop.remote_task_cancelled
//	an artifact that failed admission                          422 wopinterop.remote_artifact_refused
//	a lost connection, an unreadable remote state, Deadline    503 runner_unavailable
//	no answer, a timeout, a redirect, a card fetch that failed 503 runner_unavailable
//	anything else                                              500 internal_error
//
// Details name the protocol ("a2a") and the run, and for a peer's error
// its kind ("remoteError": the ErrorInfo reason of the A2A error, e.g.
// "TASK_NOT_FOUND") and, for -32009, the versions it supports — nothing
// else of the peer's answer (OpenWOP interop map, a2a.fields error
// message). The message is the library's own. An *outbound.Error is
// returned as it is. err stays the cause, for errors.Is and the host's
// logs; it is never rendered.
func ProjectError(runID string, err error) *outbound.Error {
	if err == nil {
		return nil
	}
	var oe *outbound.Error
	if errors.As(err, &oe) {
		return oe
	}
	var pe *PeerError
	if errors.As(err, &pe) {
		return projectPeer(runID, pe, err)
	}
	mk := func(status int, code, msg string) *outbound.Error {
		return &outbound.Error{Status: status, Code: code, Message: msg, Details: details(runID), Err: err}
	}
	var (
		sig   *SignatureError
		readm *ReadmissionError
		card  *CardError
		redir *egress.RedirectError
		nerr  net.Error
	)
	isCard := errors.As(err, &card)
	switch {
	// A malformed answer outranks what the lifecycle made of it (a stream
	// cut by a malformed event is also a lost stream).
	case errors.Is(err, wire.ErrInvalidAgentResponse):
		return mk(http.StatusBadRequest, outbound.CodeValidation, "the remote agent's response was malformed")
	case errors.Is(err, ErrStepRefused):
		return mk(http.StatusBadRequest, outbound.CodeValidation, "the step is not covered by the remote agent's admission")
	case errors.Is(err, ErrAuthRequired):
		return mk(http.StatusUnprocessableEntity, outbound.CodeCredentialRequired, "the remote agent requires authentication the host does not have")
	case errors.Is(err, ErrInputRefused):
		return mk(http.StatusUnprocessableEntity, CodeRemoteInputDeclined, "the remote agent's input request was not answered")
	case errors.Is(err, ErrRemoteFailed), errors.Is(err, ErrRemoteRejected):
		return mk(http.StatusUnprocessableEntity, CodeRemoteTaskFailed, "the remote agent's task failed")
	case errors.Is(err, ErrRemoteCancelled):
		return mk(http.StatusConflict, CodeRemoteTaskCancelled, "the remote agent cancelled its task")
	case errors.Is(err, ErrArtifactRefused):
		return mk(http.StatusUnprocessableEntity, CodeRemoteArtifactRefused, "an artifact of the remote agent failed admission")
	case errors.Is(err, ErrDisconnected), errors.Is(err, ErrNoRemoteTask), errors.Is(err, ErrRemoteUnknown), errors.Is(err, ErrDeadline):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the remote agent's task could not be followed")
	case errors.Is(err, ErrUnknownAgent):
		return mk(http.StatusBadRequest, outbound.CodeValidation, "no remote agent is admitted under that name")
	case errors.As(err, &sig):
		return mk(http.StatusForbidden, outbound.CodeForbidden, "the remote agent's card did not pass its signature check")
	case errors.As(err, &readm):
		return mk(http.StatusForbidden, outbound.CodeForbidden, "the remote agent changed a skill it was admitted for; it must be admitted again")
	case errors.Is(err, egress.ErrRefused):
		return mk(http.StatusForbidden, outbound.CodeForbidden, "the remote agent's address is not allowed")
	case errors.Is(err, ErrCredential):
		return mk(http.StatusNotFound, outbound.CodeCredentialNotFound, "the credential admitted for the remote agent could not be resolved")
	case isCard && (card.Err == nil || errors.Is(err, egress.ErrTooLarge)):
		return mk(http.StatusBadRequest, outbound.CodeValidation, "the remote agent's card is invalid")
	case errors.As(err, &redir):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the remote agent answered with a redirect, which is never followed")
	case errors.Is(err, context.DeadlineExceeded):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the remote agent did not answer in time")
	case errors.Is(err, context.Canceled):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the exchange with the remote agent was cancelled")
	case isCard, errors.As(err, &nerr):
		return mk(http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the remote agent could not be reached")
	}
	return mk(http.StatusInternalServerError, outbound.CodeInternal, "the exchange with the remote agent failed")
}

// Vendor error codes (OpenWOP errors.md §Vendor codes: "<org>.<name>") for
// the ends of a delegation the registry has no code for.
const (
	CodeRemoteInputDeclined   = "wopinterop.remote_input_declined"
	CodeRemoteTaskFailed      = "wopinterop.remote_task_failed"
	CodeRemoteTaskCancelled   = "wopinterop.remote_task_cancelled"
	CodeRemoteArtifactRefused = "wopinterop.remote_artifact_refused"
)

func details(runID string) map[string]any {
	d := map[string]any{"protocol": "a2a"}
	if runID != "" {
		d["runId"] = runID
	}
	return d
}

// projectPeer projects a peer's error by its code (classify has already
// resolved a generic code with an A2A reason to the A2A error's code).
func projectPeer(runID string, pe *PeerError, err error) *outbound.Error {
	if pe.kind == wire.ErrVersionNotSupported {
		e := outbound.VersionUnsupported("a2a", runID, err)
		e.Details["remoteError"] = "VERSION_NOT_SUPPORTED"
		if len(pe.SupportedVersions) > 0 {
			e.Details["supportedVersions"] = append([]string(nil), pe.SupportedVersions...)
		}
		return e
	}
	status, code := http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable
	msg := "the remote agent failed"
	switch pe.Code {
	case -32001, -32007:
		status, code = http.StatusNotFound, outbound.CodeNotFound
	case -32002:
		status, code = http.StatusConflict, outbound.CodeRunTerminal
	case -32003, -32004, -32601:
		status, code = http.StatusUnprocessableEntity, outbound.CodeCapabilityRequired
	case -32005, -32006, -32008, -32602, -32600, -32700:
		status, code = http.StatusBadRequest, outbound.CodeValidation
	case -31401:
		status, code = http.StatusUnprocessableEntity, outbound.CodeCredentialRequired
	case -31403:
		status, code = http.StatusForbidden, outbound.CodeCredentialForbidden
	}
	d := details(runID)
	if pe.kind != nil {
		msg = "the remote agent answered: " + pe.kind.Error()
		d["remoteError"] = reasonOf(pe.kind)
	}
	return &outbound.Error{Status: status, Code: code, Message: msg, Details: d, Err: err}
}

// reasonOf is the ErrorInfo reason of an a2a-go sentinel.
func reasonOf(kind error) string {
	for _, row := range a2aErrors {
		if row.kind == kind {
			return row.reason
		}
	}
	for _, row := range jsonrpcErrors {
		if row.kind == kind {
			return row.reason
		}
	}
	return ""
}
