package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// The stored forms of the contract's structured values. interop's types
// carry no JSON tags (they are not wire types), so the database holds
// these documents instead: their member names are this module's storage
// format and change only with a migration.

type partDoc struct {
	Kind      interop.PartKind `json:"kind"`
	Text      string           `json:"text,omitempty"`
	Data      json.RawMessage  `json:"data,omitempty"`
	URL       string           `json:"url,omitempty"`
	Raw       []byte           `json:"raw,omitempty"`
	MediaType string           `json:"mediaType,omitempty"`
	Filename  string           `json:"filename,omitempty"`
	Metadata  map[string]any   `json:"metadata,omitempty"`
}

type messageDoc struct {
	ID                  string              `json:"id"`
	Role                interop.MessageRole `json:"role"`
	Parts               []partDoc           `json:"parts"`
	Metadata            map[string]any      `json:"metadata,omitempty"`
	ReferenceTaskIDs    []string            `json:"referenceTaskIds,omitempty"`
	Extensions          []string            `json:"extensions,omitempty"`
	ActivatedExtensions []string            `json:"activatedExtensions,omitempty"`
}

// artifactDoc is a run's artifact; Closed records that its last chunk
// arrived, after which nothing may be appended.
type artifactDoc struct {
	ID          string         `json:"id"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []partDoc      `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Closed      bool           `json:"closed,omitempty"`
}

// chunkDoc is the content an artifact.created event carries.
type chunkDoc struct {
	Artifact  artifactDoc `json:"artifact"`
	Append    bool        `json:"append,omitempty"`
	LastChunk bool        `json:"lastChunk,omitempty"`
}

type interruptDoc struct {
	ID           string                  `json:"id"`
	Kind         interop.InterruptKind   `json:"kind"`
	Key          string                  `json:"key"`
	NodeID       string                  `json:"nodeId"`
	Message      string                  `json:"message,omitempty"`
	Data         json.RawMessage         `json:"data,omitempty"`
	ResumeSchema json.RawMessage         `json:"resumeSchema,omitempty"`
	Actions      []string                `json:"actions,omitempty"`
	Approvers    []string                `json:"approvers,omitempty"`
	Credential   *interop.CredentialData `json:"credential,omitempty"`
	CreatedAt    time.Time               `json:"createdAt"`
}

type subjectDoc struct {
	Tenant        string      `json:"tenant,omitempty"`
	Workspace     string      `json:"workspace,omitempty"`
	Principal     string      `json:"principal,omitempty"`
	Authenticated bool        `json:"authenticated,omitempty"`
	Scopes        []string    `json:"scopes,omitempty"`
	Actor         *subjectDoc `json:"actor,omitempty"`
}

// resolutionDoc is how an interrupt was closed: resolved with an outcome,
// value and resolver, or withdrawn (Withdrawn names why).
type resolutionDoc struct {
	Outcome   interop.ResolveOutcome `json:"outcome,omitempty"`
	Value     json.RawMessage        `json:"value,omitempty"`
	Resolver  *subjectDoc            `json:"resolver,omitempty"`
	Withdrawn string                 `json:"withdrawn,omitempty"`
}

type agentDoc struct {
	ID             string          `json:"id"`
	Persona        string          `json:"persona,omitempty"`
	PackVersion    string          `json:"packVersion,omitempty"`
	Label          string          `json:"label,omitempty"`
	Description    string          `json:"description,omitempty"`
	Workflows      []string        `json:"workflows,omitempty"`
	Pack           string          `json:"pack,omitempty"`
	SystemPrompt   string          `json:"systemPrompt,omitempty"`
	HandoffSchemas json.RawMessage `json:"handoffSchemas,omitempty"`
}

// encode is json.Marshal without HTML escaping, so stored text reads back
// as it was written.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("postgres: encode %T: %w", v, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func decode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("postgres: decode %T: %w", v, err)
	}
	return nil
}

func partsDoc(ps []interop.Part) []partDoc {
	out := make([]partDoc, len(ps))
	for i, p := range ps {
		out[i] = partDoc{Kind: p.Kind, Text: p.Text, Data: p.Data, URL: p.URL, Raw: p.Raw,
			MediaType: p.MediaType, Filename: p.Filename, Metadata: p.Metadata}
	}
	return out
}

func (d partDoc) part() interop.Part {
	return interop.Part{Kind: d.Kind, Text: d.Text, Data: d.Data, URL: d.URL, Raw: d.Raw,
		MediaType: d.MediaType, Filename: d.Filename, Metadata: d.Metadata}
}

func partsOf(ds []partDoc) []interop.Part {
	if ds == nil {
		return nil
	}
	out := make([]interop.Part, len(ds))
	for i, d := range ds {
		out[i] = d.part()
	}
	return out
}

