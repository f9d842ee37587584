package a2apeers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// ErrorInfoType is the @type of a google.rpc.ErrorInfo detail.
const ErrorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// errorInfo is an ErrorInfo detail in the A2A domain (A2A 1.0 §10.6).
func errorInfo(reason string, metadata map[string]any) map[string]any {
	d := map[string]any{"@type": ErrorInfoType, "reason": reason, "domain": "a2a-protocol.org"}
	if metadata != nil {
		d["metadata"] = metadata
	}
	return d
}

// rpcResponse is a JSON-RPC 2.0 response (JSON-RPC 2.0 §5).
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func rpcResult(id json.RawMessage, result any) []byte {
	return mustJSON(rpcResponse{JSONRPC: "2.0", ID: id, Result: result})
}

func rpcFailure(id json.RawMessage, code int, message string, data any) []byte {
	return mustJSON(rpcResponse{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: message, Data: data}})
}

// requestID is the id of the JSON-RPC request in body, or null when it
// has none a response could echo.
func requestID(body []byte) json.RawMessage {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.ID) == 0 {
		return json.RawMessage("null")
	}
	return env.ID
}

// requireBearer answers a call without "Authorization: Bearer <token>"
// with 401 (RFC 6750 §3) and the binding's error body: JSON-RPC -31401
// (a2a-go's Unauthenticated code) or a google.rpc.Status (A2A 1.0 §11.6).
func requireBearer(token, binding string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+token {
			next.ServeHTTP(w, r)
			return
		}
		detail := []any{errorInfo("UNAUTHENTICATED", nil)}
		var body []byte
		if binding == BindingJSONRPC {
			raw, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw))
			body = rpcFailure(requestID(raw), -31401, "unauthenticated", detail)
		} else {
			body = mustJSON(map[string]any{"error": map[string]any{
				"code": http.StatusUnauthorized, "status": "UNAUTHENTICATED", "message": "unauthenticated", "details": detail,
			}})
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2apeers"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(body)
	})
}
