package hostapp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// This file is the host's JSON encoders: the REST views of runs, events,
// agents and host events. Ids in bodies are bound ("acme/…"); ids in links
// are projected once, here (OpenWOP identity.md §5).

// links builds the absolute links the host hands out. The origin comes from
// configuration, never from the request's Host header.
type links struct{ base string }

func (l links) run(runID string) string { return l.base + "/runs/" + isolation.Project(runID) }
func (l links) poll(runID string) string {
	return l.run(runID) + "/events/poll"
}
func (l links) interrupt(runID, interruptID string) string {
	return l.run(runID) + "/interrupts/" + isolation.Project(interruptID)
}

// runSnapshot is the RunSnapshot a getRun, listRuns or resolve answers with.
type runSnapshot struct {
	RunID      string            `json:"runId"`
	WorkflowID string            `json:"workflowId"`
	Status     interop.RunStatus `json:"status"`
	CreatedAt  time.Time         `json:"createdAt"`
	UpdatedAt  time.Time         `json:"updatedAt"`
	ContextID  string            `json:"contextId,omitempty"`
	Interrupts []interruptView   `json:"interrupts,omitempty"`
	Artifacts  []artifactView    `json:"artifacts"`
	Outputs    json.RawMessage   `json:"outputs,omitempty"`
	Error      *runErrorView     `json:"error,omitempty"`
}

type interruptView struct {
	InterruptID string                `json:"interruptId"`
	Kind        interop.InterruptKind `json:"kind"`
	Key         string                `json:"key,omitempty"`
	NodeID      string                `json:"nodeId,omitempty"`
	Message     string                `json:"message,omitempty"`
	Actions     []string              `json:"actions,omitempty"`
	// ResolveURL is where POST {"resumeValue":…} resolves it.
	ResolveURL string `json:"resolveUrl"`
}

type artifactView struct {
	ArtifactID  string     `json:"artifactId"`
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	Parts       []partView `json:"parts"`
}

type partView struct {
	Kind      interop.PartKind `json:"kind"`
	Text      string           `json:"text,omitempty"`
	Data      json.RawMessage  `json:"data,omitempty"`
	URL       string           `json:"url,omitempty"`
	Raw       []byte           `json:"raw,omitempty"`
	MediaType string           `json:"mediaType,omitempty"`
	Filename  string           `json:"filename,omitempty"`
}

// runErrorView is RunSnapshot.error, the same error object as run.failed's
// payload.
type runErrorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (l links) snapshot(run interop.Run) runSnapshot {
	s := runSnapshot{
		RunID:      run.ID,
		WorkflowID: run.WorkflowID,
		Status:     run.Status,
		CreatedAt:  run.CreatedAt.UTC(),
		UpdatedAt:  run.StatusAt.UTC(),
		ContextID:  run.ContextID,
		Artifacts:  make([]artifactView, 0, len(run.Artifacts)),
	}
	if run.Status.Suspended() {
		for _, in := range run.Interrupts {
			s.Interrupts = append(s.Interrupts, interruptView{
				InterruptID: in.ID, Kind: in.Kind, Key: in.Key, NodeID: in.NodeID,
				Message: in.Message, Actions: in.Actions,
				ResolveURL: l.interrupt(run.ID, in.ID),
			})
		}
	}
	for _, a := range run.Artifacts {
		s.Artifacts = append(s.Artifacts, artifactOf(a))
	}
	if run.Status == interop.StatusCompleted {
		s.Outputs = interop.OutputsOf(run.Output)
	}
	if run.Status == interop.StatusFailed {
		e := runErrorView{Code: run.FailureCode, Message: run.FailureMessage}
		if e.Message == "" {
			e.Message = "the run failed"
		}
		if e.Code == "" {
			e.Code = "internal_error"
		}
		s.Error = &e
	}
	return s
}

func artifactOf(a interop.Artifact) artifactView {
	v := artifactView{ArtifactID: a.ID, Name: a.Name, Description: a.Description, Parts: make([]partView, 0, len(a.Parts))}
	for _, p := range a.Parts {
		v.Parts = append(v.Parts, partView{
			Kind: p.Kind, Text: p.Text, Data: p.Data, URL: p.URL, Raw: p.Raw,
			MediaType: p.MediaType, Filename: p.Filename,
		})
	}
	return v
}

