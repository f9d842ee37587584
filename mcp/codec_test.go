package mcp

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// The envelope is read by the shared codec: a "jsonrpc" written with an
// escape is the string "2.0" as JSON reads it, and the method and params
// are read as encoding/json reads them.
func TestDecodeMessageReadsEscapes(t *testing.T) {
	msg, err := decodeMessage([]byte(`{"jsonrpc":"2\u002e0","id":"x","m\u0065thod":"tools\/list","params":{"a":1}}`))
	if err != nil {
		t.Fatalf("refused: %+v", err)
	}
	if string(msg.id) != `"x"` || msg.method != "tools/list" || !paramIs(msg.params, "a", "1") {
		t.Fatalf("decoded %+v", msg)
	}
}

// WriteError writes an id only when it is one: a malformed string is left
// out, so the body stays JSON.
func TestWriteErrorDropsMalformedID(t *testing.T) {
	for _, id := range []string{`"abc`, `1 2`, `01`, `null`} {
		rec := httptest.NewRecorder()
		WriteError(rec, json.RawMessage(id), interop.ErrForbidden)
		want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the credential may not use this MCP server"}}`
		if rec.Code != 403 || rec.Body.String() != want {
			t.Errorf("id %s: HTTP %d %s, want 403 %s", id, rec.Code, rec.Body, want)
		}
	}
}

// paramIs reports whether params has the member name with the raw value want.
func paramIs(params mount.Params, name, want string) bool {
	v, ok := params.Get(name)
	return ok && string(v) == want
}
