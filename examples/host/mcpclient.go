package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/remote"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

// The host as an MCP client (package mcp/remote): the library builds the
// client from wopinterop.MCPConfig.Client with the mcp record's version
// policy and round ceiling, and the mcp record then claims client: true
// (OpenWOP RFC 0204), because this host exposes it to a workflow —
// conformance-mcp-client, which calls a tool of a server the operator
// admitted with -mcp-server. The mcp conformance seam (seam_mcp.go)
// admits a server per call on the same client. Every request goes through
// the egress guard whose allowlist is -peer-allow.

// mcpServerSpec is one -mcp-server alias=URL.
type mcpServerSpec struct {
	Alias    string
	Endpoint string
}

// mcpServerFlags is the repeatable -mcp-server flag.
type mcpServerFlags []mcpServerSpec

func (f *mcpServerFlags) String() string {
	if f == nil {
		return ""
	}
	parts := make([]string, len(*f))
	for i, s := range *f {
		parts[i] = s.Alias
	}
	return strings.Join(parts, ",")
}

// Set reads one alias=URL: an alias of letters, digits, '.', '_' and '-',
// and the server's absolute http(s) MCP endpoint without userinfo or
// fragment. Whether the URL may be reached is the egress guard's decision.
func (f *mcpServerFlags) Set(v string) error {
	alias, raw, ok := strings.Cut(strings.TrimSpace(v), "=")
	if !ok || !aliasGrammar.MatchString(alias) {
		return errors.New("want alias=URL, the alias 1–64 of [A-Za-z0-9._-]")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("server %q: the URL must be an absolute http(s) URL without userinfo or fragment", alias)
	}
	for _, s := range *f {
		if s.Alias == alias {
			return fmt.Errorf("alias %q is given twice", alias)
		}
	}
	*f = append(*f, mcpServerSpec{Alias: alias, Endpoint: raw})
	return nil
}

// mcpCredentials is the example host's remote.Credentials: static bearer
// tokens by reference. The only one is the seam's (credentialSeam), drawn
// per process; the -mcp-server servers are sent no credential.
type mcpCredentials map[string]string

func (c mcpCredentials) Credential(_ context.Context, ref remote.CredentialRef) (string, string, error) {
	tok, ok := c[ref.Name]
	if !ok {
		return "", "", errors.New("no such credential")
	}
	return "Bearer", tok, nil
}

// mcpClientConfig is the library's MCP client section: the -peer-allow
// guard and the seam's credential. The library fills the policy and the
// round ceiling from the mcp record.
func mcpClientConfig(cfg config) (*wopinterop.MCPClientConfig, error) {
	guard, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: cfg.PeerAllow})
	if err != nil {
		return nil, err
	}
	creds := mcpCredentials{credentialSeam: base64.RawURLEncoding.EncodeToString(randomSecret(32))}
	return &wopinterop.MCPClientConfig{Guard: guard, Credentials: creds, Options: remote.Options{Logger: cfg.Logger}}, nil
}

// mcpReviewTimeout bounds the review of one -mcp-server at start.
const mcpReviewTimeout = 15 * time.Second

// toolCalls is the host's MCP client side: the library's client, the
// servers admitted at start, and the seam calls waiting for their runs.
type toolCalls struct {
	client  *remote.Client
	servers []mcpServerSpec
	seamOps *seamCalls[*mcpSeamCall]
}

// startMCPClient admits every -mcp-server with each tool it lists now
// pinned by its current digest (one review per server: server/discover and
// tools/list, the negotiation recorded as a host event of no tenant; each
// admission logged with its digests), then registers conformance-mcp-client
// — and the mcp seam's hidden workflow with the seams — in every tenant.
func (s *server) startMCPClient(cfg config, client *remote.Client) (*toolCalls, error) {
	tc := &toolCalls{client: client, servers: cfg.MCPServers, seamOps: newSeamCalls[*mcpSeamCall]()}
	for _, spec := range cfg.MCPServers {
		a, err := tc.review(spec)
		if err != nil {
			return nil, fmt.Errorf("-mcp-server %s: %s", spec.Alias, remote.ProjectError("", err).Message)
		}
		if err := client.Admit(a); err != nil {
			return nil, fmt.Errorf("-mcp-server %s: %w", spec.Alias, err)
		}
		pinned := make([]string, len(a.Tools))
		for i, t := range a.Tools {
			pinned[i] = t.Name + "=" + t.Digest
		}
		s.log.Info("remote MCP server admitted", "server", spec.Alias, "tools", strings.Join(pinned, ","))
	}
	defs := []memstore.WorkflowDef{tc.clientWorkflow()}
	if cfg.Seams {
		defs = append(defs, tc.seamWorkflow())
	}
	for _, t := range cfg.Tenants {
		for _, def := range defs {
			if err := cfg.Workflows.Register(t, def); err != nil {
				return nil, fmt.Errorf("host: register %s for %q: %w", def.Workflow.ID, t, err)
			}
		}
	}
	return tc, nil
}

