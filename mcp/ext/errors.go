package ext

import (
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// JSON-RPC and MCP error codes the extension answers with.
const (
	codeInvalidParams     = -32602
	codeMissingCapability = -32021
	codeInternalError     = -32603
)

func invalidParams(msg string) *mcp.Error { return &mcp.Error{Code: codeInvalidParams, Message: msg} }

// withData returns e with its data member set to the JSON encoding of v.
func withData(e *mcp.Error, v any) *mcp.Error {
	b, err := mount.Marshal(v)
	if err != nil { // every data value is a plain struct of strings
		panic("mcp/ext: unencodable error data: " + err.Error())
	}
	e.Data = b
	return e
}

// missingCapability is -32021 naming what the request did not declare, as
// a ClientCapabilities object (OpenWOP interop map, mcp.meta).
func missingCapability(required string) *mcp.Error {
	return &mcp.Error{Code: codeMissingCapability, Message: "Missing required client capability", Data: []byte(`{"requiredCapabilities":` + required + `}`)}
}

// errUnknownCursor refuses a cursor on a list the extension sends as one
// page: it never issued one, so any cursor is unknown.
var errUnknownCursor = invalidParams("Invalid params: unknown cursor")
