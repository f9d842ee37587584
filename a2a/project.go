package a2a

// The projection of the host's runs onto A2A wire values
// (OpenWOP interop map, a2a.fields and a2a.taskState; RFC 0199 §D.1; a2a-task-state.schema.json), and of A2A messages back onto the host's types. Everything here
// is a pure function of its inputs; the operations (send.go, tasks.go) and the
// streams in stream.go decide what to read.

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/interop"
)

// taskView says how much of a run a response carries.
type taskView struct {
	// history is historyLength: nil keeps every message, 0 none, n the
	// last n (OpenWOP interop map, a2a.operations). It truncates the response only.
	history *int
	// artifacts includes Run.Artifacts (GetTask, SendMessage; ListTasks
	// only with includeArtifacts).
	artifacts bool
}

// errUnknownStatus is a run status outside the closed enum: a host bug,
// answered as an internal error.
var errUnknownStatus = errors.New("a2a: run status outside the closed enum")

// statusStorage holds everything a projected TaskStatus and its metadata
// point into, so that one allocation carries them.
type statusStorage struct {
	at        time.Time
	msg       wire.Message
	part      wire.Part
	parts     [1]*wire.Part
	openwop   openwopMetadata
	interrupt interruptMetadata
}

// openwopMetadata is Task.metadata.openwop. interrupt is the only member
// the library writes there (OpenWOP interop map, a2a.fields).
type openwopMetadata struct {
	Interrupt *interruptMetadata `json:"interrupt"`
}

// interruptMetadata is Task.metadata.openwop.interrupt: the carrier of the
// open interrupt's kind (OpenWOP interop map, a2a.taskState), its id, and the approval actions
// offered. Members are declared in the order a map would encode them.
type interruptMetadata struct {
	Actions []string              `json:"actions,omitempty"`
	ID      string                `json:"id"`
	Kind    interop.InterruptKind `json:"kind"`
}

// metadataKeyOpenWOP is the Task and Message metadata member the interop
// layer reads and writes.
const metadataKeyOpenWOP = "openwop"

// taskBox is a projected Task with its status storage, allocated at once.
type taskBox struct {
	task   wire.Task
	status statusStorage
}

// The usual task a single projection answers — the message that started
// it, one artifact (a completed run's output), three parts in all — fits
// soloStorage, which then costs no more memory than the slices it
// replaces (a 896-byte size class for the whole soloTask).
const (
	soloMessages  = 1
	soloArtifacts = 1
	soloParts     = 3
)

// soloStorage holds the history, artifacts and parts of a single
// projected task when they fit, so that projecting the usual task is one
// allocation, its soloTask.
type soloStorage struct {
	msgs     [soloMessages]wire.Message
	msgPtrs  [soloMessages]*wire.Message
	arts     [soloArtifacts]wire.Artifact
	artPtrs  [soloArtifacts]*wire.Artifact
	parts    [soloParts]wire.Part
	partPtrs [soloParts]*wire.Part
}

// soloTask is a task projected on its own (GetTask, SendMessage,
// CancelTask, a stream's first event).
type soloTask struct {
	taskBox
	inline soloStorage
}

// project returns the Task that run is (OpenWOP interop map, a2a.operations,
// a2a.fields and a2a.taskState; RFC 0199 §D.1).
func (s *Server) project(run *interop.Run, v taskView) (*wire.Task, error) {
	box := new(soloTask)
	if err := s.projectInto(&box.taskBox, run, v, &box.inline); err != nil {
		return nil, err
	}
	return &box.task, nil
}

