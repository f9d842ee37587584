package mcpfixtures

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// Tenant is the dedicated tenant the conformance fixtures live in: the
// suite calls without credentials, so the host maps its anonymous caller
// here and nowhere else.
const Tenant = "mcp-conformance"

// Ids of the workflow fixtures (the Tasks scenarios' tools).
const (
	WorkflowGreet         = "greet"
	WorkflowSlowCompute   = "slow_compute"
	WorkflowFailingJob    = "failing_job"
	WorkflowProtocolError = "protocol_error_job"
	WorkflowConfirmDelete = "confirm_delete"
	WorkflowMultiInput    = "multi_input"
)

// Observable values of the workflow fixtures.
const (
	// FailingJobMessage is the FailureMessage of failing_job (a tool
	// error: a completed task whose result has isError true).
	FailingJobMessage = "failing_job failed on purpose"
	// ProtocolErrorMessage is the FailureMessage of protocol_error_job, a
	// host fault (memstore.Fault): the task status is failed.
	ProtocolErrorMessage = "the compute backend of protocol_error_job is unavailable"
	// MaxSeconds bounds slow_compute's seconds.
	MaxSeconds = 600
)

// jobDelay is how long failing_job and protocol_error_job run before they
// fail, so the call is answered with a task while they still work.
const jobDelay = 300 * time.Millisecond

const (
	greetSchema       = `{"type":"object","properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"],"additionalProperties":false}`
	slowComputeSchema = `{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":600,"description":"How long to compute."},"label":{"type":"string","description":"Echoed in the result."}},"additionalProperties":false}`
	noArgumentsSchema = `{"type":"object","additionalProperties":false}`
	filenameSchema    = `{"type":"object","properties":{"filename":{"type":"string","description":"The file to delete."}},"required":["filename"],"additionalProperties":false}`
	confirmSchema     = `{"type":"object","properties":{"confirm":{"type":"boolean","title":"Delete it?"}},"required":["confirm"]}`
	nameConfirmSchema = `{"type":"object","properties":{"name":{"type":"string","title":"Name"},"confirm":{"type":"boolean","title":"Confirm"}}}`
)

// Workflows returns the Tasks fixtures as memstore workflows; every call
// returns fresh values.
//
//   - greet {name}: completes with "Hello, {name}!"; never a task.
//   - slow_compute {seconds, label}: waits seconds, then completes with
//     {"label","seconds"}; a cancel ends it cancelled at once.
//   - failing_job: fails (a tool error) shortly after it starts; task
//     support required, so a call without the extension is -32021.
//   - protocol_error_job: fails shortly after it starts with a host fault,
//     so its task status is failed with an error object.
//   - confirm_delete {filename}: asks to confirm (one interrupt, key
//     "confirm"), then completes "Deleted …" or "Kept …".
//   - multi_input: asks two questions at once (keys "first" and "second"),
//     completes when both are answered.
func Workflows() []memstore.WorkflowDef {
	return []memstore.WorkflowDef{
		{
			Workflow: interop.Workflow{ID: WorkflowGreet, Name: "Greet", Description: "Greets someone at once; never runs as a task.",
				InputSchema: json.RawMessage(greetSchema), TaskSupport: interop.TaskForbidden},
			Run: runGreet,
		},
		{
			Workflow: interop.Workflow{ID: WorkflowSlowCompute, Name: "Slow compute", Description: "Computes for the given number of seconds; cancellable.",
				InputSchema: json.RawMessage(slowComputeSchema), TaskSupport: interop.TaskOptional},
			Run: runSlowCompute,
		},
		{
			Workflow: interop.Workflow{ID: WorkflowFailingJob, Name: "Failing job", Description: "Always ends with a tool error; runs only as a task.",
				InputSchema: json.RawMessage(noArgumentsSchema), TaskSupport: interop.TaskRequired},
			Run: failAfter(jobDelay, memstore.Fail(FailingJobMessage)),
		},
		{
			Workflow: interop.Workflow{ID: WorkflowProtocolError, Name: "Protocol error job", Description: "Always ends with a fault in the host.",
				InputSchema: json.RawMessage(noArgumentsSchema), TaskSupport: interop.TaskOptional},
			Run: failAfter(jobDelay, memstore.Fault(ProtocolErrorMessage)),
		},
		{
			Workflow: interop.Workflow{ID: WorkflowConfirmDelete, Name: "Confirm delete", Description: "Asks for confirmation, then deletes (pretends to) the file.",
				InputSchema: json.RawMessage(filenameSchema), TaskSupport: interop.TaskOptional},
			Run: runConfirmDelete,
		},
		{
			Workflow: interop.Workflow{ID: WorkflowMultiInput, Name: "Multi input", Description: "Asks two questions at once and completes when both are answered.",
				InputSchema: json.RawMessage(noArgumentsSchema), TaskSupport: interop.TaskOptional},
			Run: runMultiInput,
		},
	}
}

