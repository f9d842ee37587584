package mcppeers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Mode is how a malformed server answers a request. The JSON-RPC id is
// echoed (except by WrongID), so the defect is the only one.
type Mode int

const (
	// InvalidJSON: 200 application/json, a response cut off mid-object.
	InvalidJSON Mode = iota + 1
	// WrongShape: 200 application/json, a result whose members have the
	// wrong types for every result a client expects: supportedVersions a
	// string, capabilities an array, tools an object, content a string,
	// isError a string, ttlMs a string, cacheScope a number.
	WrongShape
	// WrongID: 200 application/json, a well-formed complete result under
	// an id the client never sent (WrongIDValue).
	WrongID
	// UnknownResultType: 200 application/json, a result whose resultType
	// is neither "complete" nor "input_required" ("deferred"), with
	// content a client could otherwise show.
	UnknownResultType
	// Oversized: 200 application/json, a valid complete tool result whose
	// text is OversizedBytes long, sent chunked without Content-Length, so
	// only a cap on reading stops it.
	Oversized
	// VersionNotSupported: 400 application/json, -32022 whose data names
	// only FutureRevision as supported, and the requested header.
	VersionNotSupported
	// HTTP500: 500 application/json with a JSON-RPC -32603 body.
	HTTP500
	// MalformedSSE: 200 text/event-stream, one valid event (a progress
	// notification), then an event whose data is cut-off JSON, then the
	// end of the stream.
	MalformedSSE
	// Redirect: 307 Temporary Redirect to Server.RedirectTarget's URL, a
	// well-behaved StartGo server that records what reaches it.
	Redirect
)

// Modes lists every Mode, for tests that try them all.
func Modes() []Mode {
	return []Mode{InvalidJSON, WrongShape, WrongID, UnknownResultType, Oversized, VersionNotSupported, HTTP500, MalformedSSE, Redirect}
}

func (m Mode) String() string {
	return map[Mode]string{
		InvalidJSON: "InvalidJSON", WrongShape: "WrongShape", WrongID: "WrongID", UnknownResultType: "UnknownResultType",
		Oversized: "Oversized", VersionNotSupported: "VersionNotSupported", HTTP500: "HTTP500", MalformedSSE: "MalformedSSE",
		Redirect: "Redirect",
	}[m]
}

// OversizedBytes is the length of the text Oversized sends: one MiB over
// mcp/remote's default result cap (8 MiB).
const OversizedBytes = 9 << 20

// BodyMarker is in every body a malformed server sends: a client must
// never let it reach run state, an error it renders, or a log (OpenWOP
// interop.md §Errors: no peer body relayed).
const BodyMarker = "peer-private-5c1e"

// FutureRevision is the only revision VersionNotSupported says it
// supports: one no client speaks.
const FutureRevision = "2099-01-01"

// WrongIDValue is the id WrongID answers under.
const WrongIDValue = `"mcppeers-not-your-id"`

// StartMalformed starts a server whose every request, server/discover
// included, is answered as mode says: a client meets the defect on its
// first request. A notification is accepted (202) as any server would.
func StartMalformed(t testing.TB, mode Mode) *Server {
	t.Helper()
	return startMalformed(t, mode, false)
}

// StartMalformedCalls is StartMalformed, except that server/discover is
// answered with a valid 2026-07-28 result (MalformedDiscover), so a client
// connects and meets the defect on its first list or call.
func StartMalformedCalls(t testing.TB, mode Mode) *Server {
	t.Helper()
	return startMalformed(t, mode, true)
}

// MalformedDiscover is the server/discover result StartMalformedCalls
// answers: 2026-07-28 and the tools capability, nothing else.
const MalformedDiscover = `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcppeers malformed","version":"1.0.0"}},` +
	`"ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`

func startMalformed(t testing.TB, mode Mode, validDiscover bool) *Server {
	t.Helper()
	var target *Server
	if mode == Redirect {
		target = StartGo(t, Script{})
	}
	return serve(t, func(string) (http.Handler, *Server) {
		mux := http.NewServeMux()
		mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var env struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(body, &env)
			switch {
			case env.Method != "" && len(env.ID) == 0:
				w.WriteHeader(http.StatusAccepted) // a notification
			case validDiscover && env.Method == "server/discover":
				writeJSON(w, http.StatusOK, rpcResult(env.ID, json.RawMessage(MalformedDiscover)))
			case mode == Redirect:
				http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
			default:
				mode.answer(w, requestID(body), r.Header.Get("MCP-Protocol-Version"))
			}
		})
		return mux, &Server{RedirectTarget: target}
	}, nil)
}

// answer writes mode's response to a request whose JSON-RPC id is id and
// whose MCP-Protocol-Version header is requested.
func (m Mode) answer(w http.ResponseWriter, id json.RawMessage, requested string) {
	write := func(status int, contentType string, body []byte) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
	const jsonType = "application/json"
	text := func(s string) map[string]any {
		return map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": s}}}
	}
	switch m {
	case InvalidJSON:
		write(http.StatusOK, jsonType, []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"resultType":"complete","content":[{"type":"text","text":"`+BodyMarker))
	case WrongShape:
		write(http.StatusOK, jsonType, rpcResult(id, map[string]any{
			"resultType": "complete", "supportedVersions": Current, "capabilities": []string{"tools"},
			"tools": map[string]any{"name": Echo}, "content": BodyMarker, "isError": "yes", "ttlMs": "soon", "cacheScope": 7,
		}))
	case WrongID:
		write(http.StatusOK, jsonType, rpcResult(json.RawMessage(WrongIDValue), text(BodyMarker)))
	case UnknownResultType:
		r := text(BodyMarker)
		r["resultType"] = "deferred"
		write(http.StatusOK, jsonType, rpcResult(id, r))
	case Oversized:
		w.Header().Set("Content-Type", jsonType)
		head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"resultType":"complete","content":[{"type":"text","text":"` + BodyMarker
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n := len(BodyMarker); n < OversizedBytes; n += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), OversizedBytes-n)]); err != nil {
				return // the client stopped reading
			}
		}
		_, _ = io.WriteString(w, `"}]}}`)
	case VersionNotSupported:
		write(http.StatusBadRequest, jsonType, rpcFailure(id, -32022, "unsupported protocol version: "+BodyMarker,
			map[string]any{"supported": []string{FutureRevision}, "requested": requested}))
	case HTTP500:
		write(http.StatusInternalServerError, jsonType, rpcFailure(id, -32603, "Internal error: "+BodyMarker, nil))
	case MalformedSSE:
		progress := mustJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
			"params": map[string]any{"progressToken": BodyMarker, "progress": 1, "total": 2}})
		write(http.StatusOK, "text/event-stream", []byte("event: message\ndata: "+string(progress)+"\n\n"+
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(id)+",\"result\":{\"content\":\""+BodyMarker+"\n\n"))
	}
}
