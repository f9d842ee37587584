package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// RunContext is a workflow's handle on its own run. It is valid for the
// life of the workflow call; after the run ended its writes fail with
// ErrRunTerminal.
type RunContext struct {
	store *Store
	rec   *runRecord
	// What only the workflow reads, kept here rather than in the run's
	// record so that it goes when the workflow call does.
	ctx    context.Context // cancelled by CancelRun and Close
	inputs json.RawMessage
	trace  interop.TraceContext
	// toolInputs counts the input requests of the run's tool calls
	// (CallTool), keying their interrupts.
	toolInputs atomic.Int64
}

// RunID is the run's tenant-bound id.
func (rc *RunContext) RunID() string { return rc.rec.run.ID }

// Inputs returns a copy of the validated run inputs (a JSON object; {} when
// the caller sent none).
func (rc *RunContext) Inputs() json.RawMessage { return bytes.Clone(rc.inputs) }

// Trace is the W3C trace context the run was started with.
func (rc *RunContext) Trace() interop.TraceContext { return rc.trace }

// Resolution is how an interrupt was answered.
type Resolution struct {
	// Outcome is accept, decline or cancel (an empty request outcome is
	// accept).
	Outcome interop.ResolveOutcome
	// Value is the validated resume value. For a declined approval it is
	// {"action":"reject"}; for other declines and for cancel it is nil.
	Value json.RawMessage
	// Resolver is the Subject that resolved the interrupt.
	Resolver interop.Subject
}

// interruptState is where an interrupt is in its life.
type interruptState uint8

const (
	interruptOpen interruptState = iota
	interruptResolved
	// interruptWithdrawn: closed without an answer, because the run was
	// cancelled or ended, or the workflow stopped waiting.
	interruptWithdrawn
)

// pending is the store's side of one interrupt.
type pending struct {
	spec     interop.Interrupt  // as raised (ID and CreatedAt filled); immutable
	schema   *jsonschema.Schema // compiled ResumeSchema, or nil
	state    interruptState     // guarded by tenant.mu
	delivery chan Resolution    // buffered 1: the single resolution
}

// nodeIDGrammar is the nodeId grammar of ids.schema.json: node.suspended
// and interrupt.resolved carry the node that suspended.
var nodeIDGrammar = regexp.MustCompile(`^[A-Za-z0-9._~:-]{1,128}$`)

// Interrupt suspends the run on a new interrupt and blocks until it is
// resolved or ctx is done. The store mints spec.ID (tenant-bound) and sets
// spec.CreatedAt; the run moves to spec.Kind.SuspendedStatus() with a
// node.suspended event. spec.Kind must be one that suspends (OpenWOP interrupt.md §Payload) and
// spec.Key must be set and not yet used in this run. A ResumeSchema is
// compiled here, once per interrupt.
//
// When ctx is done first, Interrupt returns ctx.Err(). If the run itself is
// still live (the workflow gave up waiting on its own deadline), the
// interrupt is withdrawn: it leaves Run.Interrupts, the run goes back to
// running and an interrupt.resolved event with Reason "withdrawn" records
// it; later resolve attempts get ErrAlreadyResolved.
func (rc *RunContext) Interrupt(ctx context.Context, spec interop.Interrupt) (Resolution, error) {
	if err := ctx.Err(); err != nil {
		return Resolution{}, err
	}
	if spec.Kind.SuspendedStatus() == "" {
		return Resolution{}, fmt.Errorf("memstore: interrupt kind %q does not suspend a run", spec.Kind)
	}
	if spec.Key == "" {
		return Resolution{}, errors.New("memstore: interrupt key is empty")
	}
	if spec.NodeID == "" {
		spec.NodeID = spec.Key
	}
	if !nodeIDGrammar.MatchString(spec.NodeID) {
		return Resolution{}, fmt.Errorf("memstore: interrupt %q: node id %q is not 1–128 characters of [A-Za-z0-9._~:-] (set Interrupt.NodeID)", spec.Key, spec.NodeID)
	}
	p := &pending{delivery: make(chan Resolution, 1)}
	if len(spec.ResumeSchema) > 0 {
		sch, err := compileSchema("mem://interrupt/resume.json", spec.ResumeSchema)
		if err != nil {
			return Resolution{}, fmt.Errorf("memstore: interrupt %q: resume schema: %w", spec.Key, err)
		}
		p.schema = sch
	}

	s, rec := rc.store, rc.rec
	t := rec.tenant
	t.mu.Lock()
	switch {
	case rec.run.Status.Terminal():
		t.mu.Unlock()
		return Resolution{}, fmt.Errorf("memstore: interrupt: %w", interop.ErrRunTerminal)
	case rec.run.Status == interop.StatusCancelling:
		t.mu.Unlock()
		return Resolution{}, fmt.Errorf("memstore: interrupt: %w", ErrCancelled)
	case rec.usedKeys[spec.Key]:
		t.mu.Unlock()
		return Resolution{}, fmt.Errorf("memstore: interrupt key %q was already invoked in this run", spec.Key)
	}
	id, err := isolation.NewID(t.name)
	if err != nil {
		t.mu.Unlock()
		return Resolution{}, fmt.Errorf("memstore: mint interrupt id: %w", err)
	}
	at := s.now()
	in := cloneInterrupt(spec)
	in.ID, in.CreatedAt = id, at
	p.spec = in
	if rec.interrupts == nil {
		rec.interrupts = make(map[string]*pending)
		rec.usedKeys = make(map[string]bool)
	}
	rec.interrupts[id] = p
	rec.usedKeys[spec.Key] = true
	rec.run.Interrupts = append(rec.run.Interrupts, in)
	rec.setStatusLocked(rec.suspendedStatusLocked(), at)
	appendLifecycleLocked(s, rec, interop.EventNodeSuspended, interop.NodeSuspended{NodeID: in.NodeID, InterruptID: id, Kind: in.Kind, Key: in.Key},
		&eventExtra{nodeID: in.NodeID}, at)
	t.mu.Unlock()

	select {
	case res := <-p.delivery:
		return res, nil
	case <-ctx.Done():
		return rc.stopWaiting(ctx, p)
	}
}

