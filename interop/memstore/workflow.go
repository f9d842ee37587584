package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/schemacheck"
	"github.com/wopinterop/wopinterop/interop"
)

// WorkflowFunc is a workflow body. It runs on its own goroutine, once per
// run, and must return when ctx is done.
//
// How the return value ends the run:
//   - nil error: completed (run.completed), output kept as Run.Output (it
//     must be valid JSON or nil);
//   - an error wrapping [ErrCancelled] (see [Cancel]), or any error once the
//     run was asked to stop: cancelled (run.cancelled);
//   - [Fail]("safe message"): failed with FailureMessage "safe message"
//     (and [FailWith] to give the failure a code);
//   - [Fault]("safe message"): failed the same way, with Run.Fault set:
//     the host, not the work, broke;
//   - any other error, or a panic: failed with FailureMessage
//     "workflow failed" and code "internal_error". The raw error is
//     logged, never exposed.
type WorkflowFunc func(ctx context.Context, rc *RunContext) (output json.RawMessage, err error)

// WorkflowDef is a workflow a tenant can run.
type WorkflowDef struct {
	// Workflow describes it. InputSchema is a JSON Schema for the run
	// inputs; nil means {"type":"object"}.
	Workflow interop.Workflow
	// Run is the body.
	Run WorkflowFunc
	// ToolCaller is the host's MCP client as this workflow's runs may use
	// it ([RunContext.CallTool]); nil: they call no MCP tool. It is given
	// per workflow, so only the workflows a host chose reach its admitted
	// servers.
	ToolCaller interop.ToolCaller
	// Inline runs the body on CreateRun's own goroutine, once the run, its
	// run.started event and the run CreateRun returns exist and the store's
	// lock is let go, instead of on a goroutine of its own: a body that
	// never waits (no interrupt, no input, no sleep) then costs no
	// goroutine and no wake-up of the caller's wait. CreateRun returns
	// when the body does; what it returns, the run's events and their
	// order, idempotency and cancellation are the same either way. Leave
	// it false for a body that may wait.
	Inline bool
}

// ErrCancelled marks a workflow that stopped because it was cancelled. A
// workflow returning an error that wraps it ends cancelled.
var ErrCancelled = errors.New("memstore: run cancelled")

// genericFailure is the FailureMessage of a run whose workflow returned an
// unclassified error or panicked: nothing of the raw error leaves the host.
const genericFailure = "workflow failed"

// Failure codes the store gives a failed run (run.failed error.code and
// Run.FailureCode).
const (
	// CodeWorkflowFailed is the vendor code of a run whose workflow
	// reported a failure with [Fail].
	CodeWorkflowFailed = "wopinterop.workflow_failed"
	// codeInternal is the registered code of a host fault: [Fault], a
	// panic, an unclassified error or an output that is not JSON.
	codeInternal = "internal_error"
)

// Fail returns an error that fails the run with safeMessage as its
// FailureMessage (and run.failed error.message) and [CodeWorkflowFailed]
// as its code. safeMessage is shown to callers: never put secrets, stack
// traces or upstream bodies in it.
func Fail(safeMessage string) error { return &failError{code: CodeWorkflowFailed, msg: safeMessage} }

// FailWith fails the run like [Fail] with the given code: a registered
// OpenWOP error code (errors.json, e.g. "approval_rejected") or a vendor
// code "<org>.<name>".
func FailWith(code, safeMessage string) error { return &failError{code: code, msg: safeMessage} }

// Fault returns an error that fails the run like [Fail] and also marks it
// as a host fault ([interop.Run.Fault], code "internal_error"): the
// failure lies in the host's engine or infrastructure, not in the work the
// workflow was asked to do. A workflow that wraps a host service uses it
// when that service, rather than the caller's request, is at fault.
// safeMessage is shown to callers like Fail's.
func Fault(safeMessage string) error {
	return &failError{code: codeInternal, msg: safeMessage, fault: true}
}

type failError struct {
	code  string
	msg   string
	fault bool
}