// review is the admission of spec: every tool the server lists now,
// pinned by the digest it is listed with (a name listed twice is left
// out: it matches no admission).
func (tc *toolCalls) review(spec mcpServerSpec) (remote.Admission, error) {
	ctx, cancel := context.WithTimeout(context.Background(), mcpReviewTimeout)
	defer cancel()
	a := remote.Admission{Alias: spec.Alias, Endpoint: spec.Endpoint}
	listed, err := tc.client.Review(ctx, negotiate.Scope{}, a)
	if err != nil {
		return remote.Admission{}, err
	}
	a.Tools = pinAll(listed)
	return a, nil
}

// pinAll admits every listed tool with its digest.
func pinAll(listed []remote.ListedTool) []remote.AdmittedTool {
	var out []remote.AdmittedTool
	for _, l := range listed {
		if l.Digest != "" {
			out = append(out, remote.AdmittedTool{Name: l.Tool.Name, Digest: l.Digest})
		}
	}
	return out
}

// mcpClientWorkflowID is the workflow that calls a tool of an admitted
// MCP server: the OpenWOP suite's ctx.mcp fixture (RFC 0204), registered
// whenever the host exposes its MCP client.
const mcpClientWorkflowID = "conformance-mcp-client"

// mcpClientInputs are conformance-mcp-client's inputs.
type mcpClientInputs struct {
	Method    string          `json:"method"`
	ServerID  string          `json:"serverId"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// mcpClientOutputs are its outputs: the tool's result as the run takes
// it (interop.ToolResult).
type mcpClientOutputs struct {
	Result interop.ToolResult `json:"result"`
}

// clientWorkflow is conformance-mcp-client: one callTool on the server the
// inputs name (an -mcp-server alias, never a URL) through the host's MCP
// client, on behalf of the run. The server's input requests become
// clarification interrupts of the run (memstore's RunContext.CallTool),
// answered only by a user. The run completes with the tool's result —
// isError included: a tool's failure is a result — and fails with the
// projected error otherwise; an unknown serverId fails it not_found.
func (tc *toolCalls) clientWorkflow() memstore.WorkflowDef {
	schema := `{"type":"object","properties":{` +
		`"method":{"enum":["callTool"],"description":"The MCP client method: callTool."},` +
		`"serverId":{"type":"string","pattern":"^[A-Za-z0-9._-]{1,64}$","description":"The admitted MCP server: an -mcp-server alias, never a URL."},` +
		`"name":{"type":"string","minLength":1,"description":"The admitted tool to call."},` +
		`"arguments":{"type":"object","description":"The tool's arguments."}},` +
		`"required":["method","serverId","name"],"additionalProperties":false}`
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          mcpClientWorkflowID,
			Name:        "Call a remote MCP tool",
			Description: "Calls one tool of an MCP server the host admitted and completes with the tool's result.",
			InputSchema: json.RawMessage(schema),
			Tags:        []string{"mcp", "conformance"},
		},
		Run:        tc.runClient,
		ToolCaller: tc.client.ToolCaller(),
	}
}

func (tc *toolCalls) runClient(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	var in mcpClientInputs
	if err := json.Unmarshal(rc.Inputs(), &in); err != nil { // validated against the schema
		return nil, memstore.Fault("the run's inputs could not be read")
	}
	res, err := rc.CallTool(ctx, in.ServerID, in.Name, in.Arguments)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err() // the run is being cancelled
	case errors.Is(err, remote.ErrUnknownServer):
		// OpenWOP RFC 0204: a call to a server the host has no binding for
		// rejects not_found.
		return nil, memstore.FailWith(codeNotFound, "no MCP server is admitted under that serverId")
	case err != nil:
		return nil, failMCP(rc.RunID(), err)
	}
	return json.Marshal(mcpClientOutputs{Result: res})
}

// failMCP fails the run with the OpenWOP error an MCP client error
// projects to (remote.ProjectError): its registered code and the
// library's own message, never the server's text.
func failMCP(runID string, err error) error {
	var pe *outbound.Error
	if !errors.As(err, &pe) {
		pe = remote.ProjectError(runID, err)
	}
	if pe.Code == codeInternal {
		return err // logged by the store, shown as "workflow failed"
	}
	return memstore.FailWith(pe.Code, pe.Message)
}
