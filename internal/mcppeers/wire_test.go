package mcppeers

import (
	"testing"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// TestGoWire: the scripted server's exact answers, golden
// (testdata/wire/<name>.txt): discover, the default tool list with its
// schemas, each MRTR tool's first round (the requestState's bytes
// included), the -32021 refusals, a failure and the annotated result
// with its progress events.
func TestGoWire(t *testing.T) {
	s := StartGo(t, Script{ListCache: PrivateList()})
	form, url := `{"elicitation":{}}`, `{"elicitation":{"url":{}}}`
	callBody := func(name, caps string, extra ...string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","_meta":` + meta2026(caps, extra...) + `}}`
	}
	cases := []struct{ name, method, tool, body string }{
		{"discover", "server/discover", "", discoverBody(1)},
		{"tools-list", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + meta2026(`{}`) + `}}`},
		{"needs_input", "tools/call", NeedsInput, callBody(NeedsInput, form)},
		{"needs_input-no-elicitation", "tools/call", NeedsInput, callBody(NeedsInput, `{}`)},
		{"needs_input_loop", "tools/call", NeedsInputLoop, callBody(NeedsInputLoop, form)},
		{"url_input", "tools/call", URLInput, callBody(URLInput, url)},
		{"url_input-form-only", "tools/call", URLInput, callBody(URLInput, form)},
		{"fails", "tools/call", Fails, callBody(Fails, `{}`)},
		{"annotated", "tools/call", Annotated, callBody(Annotated, `{}`, `"progressToken":7`)},
		{"echo", "tools/call", Echo, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"z":[1, "two"],"a":null},"_meta":` + meta2026(`{}`) + `}}`},
	}
	for _, tc := range cases {
		res, body := post(t, s.URL, Current, tc.method, tc.tool, tc.body)
		golden.Check(t, "wire/"+tc.name+".txt", exchange(s, res, body))
	}
}
