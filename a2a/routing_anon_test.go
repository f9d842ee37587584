package a2a

import (
	"context"
	"errors"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// TestWithAgentNeedsAuthentication: a routing value resolves only for an
// authenticated caller, so an anonymous caller with a real value is treated
// exactly like one with a never-minted value on every operation that goes
// through withAgent (OpenWOP RFC 0202 §D.6).
func TestWithAgentNeedsAuthentication(t *testing.T) {
	e := newRESTEnv(t)
	real := e.routing.Derive("agent-ada")
	ctx := context.Background()

	authed := &call{subject: interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}}
	if err := e.srv.withAgent(ctx, authed, real); err != nil || authed.agent == nil || authed.agent.ID != "agent-ada" {
		t.Fatalf("authenticated caller: err %v, agent %+v", err, authed.agent)
	}
	for _, r := range []string{real, "AAAAAAAAAAAAAAAAAAAAAAAA"} {
		anon := &call{subject: interop.Subject{Tenant: "acme", Principal: "anonymous"}}
		if err := e.srv.withAgent(ctx, anon, r); !errors.Is(err, errUnknownRoutingValue) || anon.agent != nil {
			t.Errorf("anonymous caller with %q: err %v, agent %+v", r, err, anon.agent)
		}
	}
}