// projectInto fills box with run's projection, in inline what fits there
// (nil: nothing does); ListTasks hands in boxes from one slice.
func (s *Server) projectInto(box *taskBox, run *interop.Run, v taskView, inline *soloStorage) error {
	t := &box.task
	t.ID = wire.TaskID(run.ID)
	t.ContextID = contextOf(run)
	meta, err := s.projectStatus(&t.Status, &box.status, run, t.ContextID)
	if err != nil {
		return err
	}
	t.Metadata = meta

	msgs := run.Messages
	if v.history != nil {
		n := max(*v.history, 0)
		if n < len(msgs) {
			msgs = msgs[len(msgs)-n:]
		}
	}
	var arts []interop.Artifact
	if v.artifacts {
		arts = run.Artifacts
		if out, ok := outputArtifact(run); ok {
			arts = []interop.Artifact{out}
		}
	}
	nparts := 0
	for i := range msgs {
		nparts += len(msgs[i].Parts)
	}
	for i := range arts {
		nparts += len(arts[i].Parts)
	}
	var parts partBuffer
	if inline != nil && nparts <= soloParts {
		parts = partBuffer{parts: inline.parts[:nparts], ptrs: inline.partPtrs[:nparts]}
	} else {
		parts = newParts(nparts)
	}
	if len(msgs) > 0 {
		var backing []wire.Message
		if inline != nil && len(msgs) <= soloMessages {
			backing = inline.msgs[:len(msgs)]
			t.History = inline.msgPtrs[:len(msgs):len(msgs)]
		} else {
			backing = make([]wire.Message, len(msgs))
			t.History = make([]*wire.Message, len(msgs))
		}
		for i := range msgs {
			m := &backing[i]
			m.TaskID, m.ContextID = t.ID, t.ContextID
			parts = fillMessage(m, &msgs[i], parts)
			t.History[i] = m
		}
	}
	if len(arts) > 0 {
		var backing []wire.Artifact
		if inline != nil && len(arts) <= soloArtifacts {
			backing = inline.arts[:len(arts)]
			t.Artifacts = inline.artPtrs[:len(arts):len(arts)]
		} else {
			backing = make([]wire.Artifact, len(arts))
			t.Artifacts = make([]*wire.Artifact, len(arts))
		}
		for i := range arts {
			a := &backing[i]
			parts = fillArtifact(a, &arts[i], parts)
			t.Artifacts[i] = a
		}
	}
	return nil
}

// outputArtifactID is the artifactId of a completed run's output. It is
// namespaced so that no workflow artifact is mistaken for it, and it is
// only ever used on a task that holds no other artifact.
const outputArtifactID = "openwop.output"

// outputArtifact is how a completed run's output reaches A2A peers when
// the workflow published no artifact of its own: one artifact, id
// outputArtifactID, whose one data part holds Run.Output exactly — what an
// MCP client reads as the call's structuredContent. ok is false for any
// other run, and for an empty or null output.
func outputArtifact(run *interop.Run) (a interop.Artifact, ok bool) {
	if run.Status != interop.StatusCompleted || len(run.Artifacts) > 0 {
		return interop.Artifact{}, false
	}
	out := jsonbytes.TrimSpace(run.Output)
	if len(out) == 0 || string(out) == "null" {
		return interop.Artifact{}, false
	}
	return interop.Artifact{
		ID:    outputArtifactID,
		Name:  "output",
		Parts: []interop.Part{{Kind: interop.PartData, Data: out}},
	}, true
}

// contextOf is the run's contextId. A run started outside A2A has none;
// its id then serves, so that a Task always carries a non-empty contextId
// and a follow-up message can name it.
func contextOf(run *interop.Run) string {
	if run.ContextID != "" {
		return run.ContextID
	}
	return run.ID
}

// stateOf is the wire state of run and, when the credential override
// applies, the credential it names. The override (OpenWOP RFC 0199 §D.1) needs a
// provider and a connectUrl for the status message; without them the
// default row of waiting-input applies, so AUTH_REQUIRED never goes out
// without them. The open interrupt is the first one while the run is
// suspended.
func (s *Server) stateOf(run *interop.Run) (wire.TaskState, *interop.Interrupt, *interop.CredentialData, error) {
	var (
		in   *interop.Interrupt
		cred *interop.CredentialData
		kind interop.InterruptKind
	)
	if run.Status.Suspended() && len(run.Interrupts) > 0 {
		in = &run.Interrupts[0]
		kind = in.Kind
		if kind == interop.InterruptCredential {
			if cred = credentialOf(in); cred == nil {
				kind = ""
			}
		}
	}
	row, ok := s.m.TaskState(run.Status, kind)
	if !ok {
		return "", nil, nil, fmt.Errorf("%w: %q", errUnknownStatus, run.Status)
	}
	if row.Wire != wire.TaskStateAuthRequired {
		cred = nil
	}
	return row.Wire, in, cred, nil
}

// credentialOf returns the interrupt's credential payload when it names
// both a provider and a connectUrl, else nil.
func credentialOf(in *interop.Interrupt) *interop.CredentialData {
	cd := in.Credential
	if cd == nil && len(in.Data) > 0 {
		var decoded interop.CredentialData
		if json.Unmarshal(in.Data, &decoded) != nil {
			return nil
		}
		cd = &decoded
	}
	if cd == nil || cd.Provider == "" || cd.ConnectURL == "" {
		return nil
	}
	return cd
}

