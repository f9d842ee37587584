package remote

import (
	"time"

	"github.com/wopinterop/wopinterop/outbound"
)

// Admission is the record a host configures for one MCP server. A server
// is reachable only through it: the endpoint, the credential and the
// admitted tools, resources and prompts never come from model content or
// from a message (admission-boundaries §18.3). Discovery is not
// permission: a tool the server lists but the admission does not name, or
// whose schema digest changed, is invisible and uncallable until the host
// admits it again.
type Admission struct {
	// Alias names the server inside the host; workflows refer to it.
	Alias string
	// Endpoint is the server's MCP endpoint (streamable HTTP), reached
	// through the egress guard.
	Endpoint string
	// Credential names what is presented to the server; the host's
	// Credentials resolve it at call time.
	Credential CredentialRef
	// Revision pins the MCP revision the host speaks to this server; empty
	// means the host's policy decides (never below its floor).
	Revision string
	// Tools, Resources and Prompts are what the host admitted, each pinned
	// by the digest of its definition at admission ([ToolDigest]).
	Tools     []AdmittedTool
	Resources []AdmittedResource
	Prompts   []AdmittedPrompt
	// Principal, Tenant and Purpose say on whose behalf and why the host
	// calls this server; they key the list cache and are recorded with
	// each attempt.
	Principal string
	Tenant    string
	Purpose   string
	// Workspace, when the host scopes the admission to one, keys the list
	// cache with the tenant and principal (OpenWOP interop map, mcp.cache).
	Workspace string
	// Limits bound each exchange.
	Limits Limits
}

// CredentialRef names the credential presented to a server by reference
// (the one type both client directions share).
type CredentialRef = outbound.CredentialRef

// AdmittedTool is one tool the host admitted, pinned by the lowercase hex
// SHA-256 of its RFC 8785 canonical definition (name, input and output
// schemas, annotations) at admission.
type AdmittedTool struct {
	Name   string
	Digest string
}

// AdmittedResource is one resource (or template) the host admitted.
type AdmittedResource struct {
	URI    string
	Digest string
}

// AdmittedPrompt is one prompt the host admitted.
type AdmittedPrompt struct {
	Name   string
	Digest string
}

// Limits bound one exchange with an admitted server. Zero values take the
// documented defaults.
type Limits struct {
	// MaxArgumentBytes caps a call's encoded arguments (default 1 MiB).
	MaxArgumentBytes int64
	// MaxResultBytes caps one response body (default 8 MiB).
	MaxResultBytes int64
	// MaxPages caps how many pages one list follows (default 16).
	MaxPages int
	// Timeout bounds one call from first send to a settled result,
	// input rounds included (default 2 minutes).
	Timeout time.Duration
	// NoCancelOnTimeout keeps a call that outlives Timeout from being
	// cancelled on the server: by default notifications/cancelled is sent,
	// so the server may stop the work.
	NoCancelOnTimeout bool
}

// Defaults of [Limits].
const (
	DefaultMaxArgumentBytes = 1 << 20
	DefaultMaxResultBytes   = 8 << 20
	DefaultMaxPages         = 16
	DefaultTimeout          = 2 * time.Minute
)

func (l Limits) withDefaults() Limits {
	if l.MaxArgumentBytes <= 0 {
		l.MaxArgumentBytes = DefaultMaxArgumentBytes
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}
