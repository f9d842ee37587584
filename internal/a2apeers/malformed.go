package a2apeers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// Mode is how StartMalformed answers. Every protocol call is answered the
// same way whatever its method, so a client meets the defect on its first
// call; the JSON-RPC id is echoed, so the defect is the only one.
type Mode int

const (
	// InvalidJSON: 200 application/json, a JSON-RPC response cut off
	// mid-object.
	InvalidJSON Mode = iota + 1
	// WrongShape: a result whose task has a number id, an array contextId,
	// a string status and a string artifacts.
	WrongShape
	// MissingFields: a well-typed result whose task lacks id and contextId
	// (A2A 1.0 §4.1.1 requires both).
	MissingFields
	// UnknownKind: a SendMessage-style result whose only member is
	// neither "task" nor "message" ({"receipt":{…}}).
	UnknownKind
	// MalformedSSE: 200 text/event-stream, one valid event (a WORKING
	// task) then an event whose data is cut-off JSON, then the end.
	MalformedSSE
	// Oversized: 200 application/json, a valid JSON-RPC response (a
	// completed task) whose artifact text is OversizedBytes long, sent
	// chunked without Content-Length, so only a cap on reading stops it.
	Oversized
	// LegacyErrorData: a -32001 whose data is a legacy object
	// {"reason":"TASK_NOT_FOUND","taskId":…} instead of an array (A2A 1.0
	// §10.6 requires an array; 0.3-era peers send objects).
	LegacyErrorData
	// ErrorDataMixed: a -32001 whose data array holds a DebugInfo before
	// the ErrorInfo, and whose ErrorInfo metadata has a number, a bool and
	// an object besides strings (google.rpc.ErrorInfo allows strings only).
	ErrorDataMixed
	// UnknownReason: a -32603 whose ErrorInfo reason is UNKNOWN_ERROR.
	UnknownReason
	// VersionNotSupported: a -32009 with ErrorInfo VERSION_NOT_SUPPORTED
	// and metadata.supportedVersions "0.3" (A2A 1.0 §3.6.2).
	VersionNotSupported
	// HTTP500: HTTP 500 with a JSON-RPC -32603 body.
	HTTP500
	// HTTP401: HTTP 401, WWW-Authenticate: Bearer, and a JSON-RPC -31401
	// body with ErrorInfo UNAUTHENTICATED.
	HTTP401
	// ProblemJSON: the card offers HTTP+JSON only (RESTPath), and every
	// call is answered 403 application/problem+json (RFC 9457).
	ProblemJSON
)

// Modes lists every Mode, for tests that try them all.
var Modes = []Mode{InvalidJSON, WrongShape, MissingFields, UnknownKind, MalformedSSE, Oversized,
	LegacyErrorData, ErrorDataMixed, UnknownReason, VersionNotSupported, HTTP500, HTTP401, ProblemJSON}

func (m Mode) String() string {
	return map[Mode]string{
		InvalidJSON: "InvalidJSON", WrongShape: "WrongShape", MissingFields: "MissingFields", UnknownKind: "UnknownKind",
		MalformedSSE: "MalformedSSE", Oversized: "Oversized", LegacyErrorData: "LegacyErrorData", ErrorDataMixed: "ErrorDataMixed",
		UnknownReason: "UnknownReason", VersionNotSupported: "VersionNotSupported", HTTP500: "HTTP500", HTTP401: "HTTP401",
		ProblemJSON: "ProblemJSON",
	}[m]
}

// OversizedBytes is the length of the artifact text Oversized sends: one
// MiB over a2a/delegate's default response cap (8 MiB).
const OversizedBytes = 9 << 20

// BodyMarker is in every message, detail and malformed body a malformed
// peer sends: a client must never let it reach run state, an error it
// renders, or a log (OpenWOP interop.md §Errors: no peer body relayed).
const BodyMarker = "peer-private-7f3a"