// projectStatus fills dst with run's status and returns the Task (or
// statusUpdate) metadata: openwop.interrupt while an interrupt is open,
// else nil. The status message is the interrupt's prompt for
// INPUT_REQUIRED, the provider and connectUrl for AUTH_REQUIRED, and the
// failure message for FAILED; the host guarantees each is safe to show.
func (s *Server) projectStatus(dst *wire.TaskStatus, st *statusStorage, run *interop.Run, contextID string) (map[string]any, error) {
	state, in, cred, err := s.stateOf(run)
	if err != nil {
		return nil, err
	}
	st.at = run.StatusAt.UTC()
	*dst = wire.TaskStatus{State: state, Timestamp: &st.at}

	var msgID, text string
	switch {
	case cred != nil:
		msgID = in.ID
		text = "Authorization required: connect your " + cred.Provider + " account at " + cred.ConnectURL
	case in != nil && in.Message != "":
		msgID, text = in.ID, in.Message
	case run.Status == interop.StatusFailed && run.FailureMessage != "":
		msgID, text = run.ID+"#failed", run.FailureMessage
	}
	if text != "" {
		st.part.Content = wire.Text(text)
		st.parts[0] = &st.part
		st.msg = wire.Message{
			ID:        msgID,
			Role:      wire.MessageRoleAgent,
			Parts:     st.parts[:],
			TaskID:    wire.TaskID(run.ID),
			ContextID: contextID,
		}
		dst.Message = &st.msg
	}
	if in == nil {
		return nil, nil
	}
	st.interrupt = interruptMetadata{ID: in.ID, Kind: in.Kind}
	if in.Kind == interop.InterruptApproval {
		st.interrupt.Actions = in.Actions
	}
	st.openwop.Interrupt = &st.interrupt
	return map[string]any{metadataKeyOpenWOP: &st.openwop}, nil
}

// partBuffer hands out wire parts from two backing slices, so that a
// projection allocates parts per response rather than per part.
type partBuffer struct {
	parts []wire.Part
	ptrs  []*wire.Part
}

func newParts(n int) partBuffer {
	if n == 0 {
		return partBuffer{}
	}
	return partBuffer{parts: make([]wire.Part, n), ptrs: make([]*wire.Part, n)}
}

// take converts src into the next len(src) parts.
func (b partBuffer) take(src []interop.Part) (wire.ContentParts, partBuffer) {
	n := len(src)
	if n == 0 {
		return wire.ContentParts{}, b // "parts" is required: [] rather than null
	}
	out := b.ptrs[:n:n]
	for i := range src {
		p := &b.parts[i]
		fillPart(p, &src[i])
		out[i] = p
	}
	return out, partBuffer{parts: b.parts[n:], ptrs: b.ptrs[n:]}
}

// fillPart converts a host part. The wire discriminates parts by the
// member present, never by a kind field (OpenWOP interop map, a2a.fields).
func fillPart(dst *wire.Part, p *interop.Part) {
	switch p.Kind {
	case interop.PartData:
		dst.Content = wire.Data{Value: json.RawMessage(p.Data)}
	case interop.PartURL:
		dst.Content = wire.URL(p.URL)
	case interop.PartRaw:
		dst.Content = wire.Raw(p.Raw)
	default:
		dst.Content = wire.Text(p.Text)
	}
	dst.MediaType, dst.Filename, dst.Metadata = p.MediaType, p.Filename, p.Metadata
}

// fillMessage converts one exchanged message (history holds only A2A
// messages, which is all Run.Messages holds; OpenWOP interop map, a2a.fields).
func fillMessage(dst *wire.Message, m *interop.Message, parts partBuffer) partBuffer {
	dst.ID = m.ID
	dst.Role = wireRole(m.Role)
	dst.Metadata = m.Metadata
	dst.Extensions = m.Extensions
	if len(m.ReferenceTaskIDs) > 0 {
		dst.ReferenceTasks = make([]wire.TaskID, len(m.ReferenceTaskIDs))
		for i, id := range m.ReferenceTaskIDs {
			dst.ReferenceTasks[i] = wire.TaskID(id)
		}
	}
	dst.Parts, parts = parts.take(m.Parts)
	return parts
}

