package hostapp

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
		if unanswered(err) {
			// A server down at start is still the operator's binding: it is
			// admitted without tools, so its health reads unreachable and
			// a call is refused until the host restarts and reviews it.
			s.log.Warn("remote MCP server not reviewed: nothing answered; admitted without tools", "server", spec.Alias)
			a, err = remote.Admission{Alias: spec.Alias, Endpoint: spec.Endpoint}, nil
		}
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

// unanswered reports a review that failed because nothing answered
// server/discover (a server down at start): an exchange error that is not
// the egress guard's refusal nor a server's answer.
func unanswered(err error) bool {
	var ee *remote.ExchangeError
	return errors.As(err, &ee) && !errors.Is(err, egress.ErrRefused)
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

// The methods of conformance-mcp-client (OpenWOP RFC 0204, host-services.md
// §mcp: ctx.mcp).
const (
	methodCallTool     = "callTool"
	methodListTools    = "listTools"
	methodServerHealth = "serverHealth"
)

// mcpClientNodeID is the node whose end the run's log records: node.completed
// with the result as outputs.result, or node.failed with the error.
const mcpClientNodeID = "mcp-client"

// mcpClientInputs are conformance-mcp-client's inputs.
type mcpClientInputs struct {
	Method    string          `json:"method"`
	ServerID  string          `json:"serverId"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Cursor    *string         `json:"cursor"`
}

// mcpClientOutputs are its outputs: the result as the server sent it.
type mcpClientOutputs struct {
	Result json.RawMessage `json:"result"`
}

// serverHealth is a health check's result: reachable with the server's
// server/discover result as received when the host negotiated a revision
// with it; unreachable when nothing answered; incompatible when it
// answered without a revision the host accepts. The states name what the
// host observed, never a connection (the client holds none between
// calls).
type serverHealth struct {
	State    string          `json:"state"`
	Discover json.RawMessage `json:"discover,omitempty"`
}

// clientWorkflow is conformance-mcp-client, the OpenWOP suite's ctx.mcp
// fixture (RFC 0204), on the server the inputs name (an -mcp-server alias,
// never a URL), through the host's MCP client on behalf of the run, as
// the node mcp-client:
//
//   - callTool calls one admitted tool; the server's input requests become
//     clarification interrupts of the run (memstore's RunContext.CallTool),
//     answered only by a user; the result is the server's tools/call
//     result unaltered — isError included: a tool's failure is a result;
//   - listTools returns one tools/list page as the server sent it (the
//     cursor given, if any, sent as is): discovery, returned as observed —
//     a call is still checked against the admission;
//   - serverHealth negotiates afresh and reports serverHealth; it
//     completes either way.
//
// An unknown serverId fails the node and the run not_found; any other
// failure with the projected error.
func (tc *toolCalls) clientWorkflow() memstore.WorkflowDef {
	schema := `{"type":"object","properties":{` +
		`"method":{"enum":["callTool","listTools","serverHealth"],"description":"The MCP client method (ctx.mcp)."},` +
		`"serverId":{"type":"string","pattern":"^[A-Za-z0-9._-]{1,64}$","description":"The admitted MCP server: an -mcp-server alias, never a URL."},` +
		`"name":{"type":"string","minLength":1,"description":"callTool: the admitted tool to call."},` +
		`"arguments":{"type":"object","description":"callTool: the tool's arguments."},` +
		`"cursor":{"type":"string","description":"listTools: the page to read, a nextCursor the server gave."}},` +
		`"required":["method","serverId"],` +
		`"if":{"properties":{"method":{"const":"callTool"}}},"then":{"required":["name"]},` +
		`"additionalProperties":false}`
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          mcpClientWorkflowID,
			Name:        "Use a remote MCP server",
			Description: "Calls a tool of, lists the tools of, or checks the health of an MCP server the host admitted, and completes with what the server answered.",
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
	return rc.Node(mcpClientNodeID, func() (json.RawMessage, error) {
		var result json.RawMessage
		var err error
		switch in.Method {
		case methodListTools:
			result, err = tc.listPage(ctx, rc, in)
		case methodServerHealth:
			result, err = tc.health(ctx, rc, in.ServerID)
		default:
			result, err = tc.callTool(ctx, rc, in)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err() // the run is being cancelled
		case errors.Is(err, remote.ErrUnknownServer):
			// OpenWOP RFC 0204: a server the host has no binding for
			// rejects not_found.
			return nil, memstore.FailWith(codeNotFound, "no MCP server is admitted under that serverId")
		case err != nil:
			return nil, failMCP(rc.RunID(), err)
		}
		return json.Marshal(mcpClientOutputs{Result: result})
	})
}

// callTool is the server's result of one tools/call, unaltered.
func (tc *toolCalls) callTool(ctx context.Context, rc *memstore.RunContext, in mcpClientInputs) (json.RawMessage, error) {
	res, err := rc.CallTool(ctx, in.ServerID, in.Name, in.Arguments)
	if err != nil {
		return nil, err
	}
	if len(res.Raw) == 0 {
		return nil, memstore.Fault("the MCP server's result was not captured")
	}
	return res.Raw, nil
}

// listPage is one tools/list page as the server sent it.
func (tc *toolCalls) listPage(ctx context.Context, rc *memstore.RunContext, in mcpClientInputs) (json.RawMessage, error) {
	s, err := tc.client.Connect(remote.WithTraceContext(ctx, rc.Trace()), rc.RunID(), in.ServerID)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	cursor := ""
	if in.Cursor != nil {
		cursor = *in.Cursor
	}
	return s.ListPage(remote.WithTraceContext(ctx, rc.Trace()), cursor)
}

// health negotiates with the server and reports what it observed.
func (tc *toolCalls) health(ctx context.Context, rc *memstore.RunContext, alias string) (json.RawMessage, error) {
	s, err := tc.client.Connect(remote.WithTraceContext(ctx, rc.Trace()), rc.RunID(), alias)
	var h serverHealth
	var refused *remote.NegotiationError
	switch {
	case errors.Is(err, remote.ErrUnknownServer), err != nil && ctx.Err() != nil:
		return nil, err
	case errors.As(err, &refused):
		h.State = "incompatible"
	case err != nil:
		h.State = "unreachable"
	default:
		h.State, h.Discover = "reachable", s.Discovered()
		_ = s.Close()
	}
	return json.Marshal(h)
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
