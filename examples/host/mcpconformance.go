package main

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/wopinterop/wopinterop/examples/host/mcpfixtures"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/ext"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
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

// conformanceMount is the suite's MCP server and its audit trail.
type conformanceMount struct {
	srv     *mcp.Server
	auditor *negotiate.Auditor
}

// newConformanceMount builds the mount over the host's store, which must
// hold the fixtures (seed registers them).
func newConformanceMount(cfg config, version string, sealKey []byte) (*conformanceMount, error) {
	policy, err := negotiate.NewPolicy(negotiate.Config{
		Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision, Now: cfg.Now,
	})
	if err != nil {
		return nil, err
	}
	sealer, err := sealed.NewSealer(sealed.Config{Key: sealKey, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	auditor := negotiate.NewAuditor(cfg.Store, negotiate.AuditorOptions{Logger: cfg.Logger})
	deps := mcp.Deps{
		Store:   cfg.Store,
		Policy:  policy,
		Auditor: auditor,
		Sealer:  sealer,
		Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{Tenant: mcpfixtures.Tenant, Principal: "conformance-client"}, nil
		}),
	}
	mc := mcp.Options{
		AllowAnonymous:         true,
		AllowOwnLoopbackOrigin: true,
		Tasks:                  true,
		ServerInfo:             mcp.Implementation{Name: implementationName + " (MCP conformance fixtures)", Version: version},
		BlockTimeout:           10 * time.Second,
		Logger:                 cfg.Logger,
		Now:                    cfg.Now,
	}
	if mc.Extension, err = ext.New(mcpfixtures.New().Config()); err != nil {
		return nil, err
	}
	srv, err := mcp.New(deps, mc)
	if err != nil {
		return nil, err
	}
	auditor.Start()
	return &conformanceMount{srv: srv, auditor: auditor}, nil
}

// Close ends the mount's listen streams and drains its audit records.
func (m *conformanceMount) Close(ctx context.Context) error {
	return errors.Join(m.srv.Close(ctx), m.auditor.Close(ctx))
}