func messageDocOf(m interop.Message) messageDoc {
	return messageDoc{ID: m.ID, Role: m.Role, Parts: partsDoc(m.Parts), Metadata: m.Metadata,
		ReferenceTaskIDs: m.ReferenceTaskIDs, Extensions: m.Extensions, ActivatedExtensions: m.ActivatedExtensions}
}

func (d messageDoc) message() interop.Message {
	return interop.Message{ID: d.ID, Role: d.Role, Parts: partsOf(d.Parts), Metadata: d.Metadata,
		ReferenceTaskIDs: d.ReferenceTaskIDs, Extensions: d.Extensions, ActivatedExtensions: d.ActivatedExtensions}
}

func artifactDocOf(a interop.Artifact) artifactDoc {
	return artifactDoc{ID: a.ID, Name: a.Name, Description: a.Description, Parts: partsDoc(a.Parts), Metadata: a.Metadata}
}

func (d artifactDoc) artifact() interop.Artifact {
	return interop.Artifact{ID: d.ID, Name: d.Name, Description: d.Description, Parts: partsOf(d.Parts), Metadata: d.Metadata}
}

func interruptDocOf(in interop.Interrupt) interruptDoc {
	return interruptDoc{ID: in.ID, Kind: in.Kind, Key: in.Key, NodeID: in.NodeID, Message: in.Message,
		Data: in.Data, ResumeSchema: in.ResumeSchema, Actions: in.Actions, Approvers: in.Approvers,
		Credential: in.Credential, CreatedAt: in.CreatedAt}
}

func (d interruptDoc) interrupt() interop.Interrupt {
	return interop.Interrupt{ID: d.ID, Kind: d.Kind, Key: d.Key, NodeID: d.NodeID, Message: d.Message,
		Data: d.Data, ResumeSchema: d.ResumeSchema, Actions: d.Actions, Approvers: d.Approvers,
		Credential: d.Credential, CreatedAt: d.CreatedAt.UTC()}
}

func subjectDocOf(s interop.Subject) *subjectDoc {
	d := &subjectDoc{Tenant: s.Tenant, Workspace: s.Workspace, Principal: s.Principal,
		Authenticated: s.Authenticated, Scopes: s.Scopes}
	if s.Actor != nil {
		d.Actor = subjectDocOf(*s.Actor)
	}
	return d
}

func (d *subjectDoc) subject() interop.Subject {
	if d == nil {
		return interop.Subject{}
	}
	s := interop.Subject{Tenant: d.Tenant, Workspace: d.Workspace, Principal: d.Principal,
		Authenticated: d.Authenticated, Scopes: d.Scopes}
	if d.Actor != nil {
		actor := d.Actor.subject()
		s.Actor = &actor
	}
	return s
}

func agentDocOf(a interop.Agent) agentDoc {
	return agentDoc{ID: a.ID, Persona: a.Persona, PackVersion: a.PackVersion, Label: a.Label,
		Description: a.Description, Workflows: a.Workflows, Pack: a.Pack,
		SystemPrompt: a.SystemPrompt, HandoffSchemas: a.HandoffSchemas}
}

func (d agentDoc) agent() interop.Agent {
	return interop.Agent{ID: d.ID, Persona: d.Persona, PackVersion: d.PackVersion, Label: d.Label,
		Description: d.Description, Workflows: d.Workflows, Pack: d.Pack,
		SystemPrompt: d.SystemPrompt, HandoffSchemas: d.HandoffSchemas}
}

// decodeMessages reads a run's messages column; an empty array is nil, as
// on a run that never exchanged one.
func decodeMessages(data []byte) ([]interop.Message, error) {
	if isEmptyArray(data) {
		return nil, nil
	}
	var docs []messageDoc
	if err := decode(data, &docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, nil
	}
	out := make([]interop.Message, len(docs))
	for i, d := range docs {
		out[i] = d.message()
	}
	return out, nil
}

func decodeArtifacts(data []byte) ([]interop.Artifact, error) {
	if isEmptyArray(data) {
		return nil, nil
	}
	var docs []artifactDoc
	if err := decode(data, &docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, nil
	}
	out := make([]interop.Artifact, len(docs))
	for i, d := range docs {
		out[i] = d.artifact()
	}
	return out, nil
}

func decodeInterrupts(data []byte) ([]interop.Interrupt, error) {
	if data == nil {
		return nil, nil
	}
	var docs []interruptDoc
	if err := decode(data, &docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, nil
	}
	out := make([]interop.Interrupt, len(docs))
	for i, d := range docs {
		out[i] = d.interrupt()
	}
	return out, nil
}

// isEmptyArray spots the common "[]" of a run without messages or
// artifacts, which needs no decoding.
func isEmptyArray(data []byte) bool { return len(data) == 2 && data[0] == '[' && data[1] == ']' }