// stopWaiting handles an Interrupt whose ctx is done. A resolution that won
// the race is still returned: it was committed to the log.
func (rc *RunContext) stopWaiting(ctx context.Context, p *pending) (Resolution, error) {
	rec := rc.rec
	t := rec.tenant
	t.mu.Lock()
	defer t.mu.Unlock()
	// When the run's own context is done, CancelRun or Close is ending the
	// run and withdraws its interrupts itself.
	if p.state == interruptOpen && rc.ctx.Err() == nil && !rec.run.Status.Terminal() {
		p.state = interruptWithdrawn
		at := rc.store.now()
		rec.removeOpenInterruptLocked(p.spec.ID)
		rec.setStatusLocked(rec.suspendedStatusLocked(), at)
		appendLifecycleLocked(rc.store, rec, interop.EventInterruptResolved, interop.InterruptResolved{
			NodeID: p.spec.NodeID, InterruptID: p.spec.ID, Kind: p.spec.Kind, Reason: "withdrawn",
		}, &eventExtra{nodeID: p.spec.NodeID}, at)
	}
	select {
	case res := <-p.delivery:
		return res, nil
	default:
		return Resolution{}, ctx.Err()
	}
}

// suspendedStatusLocked is the status the open interrupts imply: the first
// open interrupt's suspended status, or running when none is open.
func (rec *runRecord) suspendedStatusLocked() interop.RunStatus {
	if len(rec.run.Interrupts) == 0 {
		return interop.StatusRunning
	}
	return rec.run.Interrupts[0].Kind.SuspendedStatus()
}

func (rec *runRecord) removeOpenInterruptLocked(id string) {
	// In place: the store never hands out its own slices, only clones.
	rec.run.Interrupts = slices.DeleteFunc(rec.run.Interrupts, func(in interop.Interrupt) bool { return in.ID == id })
	if len(rec.run.Interrupts) == 0 {
		rec.run.Interrupts = nil
	}
}

// PublishArtifact appends an artifact chunk to the run with an
// artifact.created event; the status does not change. With
// appendChunk=false the artifact a.ID is created (or replaced, when it
// exists); with appendChunk=true a's parts extend the existing artifact
// a.ID, which must exist and must not have received its last chunk. Name,
// Description and Metadata of an appended chunk replace the stored ones
// when set. The artifact id stays stable across reads (OpenWOP interop map, a2a.fields).
func (rc *RunContext) PublishArtifact(a interop.Artifact, appendChunk, lastChunk bool) error {
	if a.ID == "" {
		return errors.New("memstore: artifact id is empty")
	}
	for _, p := range a.Parts {
		if p.Kind == interop.PartData && len(p.Data) > 0 && !json.Valid(p.Data) {
			return fmt.Errorf("memstore: artifact %q: data part is not valid JSON", a.ID)
		}
	}
	// One copy, carried by the event and merged into the run: neither is
	// ever changed in place (appends reallocate the run's parts, whose
	// slices are capped), and readers get clones of both.
	chunk := cloneArtifact(a)
	stored := chunk
	rec := rc.rec
	t := rec.tenant
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec.run.Status.Terminal() {
		return fmt.Errorf("memstore: publish artifact: %w", interop.ErrRunTerminal)
	}
	i := rec.artifactIndexLocked(a.ID)
	switch {
	case appendChunk && i < 0:
		return fmt.Errorf("memstore: append to unknown artifact %q", a.ID)
	case appendChunk && rec.closed[i]:
		return fmt.Errorf("memstore: artifact %q already received its last chunk", a.ID)
	case appendChunk:
		merged := &rec.run.Artifacts[i]
		merged.Parts = append(merged.Parts, stored.Parts...)
		if stored.Name != "" {
			merged.Name = stored.Name
		}
		if stored.Description != "" {
			merged.Description = stored.Description
		}
		if stored.Metadata != nil {
			merged.Metadata = stored.Metadata
		}
	case i >= 0:
		rec.run.Artifacts[i] = stored
	default:
		i = len(rec.run.Artifacts)
		rec.run.Artifacts = append(rec.run.Artifacts, stored)
		rec.closed = append(rec.closed, false)
	}
	rec.closed[i] = lastChunk
	unregistered := false
	appendLifecycleLocked(rc.store, rec, interop.EventArtifactCreated, interop.ArtifactCreated{
		ArtifactID: a.ID, ArtifactType: artifactType, Summary: a.Name, Registered: &unregistered,
	}, &eventExtra{chunk: interop.ArtifactChunk{Artifact: chunk, Append: appendChunk, LastChunk: lastChunk}, hasChunk: true}, rc.store.now())
	return nil
}

// artifactType is the artifact.created artifactType of every artifact the
// store publishes: a host-local type, so the payload says registered:
// false (RFC 0071).
const artifactType = "artifact"
