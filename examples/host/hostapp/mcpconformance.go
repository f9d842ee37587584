package hostapp

import (
	"net/http"
	"time"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/examples/host/mcpfixtures"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/ext"
)

// mcpConformancePath serves the official MCP conformance suite's fixtures
// (package mcpfixtures) in their own demo tenant, beside the OpenWOP
// fixtures on /mcp. The suite sends no credential, so every caller of this
// path is an anonymous Subject in mcpfixtures.Tenant: a tenant that holds
// nothing but the fixtures and that no API key reaches. On a loopback
// listener a page of the host's own origin may call it, because the
// suite's DNS-rebinding scenario sends the server URL's origin (and Host)
// and expects a 2xx; any other Origin is 403.
const mcpConformancePath = "/mcp-conformance"

// conformanceRoute adds the suite's MCP server to h, over the host's store
// (seed registers the fixtures there), audit trail, requestState key and
// MCP version policy; h drains and closes it with /mcp.
func conformanceRoute(h *wopinterop.Host, version string) (wopinterop.Route, error) {
	fixtures, err := ext.New(mcpfixtures.New().Config())
	if err != nil {
		return wopinterop.Route{}, err
	}
	return h.NewMCP(mcpConformancePath, interop.SubjectResolverFunc(conformanceClient), mcp.Options{
		AllowAnonymous:         true,
		AllowOwnLoopbackOrigin: true,
		Tasks:                  true,
		ServerInfo:             mcp.Implementation{Name: implementationName + " (MCP conformance fixtures)", Version: version},
		BlockTimeout:           10 * time.Second,
		Extension:              fixtures,
	})
}

// conformanceClient is every caller of mcpConformancePath.
func conformanceClient(*http.Request) (interop.Subject, error) {
	return interop.Subject{Tenant: mcpfixtures.Tenant, Principal: "conformance-client"}, nil
}
