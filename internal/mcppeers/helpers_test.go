package mcppeers

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientOptions are the go-sdk client options the tests use unless they
// say otherwise: the MRTR loop is the test's (MultiRoundTrip disabled), and
// both elicitation modes are declared.
func clientOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{},
		}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
}

// connect connects a stock go-sdk client to url; the session closes with t.
func connect(t *testing.T, url string, opts *mcp.ClientOptions, rt http.RoundTripper) (*mcp.ClientSession, error) {
	t.Helper()
	if opts == nil {
		opts = clientOptions()
	}
	if rt == nil {
		rt = &http.Transport{}
	}
	if tr, ok := rt.(*http.Transport); ok {
		t.Cleanup(tr.CloseIdleConnections)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcppeers-test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func mustConnect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := connect(t, url, nil, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return cs
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// post sends one raw JSON-RPC request with the 2026-07-28 headers
// (MCP-Protocol-Version, Mcp-Method, and Mcp-Name when name is set) and
// returns the response and its body.
func post(t *testing.T, url, version, method, name, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if method != "" {
		req.Header.Set("Mcp-Method", method)
	}
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// meta2026 is the _meta every 2026-07-28 request carries (MCP 2026-07-28
// SEP-2575), with extra members appended.
func meta2026(caps string, extra ...string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps
	for _, e := range extra {
		m += "," + e
	}
	return `{` + m + `}`
}

func getBody(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}
