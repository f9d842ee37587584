package isolation_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// A run id leaves the host projected on a path and comes back in any of
// the accepted forms.
func Example_projection() {
	const runID = "anon:visitor/r-9f3cAB12cd34EF56"
	wire := isolation.Project(runID)
	fmt.Println(wire)

	for _, in := range []string{wire, "anon%3Avisitor%2Fr-9f3cAB12cd34EF56", runID} {
		id, err := isolation.ParseID(in)
		fmt.Println(id, err)
	}

	_, err := isolation.ParseID("anon~3Avisitor~7E2Fr-9f3cAB12cd34EF56") // projected twice
	fmt.Println(errors.Is(err, isolation.ErrMalformedID))
	// Output:
	// anon~3Avisitor~2Fr-9f3cAB12cd34EF56
	// anon:visitor/r-9f3cAB12cd34EF56 <nil>
	// anon:visitor/r-9f3cAB12cd34EF56 <nil>
	// anon:visitor/r-9f3cAB12cd34EF56 <nil>
	// true
}

// During the v1/v2 overlap a bare opaque segment binds to the caller's
// tenant; afterwards it is a validation error.
func ExampleResolveParam() {
	caller := interop.Subject{Tenant: "acme", Authenticated: true}

	id, err := isolation.ResolveParam(caller, "r-9f3cAB12cd34EF56", isolation.BindBare)
	fmt.Println(id, err)

	_, err = isolation.ResolveParam(caller, "r-9f3cAB12cd34EF56", isolation.RefuseBare)
	fmt.Println(errors.Is(err, isolation.ErrBareID))
	// Output:
	// acme/r-9f3cAB12cd34EF56 <nil>
	// true
}

// The routing value's shape, not its bytes: it depends on the host secret.
func ExampleRoutingKeys() {
	secret := bytes.Repeat([]byte{0x5a}, isolation.MinRoutingSecretLen) // from host config in real use
	keys, err := isolation.NewRoutingKeys(secret, "2.4.1")
	if err != nil {
		fmt.Println(err)
		return
	}
	agents := []interop.Agent{
		{ID: "support", Persona: "Support", Workflows: []string{"triage"}},
		{ID: "idle", Persona: "Idle"},
	}
	r, ok := keys.ForAgent(agents[0])
	grammar := regexp.MustCompile(`^[A-Za-z0-9._~-]{1,128}$`)
	fmt.Println(ok, len(r), grammar.MatchString(r))

	_, ok = keys.ForAgent(agents[1])
	fmt.Println("idle agent has a value:", ok)

	fmt.Println("the value is the agent id's:", r == keys.Derive("support"))

	_, err = isolation.NewRoutingKeys([]byte("short"), "2.4.1")
	fmt.Println(errors.Is(err, isolation.ErrRoutingSecretTooShort))
	// Output:
	// true 24 true
	// idle agent has a value: false
	// the value is the agent id's: true
	// true
}

// A REST surface tells a foreign id (403 id_tenant_mismatch) from one that
// is not an id at all; the A2A and MCP surfaces answer both as not found.
func ExampleMatchTenant() {
	caller := interop.Subject{Tenant: "acme", Authenticated: true}

	fmt.Println(isolation.MatchTenant(caller, "acme/r-9f3cAB12cd34EF56"))
	fmt.Println(isolation.MatchTenant(caller, "globex/r-9f3cAB12cd34EF56"))
	fmt.Println(isolation.MatchTenant(caller, "not an id"))
	// Output:
	// <nil>
	// isolation: id tenant segment is not the caller's
	// isolation: malformed tenant-bound id
}