// createdView answers createRun.
type createdView struct {
	RunID     string            `json:"runId"`
	Status    interop.RunStatus `json:"status"`
	EventsURL string            `json:"eventsUrl"`
	StatusURL string            `json:"statusUrl"`
}

// cancelView answers cancelRun.
type cancelView struct {
	RunID  string            `json:"runId"`
	Status interop.RunStatus `json:"status"`
}

// runListView answers listRuns; NextCursor is omitted on the last page.
type runListView struct {
	Runs       []runSnapshot `json:"runs"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// pollView answers pollRunEvents: the events are OpenWOP RunEventDocs,
// exactly as the store keeps them (interop.RunEvent's JSON form).
type pollView struct {
	RunID        string             `json:"runId"`
	Events       []interop.RunEvent `json:"events"`
	LastSequence int64              `json:"lastSequence"`
	Status       interop.RunStatus  `json:"status"`
	IsTerminal   bool               `json:"isTerminal"`
}

func pollOf(run interop.Run, events []interop.RunEvent) pollView {
	v := pollView{
		RunID:        run.ID,
		Events:       make([]interop.RunEvent, len(events)),
		LastSequence: run.LastSequence,
		Status:       run.Status,
		IsTerminal:   run.Status.Terminal(),
	}
	for i, e := range events {
		e.Timestamp = e.Timestamp.UTC()
		v.Events[i] = e
	}
	return v
}

// agentView is one GET /agents entry. a2aTenant is the agent's per-agent
// A2A routing value, present when at least one workflow is routed to it
// (OpenWOP RFC 0202 §B). hasHandoffSchemas says the agent has handoff schemas; the
// schemas and the system prompt are never shown (OpenWOP interop
// §Per-agent cards).
type agentView struct {
	AgentID           string   `json:"agentId"`
	Persona           string   `json:"persona"`
	Label             string   `json:"label,omitempty"`
	PackName          string   `json:"packName,omitempty"`
	PackVersion       string   `json:"packVersion"`
	Description       string   `json:"description,omitempty"`
	Workflows         []string `json:"workflows"`
	HasHandoffSchemas bool     `json:"hasHandoffSchemas"`
	A2ATenant         string   `json:"a2aTenant,omitempty"`
}

type agentListView struct {
	Agents []agentView `json:"agents"`
}

// agentsOf renders an inventory; tenantOf gives an agent's a2aTenant.
func agentsOf(agents []interop.Agent, tenantOf func(interop.Agent) (string, bool)) agentListView {
	v := agentListView{Agents: make([]agentView, 0, len(agents))}
	for _, a := range agents {
		wf := a.Workflows
		if wf == nil {
			wf = []string{}
		}
		r, _ := tenantOf(a)
		v.Agents = append(v.Agents, agentView{
			AgentID: a.ID, Persona: a.Persona, Label: a.Label, PackName: a.Pack, PackVersion: a.PackVersion,
			Description: a.Description, Workflows: wf, HasHandoffSchemas: len(a.HandoffSchemas) > 0, A2ATenant: r,
		})
	}
	return v
}

// errUnframeable reports a host event whose type or id cannot be carried in
// an SSE field line.
var errUnframeable = errors.New("host event type or id contains a line break")

// writeSSE writes one host event as an SSE frame (OpenWOP events.md §Host events): "event:" is
// the type, "id:" the eventId for durable events only, "data:" the
// HostEvent JSON.
func writeSSE(w io.Writer, ev interop.HostEvent) error {
	if strings.ContainsAny(ev.Type, "\r\n") || strings.ContainsAny(ev.EventID, "\r\n") {
		return errUnframeable
	}
	ev.Timestamp = ev.Timestamp.UTC()
	if len(ev.Payload) == 0 {
		ev.Payload = json.RawMessage("{}") // the schema requires an object
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode host event: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("event: " + ev.Type + "\n")
	if ev.Delivery == interop.DeliveryDurable {
		b.WriteString("id: " + ev.EventID + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	_, err = w.Write(b.Bytes())
	return err
}

// encodeJSON is the one JSON encoding of every body: compact, HTML
// characters left as they are, newline-terminated.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// strongETag is a strong validator over the exact bytes of a body.
func strongETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}
