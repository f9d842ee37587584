package mapping_test

import (
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mapping"
)

func Example() {
	m := mapping.Builtin() // build once, share everywhere

	// A run waiting on a credential interrupt is AUTH_REQUIRED on A2A;
	// waiting on a clarification it is INPUT_REQUIRED.
	auth, _ := m.TaskState(interop.StatusWaitingInput, interop.InterruptCredential)
	input, _ := m.TaskState(interop.StatusWaitingInput, interop.InterruptClarification)
	fmt.Println(auth.Wire, auth.Stored)
	fmt.Println(input.Wire, input.Stored)

	// A failed run is a completed MCP task whose result has isError set.
	status, _ := m.MCPTaskStatus(interop.StatusFailed)
	fmt.Println("mcp task:", status)

	// The error table row a binding writes for an unknown task.
	e, _ := m.A2AError(mapping.CodeTaskNotFound)
	fmt.Println(e.JSONRPC, e.GRPC, e.HTTP, e.Reason, e.ClientProjection)

	// Output:
	// TASK_STATE_AUTH_REQUIRED auth-required
	// TASK_STATE_INPUT_REQUIRED input-required
	// mcp task: completed
	// -32001 NOT_FOUND 404 TASK_NOT_FOUND not_found
}

func ExampleMap_A2AGate() {
	m := mapping.Builtin()
	advertised := func(facet string) bool { return facet == "a2a.streaming" } // no durable tasks, no push

	for _, method := range []string{"SendStreamingMessage", "SubscribeToTask", "ListTaskPushNotificationConfigs"} {
		err := m.A2AGate(method, "", advertised)
		var off *mapping.FacetOffError
		if errors.As(err, &off) {
			fmt.Printf("%s: refused %d (%s), %s is off\n", method, off.Refusal.JSONRPC, off.Refusal.Reason, off.Facet)
			continue
		}
		fmt.Printf("%s: allowed\n", method)
	}
	// Output:
	// SendStreamingMessage: allowed
	// SubscribeToTask: refused -32004 (UNSUPPORTED_OPERATION), a2a.durableTasks is off
	// ListTaskPushNotificationConfigs: refused -32003 (PUSH_NOTIFICATION_NOT_SUPPORTED), a2a.pushNotifications is off
}

func ExampleSendMessageWhen() {
	m := mapping.Builtin()
	for _, s := range []interop.RunStatus{interop.StatusWaitingApproval, interop.StatusRunning, interop.StatusCompleted} {
		op, _ := m.A2AOperation("SendMessage", mapping.SendMessageWhen(true, s))
		v2 := op.V2Operation
		if v2 == "" {
			v2 = "(served by the interop layer)"
		}
		fmt.Printf("%s: %s\n", s, v2)
	}
	// Output:
	// waiting-approval: resolveInterruptByRun
	// running: (served by the interop layer)
	// completed: (served by the interop layer)
}

func ExampleLoad() {
	_, err := mapping.Load([]byte(`{"version": 2}`))
	var se *mapping.SchemaError
	fmt.Println(errors.Is(err, mapping.ErrSchema), errors.As(err, &se))
	// Output:
	// true true
}