func (e *failError) Error() string { return e.msg }

// Cancel returns an error wrapping [ErrCancelled] that ends the run
// cancelled with safeReason as the run.cancelled Reason, e.g. when an
// interrupt was answered with the cancel outcome.
func Cancel(safeReason string) error { return &cancelError{reason: safeReason} }

type cancelError struct{ reason string }

func (e *cancelError) Error() string { return "memstore: run cancelled: " + e.reason }
func (e *cancelError) Unwrap() error { return ErrCancelled }

// workflowEntry is a registered workflow with its compiled input schema.
type workflowEntry struct {
	wf     interop.Workflow // owned copy
	schema *jsonschema.Schema
	run    WorkflowFunc
	tools  interop.ToolCaller // nil: no MCP tools
	inline bool               // WorkflowDef.Inline
	// emptyInputsErr is the schema's verdict on {}, the inputs of a run
	// started without any — the common case, checked once here instead
	// of on every such run. nil: {} is valid.
	emptyInputsErr *interop.InputError
	// logHint is the log size of the last run that settled (tenant.mu).
	logHint logHint
}

// Register adds def to tenant's workflows. It compiles the input schema
// once, here; runs are validated against the compiled schema. It fails on
// an invalid tenant, an empty id, a nil Run, a duplicate id or a schema
// that does not compile.
func (s *Store) Register(tenant string, def WorkflowDef) error {
	if err := validTenant(tenant); err != nil {
		return err
	}
	id := def.Workflow.ID
	if id == "" {
		return errors.New("memstore: register: workflow id is empty")
	}
	if def.Run == nil {
		return fmt.Errorf("memstore: register %q: Run is nil", id)
	}
	wf := cloneWorkflow(def.Workflow)
	if len(wf.InputSchema) == 0 {
		wf.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	schema, err := compileSchema("mem://workflow/input.json", wf.InputSchema)
	if err != nil {
		return fmt.Errorf("memstore: register %q: input schema: %w", id, err)
	}
	entry := &workflowEntry{wf: wf, schema: schema, run: def.Run, tools: def.ToolCaller, inline: def.Inline}
	if err := validateJSON(schema, "inputs", emptyInputs); err != nil {
		entry.emptyInputsErr = err.(*interop.InputError)
	}

	t := s.tenantForWrite(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.workflows[id]; dup {
		return fmt.Errorf("memstore: register %q: duplicate workflow id", id)
	}
	t.workflows[id] = entry
	t.workflowList = append(t.workflowList, entry)
	return nil
}

// ListWorkflows returns the workflows of the Subject's tenant in
// registration order.
func (s *Store) ListWorkflows(ctx context.Context, sub interop.Subject) ([]interop.Workflow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return []interop.Workflow{}, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]interop.Workflow, len(t.workflowList))
	for i, e := range t.workflowList {
		out[i] = cloneWorkflow(e.wf)
	}
	return out, nil
}

func cloneWorkflow(w interop.Workflow) interop.Workflow {
	w.InputSchema = bytes.Clone(w.InputSchema)
	w.Tags = slices.Clone(w.Tags)
	return w
}

// denyLoader refuses every external schema reference: schemas are
// self-contained, and compiling one must never reach the file system or the
// network.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed", url)
}

// compileSchema compiles one self-contained JSON Schema document.
func compileSchema(url string, doc json.RawMessage) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(denyLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, v); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// validateJSON checks doc against schema and reports the first failure as
// an *interop.InputError whose Field is field plus the JSON pointer of the
// offending value ("inputs/delayMs").
func validateJSON(schema *jsonschema.Schema, field string, doc json.RawMessage) error {
	f := schemacheck.Check(schema, doc)
	switch {
	case f == nil:
		return nil
	case f.Malformed:
		return &interop.InputError{Field: field, Reason: "not a valid JSON document"}
	case f.Reason == "":
		return &interop.InputError{Field: field + f.Pointer, Reason: "does not match the schema"}
	}
	return &interop.InputError{Field: field + f.Pointer, Reason: f.Reason}
}
