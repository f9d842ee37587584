package postgres

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
	"github.com/wopinterop/wopinterop/isolation"
)

// WorkflowFunc is a workflow body. It runs on its own goroutine in the
// replica that executes the run, and must return when ctx is done.
//
// A run can outlive the replica that started it: another replica then
// calls the function again from the start, and the effects already
// recorded — interrupts raised ([RunContext.Interrupt]) and artifacts
// published ([RunContext.PublishArtifact]) — are replayed, not repeated:
// an answered interrupt returns its recorded resolution at once. So a
// workflow must make the same effect calls, in the same order with the
// same keys and artifact ids, when it runs again with the same inputs and
// resolutions; other work it does (calls to the outside world) happens
// again, at least once overall, and should be idempotent.
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
}

// ErrCancelled marks a workflow that stopped because it was cancelled. A
// workflow returning an error that wraps it ends cancelled.
var ErrCancelled = errors.New("postgres: run cancelled")

// genericFailure is the FailureMessage of a run whose workflow returned an
// unclassified error or panicked: nothing of the raw error leaves the host.
const genericFailure = "workflow failed"

// Failure codes the store gives a failed run (run.failed error.code and
// Run.FailureCode), the same as the embedded memstore's.
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

// Fault fails the run like [Fail] and marks it as a host fault
// ([interop.Run.Fault], code "internal_error").
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
// cancelled with safeReason as the run.cancelled reason.
func Cancel(safeReason string) error { return &cancelError{reason: safeReason} }

type cancelError struct{ reason string }

func (e *cancelError) Error() string { return "postgres: run cancelled: " + e.reason }
func (e *cancelError) Unwrap() error { return ErrCancelled }

// workflowEntry is a registered workflow with its compiled input schema.
type workflowEntry struct {
	wf     interop.Workflow // owned copy
	schema *jsonschema.Schema
	run    WorkflowFunc
}

// tenantWorkflows are one tenant's workflows.
type tenantWorkflows struct {
	byID  map[string]*workflowEntry
	order []*workflowEntry // registration order
}

// Register adds def to tenant's workflows in this replica. Workflow code
// lives in the process, not the database: every replica registers the
// same workflows, and a replica takes over only runs of workflows it has.
// Register compiles the input schema once, here. It fails on an invalid
// tenant, an empty id, a nil Run, a duplicate id or a schema that does not
// compile.
func (s *Store) Register(tenant string, def WorkflowDef) error {
	if !isolation.ValidTenant(tenant) {
		return fmt.Errorf("postgres: invalid tenant %q", tenant)
	}
	id := def.Workflow.ID
	if id == "" {
		return errors.New("postgres: register: workflow id is empty")
	}
	if def.Run == nil {
		return fmt.Errorf("postgres: register %q: Run is nil", id)
	}
	wf := cloneWorkflow(def.Workflow)
	if len(wf.InputSchema) == 0 {
		wf.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	schema, err := s.schemas.Compile(wf.InputSchema)
	if err != nil {
		return fmt.Errorf("postgres: register %q: input schema: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.workflows[tenant]
	if t == nil {
		t = &tenantWorkflows{byID: map[string]*workflowEntry{}}
		s.workflows[tenant] = t
	}
	if _, dup := t.byID[id]; dup {
		return fmt.Errorf("postgres: register %q: duplicate workflow id", id)
	}
	e := &workflowEntry{wf: wf, schema: schema, run: def.Run}
	t.byID[id] = e
	t.order = append(t.order, e)
	return nil
}

// workflow returns tenant's workflow id, or nil.
func (s *Store) workflow(tenant, id string) *workflowEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.workflows[tenant]; t != nil {
		return t.byID[id]
	}
	return nil
}

// ListWorkflows returns the workflows of the Subject's tenant in
// registration order.
func (s *Store) ListWorkflows(ctx context.Context, sub interop.Subject) ([]interop.Workflow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.workflows[sub.Tenant]
	if t == nil {
		return []interop.Workflow{}, nil
	}
	out := make([]interop.Workflow, len(t.order))
	for i, e := range t.order {
		out[i] = cloneWorkflow(e.wf)
	}
	return out, nil
}

func cloneWorkflow(w interop.Workflow) interop.Workflow {
	w.InputSchema = bytes.Clone(w.InputSchema)
	w.Tags = slices.Clone(w.Tags)
	w.InputModes = slices.Clone(w.InputModes)
	w.OutputModes = slices.Clone(w.OutputModes)
	return w
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
