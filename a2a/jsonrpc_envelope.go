package a2a

// The JSON-RPC envelope, read in place by the shared codec
// (internal/jsonrpc) under A2A's rules: "id" a string, a number or null
// (absent: a notification), an envelope member spelled in another case
// refused — encoding/json would take "Method" for "method" — and each
// refusal worded here.

import (
	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/internal/jsonrpc"
)

// envelopeRules are what A2A allows of a request object.
var envelopeRules = jsonrpc.Rules{NullID: true, RefuseFolded: true}

// parseEnvelope reads one request object (raw is valid JSON starting with
// '{'). On a refusal the returned request still carries the id when it was
// readable, so the error can echo it.
func parseEnvelope(raw []byte) (rpcRequest, *Error) {
	q, problem := jsonrpc.Parse(raw, envelopeRules)
	out := rpcRequest{id: q.ID, params: q.Params}
	switch problem {
	case jsonrpc.OK:
		out.op = knownMethod(q.Method, q.MethodEscaped)
		return out, nil
	case jsonrpc.NotJSON:
		return rpcRequest{}, parseError()
	case jsonrpc.BadID:
		return out, invalidRequest("id must be a string, a number or null")
	case jsonrpc.FoldedMember:
		return out, invalidRequest("member names are case-sensitive")
	case jsonrpc.BadVersion:
		return out, invalidRequest("jsonrpc must be \"2.0\"")
	case jsonrpc.BadMethod:
		return out, invalidRequest("method must be a string")
	}
	return out, invalidRequest("params must be an object")
}

// knownMethod returns the row of a method name without allocating; nil for
// an unknown name. A name written with escapes is decoded first.
func knownMethod(raw []byte, escaped bool) *operation {
	if escaped {
		name, err := jsonbytes.Unquote(raw, true)
		if err != nil {
			return nil
		}
		return lookupMethod([]byte(name))
	}
	return lookupMethod(raw)
}

// validID reports whether raw is an A2A JSON-RPC id: a string, a number
// or null.
func validID(raw []byte) bool { return jsonrpc.ValidID(raw, envelopeRules.NullID) }