// StartMalformed starts a peer with a valid A2A 1.0 card (one JSON-RPC
// interface, or one HTTP+JSON interface for ProblemJSON) whose every call
// is answered as mode says.
func StartMalformed(t testing.TB, mode Mode) *Peer {
	t.Helper()
	return serve(t, func(base string) (http.Handler, *Peer) {
		card := scriptedCard(base, Script{})
		card.Name = "a2apeers malformed agent (" + mode.String() + ")"
		keep := wire.TransportProtocolJSONRPC
		if mode == ProblemJSON {
			keep = wire.TransportProtocolHTTPJSON
		}
		var ifaces []*wire.AgentInterface
		for _, i := range card.SupportedInterfaces {
			if i.ProtocolBinding == keep {
				ifaces = append(ifaces, i)
			}
		}
		card.SupportedInterfaces = ifaces
		p := &Peer{Card: card, CardJSON: mustJSON(card)}
		mux := http.NewServeMux()
		mux.Handle("GET "+CardPath, cardHandler(p.CardJSON))
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mode.answer(w, requestID(body))
		})
		return mux, p
	}, nil)
}

// answer writes mode's response to a request whose JSON-RPC id is id.
func (m Mode) answer(w http.ResponseWriter, id json.RawMessage) {
	write := func(status int, contentType string, body []byte) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
	const jsonType = "application/json"
	switch m {
	case InvalidJSON:
		write(http.StatusOK, jsonType, []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"task":{"id":"`+BodyMarker))
	case WrongShape:
		write(http.StatusOK, jsonType, rpcResult(id, map[string]any{"task": map[string]any{
			"id": 42, "contextId": []string{"ctx"}, "status": "TASK_STATE_COMPLETED", "artifacts": BodyMarker,
		}}))
	case MissingFields:
		write(http.StatusOK, jsonType, rpcResult(id, map[string]any{"task": map[string]any{
			"status": map[string]any{"state": "TASK_STATE_COMPLETED"},
		}}))
	case UnknownKind:
		write(http.StatusOK, jsonType, rpcResult(id, map[string]any{"receipt": map[string]any{"id": "r-1", "note": BodyMarker}}))
	case MalformedSSE:
		working := rpcResult(id, map[string]any{"task": map[string]any{
			"id": "task-sse", "contextId": "ctx-sse", "status": map[string]any{"state": "TASK_STATE_WORKING"},
		}})
		write(http.StatusOK, "text/event-stream",
			[]byte("data: "+string(working)+"\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(id)+",\"result\":{\"statusUpdate\":\""+BodyMarker+"\n\n"))
	case Oversized:
		w.Header().Set("Content-Type", jsonType)
		head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"task":{"id":"task-oversized","contextId":"ctx-oversized",` +
			`"status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"big","parts":[{"text":"` + BodyMarker
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n := len(BodyMarker); n < OversizedBytes; n += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), OversizedBytes-n)]); err != nil {
				return // the client stopped reading
			}
		}
		_, _ = io.WriteString(w, `"}]}]}}}`)
	case LegacyErrorData:
		write(http.StatusOK, jsonType, rpcFailure(id, -32001, "Task not found: "+BodyMarker,
			map[string]any{"reason": "TASK_NOT_FOUND", "taskId": "task-legacy"}))
	case ErrorDataMixed:
		write(http.StatusOK, jsonType, rpcFailure(id, -32001, "Task not found: "+BodyMarker, []any{
			map[string]any{"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": BodyMarker},
			errorInfo("TASK_NOT_FOUND", map[string]any{"taskId": "task-mixed", "attempt": 3, "retryable": true, "scope": map[string]any{"k": "v"}}),
		}))
	case UnknownReason:
		write(http.StatusOK, jsonType, rpcFailure(id, -32603, "Internal error: "+BodyMarker, []any{errorInfo("UNKNOWN_ERROR", nil)}))
	case VersionNotSupported:
		write(http.StatusOK, jsonType, rpcFailure(id, -32009, "Version not supported: "+BodyMarker,
			[]any{errorInfo("VERSION_NOT_SUPPORTED", map[string]any{"supportedVersions": "0.3"})}))
	case HTTP500:
		write(http.StatusInternalServerError, jsonType, rpcFailure(id, -32603, "Internal error: "+BodyMarker, nil))
	case HTTP401:
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2apeers"`)
		write(http.StatusUnauthorized, jsonType, rpcFailure(id, -31401, "Unauthenticated: "+BodyMarker,
			[]any{errorInfo("UNAUTHENTICATED", nil)}))
	case ProblemJSON:
		write(http.StatusForbidden, "application/problem+json", mustJSON(map[string]any{
			"type": "https://example.invalid/problems/forbidden", "title": "Forbidden", "status": http.StatusForbidden,
			"detail": "gateway policy refused the request: " + BodyMarker,
		}))
	}
}
