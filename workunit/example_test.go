package workunit_test

import (
	"encoding/json"
	"fmt"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/workunit"
)

// A client seals a unit and sends it in an A2A message; the agent opens
// it from the parts it received under the activation the request made.
// The agent's result unit names the unit it answers, and only verifying
// it accepts the remote completion.
func Example() {
	sent, err := workunit.Seal(workunit.Unit{
		Kind: "com.example.invoice.review",
		ID:   "inv-42",
		Body: json.RawMessage(`{ "total": 120.50, "currency": "EUR" }`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(sent.Canonical()))

	// Client side: the part, and the message listing the extension. The
	// request activates it too (a2aext.NewActivator(workunit.ExtensionURI)
	// with a2a-go, or workunit.ActivateHeader).
	msg := wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("please review"), sent.A2APart())
	workunit.Activate(msg)

	// Agent side: the request's A2A-Extensions activated the extension.
	got, err := workunit.FromA2A(msg.Parts, []string{workunit.ExtensionURI})
	fmt.Println(got.Digest() == sent.Digest(), err)
	_, err = workunit.FromA2A(msg.Parts, nil)
	fmt.Println(err)

	// The agent answers with a result unit; the client records the remote
	// completion as pending until the result verifies.
	result, _ := workunit.Seal(workunit.Unit{Kind: "com.example.invoice.verdict", ResultOf: got.Digest(), Body: json.RawMessage(`{"approved":true}`)})
	completion := workunit.RemoteCompleted(sent)
	fmt.Println(completion.Acceptance())
	completion, err = completion.Verify(result)
	fmt.Println(completion.Acceptance(), err)
	// Output:
	// {"body":{"currency":"EUR","total":120.5},"id":"inv-42","kind":"com.example.invoice.review"}
	// true <nil>
	// workunit: extension not activated: the exchange did not activate https://github.com/wopinterop/wopinterop/workunit/v1
	// pending-verification
	// accepted <nil>
}

// On MCP the unit travels in a tool's arguments under a reserved member,
// as a string that no re-encoding of the arguments can change. The tool
// declares the member in its input schema; that declaration activates the
// extension for its calls.
func ExampleFromMCPArguments() {
	sent, _ := workunit.Seal(workunit.Unit{Kind: "com.example.ping", Body: json.RawMessage(`[1.0, 2e0]`)})
	args, _ := json.Marshal(map[string]any{"comment": "hi", workunit.ArgumentName: sent.MCPArgument()})
	fmt.Println(string(args))

	schema := json.RawMessage(`{"type":"object","properties":{"` + workunit.ArgumentName + `":` + string(workunit.InputSchema()) + `}}`)
	got, err := workunit.FromMCPArguments(args, workunit.Declares(schema))
	fmt.Println(string(got.Unit().Body), err)

	args[len(args)-4] ^= 1 // one byte of the canonical text
	_, err = workunit.FromMCPArguments(args, true)
	fmt.Println(err)
	// Output:
	// {"comment":"hi","io.github.wopinterop/workunit-v1":{"sha256":"8853a1431d3b2f76c69bb4a48eb710c68038864b69993c39a01d2023e0589c4e","unit":"{\"body\":[1,2],\"kind\":\"com.example.ping\"}"}}
	// [1,2] <nil>
	// workunit: digest mismatch: the unit's bytes do not hash to its digest
}