// Register registers [Workflows] in tenant.
func Register(store *memstore.Store, tenant string) error {
	for _, def := range Workflows() {
		if err := store.Register(tenant, def); err != nil {
			return fmt.Errorf("mcpfixtures: %w", err)
		}
	}
	return nil
}

func runGreet(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
		return nil, fmt.Errorf("greet: inputs: %w", err)
	}
	return json.Marshal("Hello, " + in.Name + "!")
}

func runSlowCompute(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	var in struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label"`
	}
	if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
		return nil, fmt.Errorf("slow_compute: inputs: %w", err)
	}
	if in.Seconds > 0 {
		timer := time.NewTimer(time.Duration(in.Seconds * float64(time.Second)))
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err() // the run was cancelled: it ends cancelled
		case <-timer.C:
		}
	}
	return json.Marshal(struct {
		Label   string  `json:"label"`
		Seconds float64 `json:"seconds"`
	}{in.Label, in.Seconds})
}

// failAfter waits d (or until cancelled), then ends with failure.
func failAfter(d time.Duration, failure error) memstore.WorkflowFunc {
	return func(ctx context.Context, _ *memstore.RunContext) (json.RawMessage, error) {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, failure
		}
	}
}

func runConfirmDelete(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	var in struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
		return nil, fmt.Errorf("confirm_delete: inputs: %w", err)
	}
	res, err := rc.Interrupt(ctx, interop.Interrupt{
		Kind: interop.InterruptClarification, Key: "confirm", NodeID: "confirm",
		Message: "Delete " + in.Filename + "?", ResumeSchema: json.RawMessage(confirmSchema),
	})
	if err != nil {
		return nil, err
	}
	switch res.Outcome {
	case interop.OutcomeCancel:
		return nil, memstore.Cancel("confirmation cancelled")
	case interop.OutcomeAccept:
		var answer struct {
			Confirm bool `json:"confirm"`
		}
		if json.Unmarshal(res.Value, &answer) == nil && answer.Confirm {
			return json.Marshal("Deleted " + in.Filename + ".")
		}
	}
	return json.Marshal("Kept " + in.Filename + ".")
}

func runMultiInput(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	keys := []string{"first", "second"}
	answers := make([]json.RawMessage, len(keys))
	errs := make([]error, len(keys))
	// A question cancelled by the caller withdraws the other one.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() {
			res, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptClarification, Key: key, NodeID: key,
				Message: "Answer the " + key + " question.", ResumeSchema: json.RawMessage(nameConfirmSchema),
			})
			switch {
			case err != nil:
				errs[i] = err
				stop()
			case res.Outcome == interop.OutcomeCancel:
				errs[i] = memstore.Cancel("input cancelled")
				stop()
			case res.Outcome == interop.OutcomeDecline:
				answers[i] = json.RawMessage(`null`)
			default:
				answers[i] = res.Value
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Answers []json.RawMessage `json:"answers"`
	}{answers})
}
