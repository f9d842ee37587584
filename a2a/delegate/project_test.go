package delegate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/outbound"
)

// TestProjectionAgreesWithTheMap: every A2A error of the interop map's
// a2a.errors table, identified by its code and by its reason alone, is
// projected to the row's clientProjection (OpenWOP RFC 0211 §F), with the
// HTTP status errors.json gives that code.
func TestProjectionAgreesWithTheMap(t *testing.T) {
	statuses := map[string]int{
		outbound.CodeNotFound: 404, outbound.CodeRunTerminal: 409, outbound.CodeCapabilityRequired: 422,
		outbound.CodeValidation: 400, outbound.CodeVersionUnsupported: 400,
	}
	rows := (*interopmap.Map)(mapping.Builtin()).A2AErrors()
	if len(rows) < 10 {
		t.Fatalf("%d error rows", len(rows))
	}
	for _, row := range rows {
		if row.ClientProjection == "" {
			continue
		}
		byCode := &PeerError{}
		byCode.Code, byCode.kind = classify(row.JSONRPC, "")
		ways := []*PeerError{byCode}
		if row.Reason != "" {
			byReason := &PeerError{Reason: row.Reason}
			byReason.Code, byReason.kind = classify(-32603, row.Reason)
			ways = append(ways, byReason)
		}
		for _, pe := range ways {
			e := ProjectError(runID, pe)
			if e.Code != row.ClientProjection || e.Status != statuses[e.Code] {
				t.Errorf("%s (code %d, reason %q): projected %d %s, the map says %s", row.Upstream, pe.Code, pe.Reason, e.Status, e.Code, row.ClientProjection)
			}
			if e.Code == outbound.CodeInternal {
				t.Errorf("%s projected to internal_error", row.Upstream)
			}
		}
	}
}

// TestProjectionOfOwnFailures: the library's own refusals and transport
// failures, each with its whole projection.
func TestProjectionOfOwnFailures(t *testing.T) {
	d := map[string]any{"protocol": "a2a", "runId": runID}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"invalid response", invalid("x"), 400, outbound.CodeValidation},
		{"unknown alias", fmt.Errorf("%w: %q", ErrUnknownAgent, "x"), 400, outbound.CodeValidation},
		{"malformed card", &CardError{Alias: "x", Problem: "is malformed"}, 400, outbound.CodeValidation},
		{"card too large", &CardError{Alias: "x", Problem: "is over", Err: &egress.TooLargeError{Limit: 1}}, 400, outbound.CodeValidation},
		{"card refused", &CardError{Alias: "x", Err: &egress.RefusedError{Reason: egress.ReasonAddress}}, 403, outbound.CodeForbidden},
		{"card unreachable", &CardError{Alias: "x", Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}, 503, outbound.CodeRunnerUnavailable},
		{"card status", &CardError{Alias: "x", Problem: "request answered HTTP 500", Err: errors.New("status")}, 503, outbound.CodeRunnerUnavailable},
		{"signature", &SignatureError{Alias: "x", Unsigned: true}, 403, outbound.CodeForbidden},
		{"re-admission", &ReadmissionError{Alias: "x", Skill: "s"}, 403, outbound.CodeForbidden},
		{"credential", fmt.Errorf("%w: vault", ErrCredential), 404, outbound.CodeCredentialNotFound},
		{"redirect", &egress.RedirectError{StatusCode: 302}, 503, outbound.CodeRunnerUnavailable},
		{"timeout", context.DeadlineExceeded, 503, outbound.CodeRunnerUnavailable},
		{"cancelled", context.Canceled, 503, outbound.CodeRunnerUnavailable},
		{"network", &net.OpError{Op: "read", Err: errors.New("reset")}, 503, outbound.CodeRunnerUnavailable},
		{"unknown peer error", &PeerError{Code: -32099}, 503, outbound.CodeRunnerUnavailable},
		{"step refused", &StepError{Field: "skill", Reason: "not admitted"}, 400, outbound.CodeValidation},
		{"auth required", fmt.Errorf("task t: %w", ErrAuthRequired), 422, outbound.CodeCredentialRequired},
		{"input refused", ErrInputRefused, 422, CodeRemoteInputDeclined},
		{"remote failed", ErrRemoteFailed, 422, CodeRemoteTaskFailed},
		{"remote rejected", ErrRemoteRejected, 422, CodeRemoteTaskFailed},
		{"remote cancelled", ErrRemoteCancelled, 409, CodeRemoteTaskCancelled},
		{"artifact refused", &ArtifactError{Refusal: RefusalSize, ArtifactID: "a"}, 422, CodeRemoteArtifactRefused},
		{"disconnected", ErrDisconnected, 503, outbound.CodeRunnerUnavailable},
		{"deadline", ErrDeadline, 503, outbound.CodeRunnerUnavailable},
		{"remote unknown", ErrRemoteUnknown, 503, outbound.CodeRunnerUnavailable},
		{"anything else", errors.New("bug"), 500, outbound.CodeInternal},
	} {
		e := ProjectError(runID, tc.err)
		if e.Status != tc.status || e.Code != tc.code || fmt.Sprint(e.Details) != fmt.Sprint(d) || e.Message == "" || e.Err != tc.err {
			t.Errorf("%s: %+v, want %d %s", tc.name, e, tc.status, tc.code)
		}
	}
	if ProjectError(runID, nil) != nil {
		t.Fatal("nil projected")
	}
	// A peer's -32009 keeps the versions it named, and the run.
	e := ProjectError(runID, &PeerError{Code: -32009, kind: wire.ErrVersionNotSupported, SupportedVersions: []string{"2.0"}})
	if e.Status != http.StatusBadRequest || e.Code != outbound.CodeVersionUnsupported ||
		fmt.Sprint(e.Details) != fmt.Sprint(map[string]any{"protocol": "a2a", "runId": runID, "remoteError": "VERSION_NOT_SUPPORTED", "supportedVersions": []string{"2.0"}}) {
		t.Fatalf("%+v", e)
	}
}
