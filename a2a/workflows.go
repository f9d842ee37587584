package a2a

// What the server must know of a workflow before a run exists: its input
// schema, compiled, and the media types it accepts and produces. Both come
// from the caller's own view of the workflow, RunStore.ListWorkflows under
// the caller's Subject, so that a tenant is only ever judged by its own
// workflow's schema (OpenWOP interop: inputs are validated by the surface
// before createRun, as MCP validates tools/call arguments).
//
// A ListWorkflows round trip per message would put a store read on every
// SendMessage; the caller's set is cached instead, keyed by the whole
// authorization context (internal/authcache over internal/subjectkey: tenant, workspace,
// principal, authentication, scopes, actor), never shared between two
// callers, for Options.WorkflowTTL. A workflow the cached set does not hold
// is read again before the request is refused, so a workflow added since
// is never refused; a changed schema or media type takes effect within the
// TTL, or at once after [Server.InvalidateWorkflows]. The store still
// decides, at CreateRun, whether the caller may start it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/authcache"
	"github.com/wopinterop/wopinterop/internal/schemacheck"
	"github.com/wopinterop/wopinterop/interop"
)

// defaultWorkflowTTL is how long a caller's workflows are cached when
// Options.WorkflowTTL is 0.
const defaultWorkflowTTL = time.Minute

// workflowInfo is one of the caller's workflows, ready to judge a message.
type workflowInfo struct {
	id string
	// schema is the compiled input schema; nil when the workflow's schema
	// is unusable (not an object, does not compile), which leaves the
	// workflow unstartable through A2A rather than started unchecked.
	schema *jsonschema.Schema
	// noInputs is the schema's verdict on {}, the inputs of every message
	// without a data part, decided once.
	noInputs *schemacheck.Failure
	// inputs and outputs are the media types the workflow accepts and
	// produces: its own, else the card's defaults.
	inputs, outputs []mediaRange
}

// workflowSet is one authorization context's workflows.
type workflowSet struct {
	byID map[string]*workflowInfo
}

// workflowCache holds the sets per authorization context and the compiled
// schemas; safe for concurrent use.
type workflowCache struct {
	schemas *schemacheck.Cache
	sets    *authcache.Cache[*workflowSet]
}

// maxWorkflowSets bounds the cache.
const maxWorkflowSets = 4096

func newWorkflowCache(ttl time.Duration) *workflowCache {
	return &workflowCache{schemas: schemacheck.NewCache(), sets: authcache.New[*workflowSet](ttl, maxWorkflowSets)}
}

// errWorkflowUnknown is a workflow the caller's ListWorkflows does not
// hold.
var errWorkflowUnknown = errors.New("a2a: not one of the caller's workflows")

// workflow returns the caller's workflow id, from the cache while fresh,
// or errWorkflowUnknown. A store error is returned as it is.
func (s *Server) workflow(ctx context.Context, sub interop.Subject, id string) (*workflowInfo, error) {
	wc := s.workflows
	key := authcache.Key(sub)
	now := s.now()
	if set, ok := wc.sets.Get(key, now); ok {
		if w := set.byID[id]; w != nil {
			return w, nil
		}
	}
	set, err := s.readWorkflows(ctx, sub)
	if err != nil {
		return nil, err
	}
	wc.sets.Put(key, sub.Tenant, set, now)
	if w := set.byID[id]; w != nil {
		return w, nil
	}
	return nil, errWorkflowUnknown
}

// callerWorkflows is RunStore.ListWorkflows under sub: a store that
// refuses the Subject outright (not found, forbidden) leaves it none.
func (s *Server) callerWorkflows(ctx context.Context, sub interop.Subject) ([]interop.Workflow, error) {
	list, err := s.cfg.Store.ListWorkflows(ctx, sub)
	if errors.Is(err, interop.ErrNotFound) || errors.Is(err, interop.ErrForbidden) {
		return nil, nil
	}
	return list, err
}