func fillArtifact(dst *wire.Artifact, a *interop.Artifact, parts partBuffer) partBuffer {
	dst.ID = wire.ArtifactID(a.ID)
	dst.Name, dst.Description, dst.Metadata = a.Name, a.Description, a.Metadata
	dst.Parts, parts = parts.take(a.Parts)
	return parts
}

// wireArtifact converts one artifact chunk for an artifactUpdate.
func wireArtifact(a *interop.Artifact) *wire.Artifact {
	out := new(wire.Artifact)
	fillArtifact(out, a, newParts(len(a.Parts)))
	return out
}

func wireRole(r interop.MessageRole) wire.MessageRole {
	switch r {
	case interop.RoleUser:
		return wire.MessageRoleUser
	case interop.RoleAgent:
		return wire.MessageRoleAgent
	}
	return wire.MessageRoleUnspecified
}

// hostMessage converts an inbound message; bad is the index of the first
// part that holds none of text, raw, url and data, or -1. The metadata,
// extensions and referenceTaskIds travel as given: they are opaque to the
// host, and a referenced task is a hint, never read (OpenWOP interop §What
// stays opaque; A2A 1.0 Message.referenceTaskIds).
func hostMessage(m *wire.Message) (msg interop.Message, bad int) {
	out := interop.Message{
		ID:         m.ID,
		Role:       interop.RoleUser,
		Parts:      make([]interop.Part, len(m.Parts)),
		Metadata:   m.Metadata,
		Extensions: m.Extensions,
	}
	if len(m.ReferenceTasks) > 0 {
		out.ReferenceTaskIDs = make([]string, len(m.ReferenceTasks))
		for i, id := range m.ReferenceTasks {
			out.ReferenceTaskIDs[i] = string(id)
		}
	}
	if m.Role == wire.MessageRoleAgent {
		out.Role = interop.RoleAgent
	}
	for i, p := range m.Parts {
		hp, err := hostPart(p)
		if err != nil {
			return interop.Message{}, i
		}
		out.Parts[i] = hp
	}
	return out, -1
}

// errBadPart is a part holding none of text, raw, url and data.
var errBadPart = errors.New("a2a: part holds none of text, raw, url and data")

func hostPart(p *wire.Part) (interop.Part, error) {
	if p == nil {
		return interop.Part{}, errBadPart
	}
	out := interop.Part{MediaType: p.MediaType, Filename: p.Filename, Metadata: p.Metadata}
	switch c := p.Content.(type) {
	case wire.Text:
		out.Kind, out.Text = interop.PartText, string(c)
	case wire.Raw:
		out.Kind, out.Raw = interop.PartRaw, []byte(c)
	case wire.URL:
		if c == "" {
			return interop.Part{}, errBadPart
		}
		out.Kind, out.URL = interop.PartURL, string(c)
	case wire.Data:
		raw, err := rawJSON(c.Value)
		if err != nil {
			return interop.Part{}, errBadPart
		}
		out.Kind, out.Data = interop.PartData, raw
	default:
		return interop.Part{}, errBadPart
	}
	return out, nil
}

// rawJSON is v as a JSON document; decoded JSON passes through.
func rawJSON(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, errBadPart
		}
		return raw, nil
	}
	return json.Marshal(v)
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// event projections for streams (OpenWOP interop map, a2a.operations).

type statusUpdateBox struct {
	ev     wire.TaskStatusUpdateEvent
	status statusStorage
}

// statusUpdate projects a status change. run carries the status, its
// timestamp and whatever the status message needs (open interrupt, failure
// message).
func (s *Server) statusUpdate(run *interop.Run) (*wire.TaskStatusUpdateEvent, error) {
	box := new(statusUpdateBox)
	box.ev.TaskID = wire.TaskID(run.ID)
	box.ev.ContextID = contextOf(run)
	meta, err := s.projectStatus(&box.ev.Status, &box.status, run, box.ev.ContextID)
	if err != nil {
		return nil, err
	}
	box.ev.Metadata = meta
	return &box.ev, nil
}

// artifactUpdate projects the chunk an artifact.created event carries;
// append and lastChunk say how it joins earlier chunks of the same
// artifactId.
func artifactUpdate(run *interop.Run, c *interop.ArtifactChunk) *wire.TaskArtifactUpdateEvent {
	return &wire.TaskArtifactUpdateEvent{
		TaskID:    wire.TaskID(run.ID),
		ContextID: contextOf(run),
		Artifact:  wireArtifact(&c.Artifact),
		Append:    c.Append,
		LastChunk: c.LastChunk,
	}
}
