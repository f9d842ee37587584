package workunit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/workunit"
)

// authorized adds the test host's key to every request.
type authorized struct{ next http.RoundTripper }

func (a authorized) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+hostKey)
	return a.next.RoundTrip(r)
}

// connectMCP connects go-sdk's client (v1.8.0) to h.
func connectMCP(t *testing.T, h *mcpHost) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "workunit-test", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	cs, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{
		Endpoint:             h.url + "/mcp",
		HTTPClient:           &http.Client{Transport: authorized{http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolDeclares reads, as a client does, whether a listed tool declares
// the envelope.
func toolDeclares(t *testing.T, cs *sdk.ClientSession, name string) bool {
	t.Helper()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == name {
			schema, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			return workunit.Declares(schema)
		}
	}
	t.Fatalf("no tool %s", name)
	return false
}

// The unit goes from go-sdk's client through our MCP server to the
// workflow byte for byte: the tool declares the envelope, the arguments
// carry it beside the workflow's own, the run's inputs open to the exact
// bytes, and the result unit in structuredContent verifies the
// completion.
func TestMCPRoundTripWithGoSDK(t *testing.T) {
	h := newMCPHost(t)
	cs := connectMCP(t, h)
	if !toolDeclares(t, cs, reviewMCP) || toolDeclares(t, cs, plainMCP) {
		t.Fatal("the tools' declarations are not what their schemas say")
	}
	sent := mustSeal(t, sample)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: reviewMCP, Arguments: map[string]any{
		"comment": "<please> & thanks", workunit.ArgumentName: sent.MCPArgument(),
	}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call: %+v %v", res, err)
	}
	// The workflow's inputs hold exactly the bytes sealed.
	req := h.host.last(t)
	got, err := workunit.FromMCPArguments(req.Inputs, workunit.Declares(inputSchemaOf(req.WorkflowID)))
	if err != nil || !bytes.Equal(got.Canonical(), sent.Canonical()) || got.Digest() != sent.Digest() {
		t.Fatalf("the host opened %q (%v) from %s", got.Canonical(), err, req.Inputs)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	completion := workunit.RemoteCompleted(sent)
	result, err := workunit.FromMCPArguments(structured, true)
	if err != nil || result.Unit().Kind != verdictKind {
		t.Fatalf("result %s: %v", structured, err)
	}
	accepted, err := completion.Verify(result)
	if err != nil || accepted.Acceptance() != workunit.Accepted {
		t.Fatalf("Verify: %+v %v", accepted, err)
	}
}

// mcpRefusal is a tools/call the host refused: -32602 with the field
// and reason the host gave, and no run.
func mcpRefusal(t *testing.T, h *mcpHost, cs *sdk.ClientSession, tool string, args map[string]any, reason string) {
	t.Helper()
	before := h.host.runs(t)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("tools/call: %+v %v", res, err)
	}
	wantData := `{"field":"arguments/` + strings.ReplaceAll(workunit.ArgumentName, "/", "~1") + `","reason":` + strconv.Quote(reason) + `}`
	if rpcErr.Code != jsonrpc.CodeInvalidParams || rpcErr.Message != "Invalid params: the host refused the arguments" || string(rpcErr.Data) != wantData {
		t.Fatalf("refusal %d %q %s\nwant data %s", rpcErr.Code, rpcErr.Message, rpcErr.Data, wantData)
	}
	if after := h.host.runs(t); after != before {
		t.Fatalf("a refused unit created a run (%d → %d)", before, after)
	}
}

// A one-byte change anywhere in the canonical string or the digest fails
// closed: the call is refused with invalid params, and no run exists.
func TestMCPOneByteChangeFailsClosed(t *testing.T) {
	h := newMCPHost(t)
	cs := connectMCP(t, h)
	sent := mustSeal(t, sample)
	canonical, digest := sent.Canonical(), sent.Digest()
	const mismatch = "workunit: digest mismatch: the unit's bytes do not hash to its digest"
	for i := range canonical {
		changed := bytes.Clone(canonical)
		changed[i] ^= 0x01
		mcpRefusal(t, h, cs, reviewMCP, map[string]any{workunit.ArgumentName: map[string]any{"sha256": digest, "unit": string(changed)}}, mismatch)
	}
	for i := range len(digest) {
		d := []byte(digest)
		d[i] = "01"[boolInt(d[i] == '0')]
		mcpRefusal(t, h, cs, reviewMCP, map[string]any{workunit.ArgumentName: map[string]any{"sha256": string(d), "unit": string(canonical)}}, mismatch)
	}
	// A unit of another kind with its own right digest is no change: the
	// bytes are what was hashed. Bytes that are not canonical are.
	loose := `{"kind":"k","body":1}`
	mcpRefusal(t, h, cs, reviewMCP, map[string]any{workunit.ArgumentName: map[string]any{"sha256": hexSHA256([]byte(loose)), "unit": loose}},
		"workunit: not RFC 8785 canonical: the unit's bytes are not its canonical form")
}

// Missing activation fails closed: a tool whose schema does not declare
// the envelope never reads one, even when the arguments carry it; a tool
// that declares it refuses arguments without it — in the server's own
// schema check, before the host is asked.
func TestMCPMissingActivationFailsClosed(t *testing.T) {
	h := newMCPHost(t)
	cs := connectMCP(t, h)
	sent := mustSeal(t, sample)
	mcpRefusal(t, h, cs, plainMCP, map[string]any{workunit.ArgumentName: sent.MCPArgument()},
		"workunit: extension not activated: the tool does not declare "+workunit.ArgumentName)

	before := h.host.runs(t)
	_, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: reviewMCP, Arguments: map[string]any{"comment": "no unit"}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || rpcErr.Message != "Invalid params: arguments do not match the tool's input schema" {
		t.Fatalf("no unit: %v", err)
	}
	if after := h.host.runs(t); after != before {
		t.Fatalf("a call without its unit created a run (%d → %d)", before, after)
	}
}