// readWorkflows reads the caller's workflows from the store
// (callerWorkflows).
func (s *Server) readWorkflows(ctx context.Context, sub interop.Subject) (*workflowSet, error) {
	list, err := s.callerWorkflows(ctx, sub)
	if err != nil {
		return nil, err
	}
	set := &workflowSet{byID: make(map[string]*workflowInfo, len(list))}
	for _, wf := range list {
		if wf.ID == "" || set.byID[wf.ID] != nil {
			continue
		}
		set.byID[wf.ID] = s.judgeable(ctx, wf)
	}
	return set, nil
}

// judgeable compiles wf's input schema and parses its media types.
func (s *Server) judgeable(ctx context.Context, wf interop.Workflow) *workflowInfo {
	w := &workflowInfo{id: wf.ID, inputs: s.inputModes, outputs: s.outputModes}
	raw := bytes.TrimSpace(wf.InputSchema)
	if len(raw) == 0 {
		raw = []byte(`{"type":"object"}`)
	}
	sch, err := s.workflows.schemas.Compile(raw)
	if err != nil {
		s.log.WarnContext(ctx, "a2a: workflow input schema unusable; the skill cannot be started", "workflow", wf.ID, "error", err)
	} else {
		w.schema = sch
		w.noInputs = schemacheck.Check(sch, []byte(`{}`))
	}
	if len(wf.InputModes) > 0 {
		w.inputs = parseModes(wf.InputModes)
	}
	if len(wf.OutputModes) > 0 {
		w.outputs = parseModes(wf.OutputModes)
	}
	return w
}

// initJudging sets up what judges messages before a run exists: the
// workflow cache and the card's default media types.
func (s *Server) initJudging() {
	ttl := s.cfg.WorkflowTTL
	if ttl == 0 {
		ttl = defaultWorkflowTTL
	}
	s.workflows = newWorkflowCache(ttl)
	s.inputModes = parseModes(modesOr(s.cfg.Card.DefaultInputModes))
	s.outputModes = parseModes(modesOr(s.cfg.Card.DefaultOutputModes))
}

// judgedBy is the workflow a message to an existing run is judged by: the
// caller's view of the run's workflow, or the card's defaults when the
// caller may not start that workflow itself (an approver answering another
// principal's run) or it is gone.
func (s *Server) judgedBy(ctx context.Context, c *call, run *interop.Run) (*workflowInfo, error) {
	w, err := s.workflow(ctx, c.subject, run.WorkflowID)
	switch {
	case errors.Is(err, errWorkflowUnknown):
		return &workflowInfo{id: run.WorkflowID, inputs: s.inputModes, outputs: s.outputModes}, nil
	case err != nil:
		return nil, s.storeFault(ctx, "ListWorkflows", err)
	}
	return w, nil
}

// InvalidateWorkflows drops the cached workflows of tenant ("" drops every
// tenant's), so that the next message reads input schemas and media types
// from the store again. Call it when a tenant's workflows change;
// otherwise they refresh after Options.WorkflowTTL.
func (s *Server) InvalidateWorkflows(tenant string) { s.workflows.sets.Invalidate(tenant) }

// checkInputs validates a new task's inputs against the workflow's input
// schema before any run exists. The refusal names the offending value: the
// data part's path in the request followed by the JSON pointer (RFC 6901)
// of the value inside it, e.g. message.parts[1].data/delayMs; with no
// data part the inputs are {} and the field is message.parts.
func (s *Server) checkInputs(w *workflowInfo, inputs json.RawMessage, part int) error {
	if w.schema == nil {
		return s.errs.invalidParams("", "the requested skill is not available")
	}
	f := w.noInputs
	if part >= 0 {
		f = schemacheck.Check(w.schema, inputs)
	}
	if f == nil {
		return nil
	}
	field := "message.parts"
	if part >= 0 {
		field = "message.parts[" + strconv.Itoa(part) + "].data"
	}
	reason := f.Reason
	if f.Malformed || reason == "" {
		reason = "does not match the skill's input schema"
	}
	return s.errs.invalidParams(field+f.Pointer, "the task's inputs do not match the skill's input schema: "+oneLine(reason))
}

// oneLine keeps a validator's text to one line: it becomes a message and a
// field violation's description.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
