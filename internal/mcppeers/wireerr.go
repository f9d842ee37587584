package mcppeers

import (
	"encoding/json"
	"net/http"
)

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

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
