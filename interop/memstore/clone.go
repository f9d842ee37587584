package memstore

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/wopinterop/wopinterop/interop"
)

// Copies. The store never hands out, and never keeps, memory a caller can
// reach: values coming in are cloned on the way in, values going out on the
// way out. To keep reads cheap, a read first measures everything it must
// copy and then carves every slice of the result out of one backing array
// per element type (an arena), so a Run costs a handful of allocations no
// matter how many parts it has. Each carved slice has its capacity capped
// at its length, so appending to one can never write into its neighbour.
//
// Metadata maps are deep-copied through JSON-like values (maps, slices,
// raw JSON); other values inside them are shared, as they are immutable in
// practice (strings, numbers, bools).

type cloneSizes struct {
	interrupts, artifacts, messages, parts, strs, bytes int
}

func (z *cloneSizes) addRun(r *interop.Run) {
	z.interrupts += len(r.Interrupts)
	for i := range r.Interrupts {
		z.addInterrupt(&r.Interrupts[i])
	}
	z.artifacts += len(r.Artifacts)
	for i := range r.Artifacts {
		z.addParts(r.Artifacts[i].Parts)
	}
	z.messages += len(r.Messages)
	for i := range r.Messages {
		z.addMessage(&r.Messages[i])
	}
	z.bytes += len(r.Output)
}

func (z *cloneSizes) addMessage(m *interop.Message) {
	z.addParts(m.Parts)
	z.strs += len(m.ReferenceTaskIDs) + len(m.Extensions) + len(m.ActivatedExtensions)
}

func (z *cloneSizes) addInterrupt(in *interop.Interrupt) {
	z.bytes += len(in.Data) + len(in.ResumeSchema)
	z.strs += len(in.Actions) + len(in.Approvers)
	if in.Credential != nil {
		z.strs += len(in.Credential.Scopes)
	}
}

func (z *cloneSizes) addParts(ps []interop.Part) {
	z.parts += len(ps)
	for i := range ps {
		z.bytes += len(ps[i].Data) + len(ps[i].Raw)
	}
}

// arena hands out capped sub-slices of a few backing arrays.
type arena struct {
	interrupts []interop.Interrupt
	artifacts  []interop.Artifact
	messages   []interop.Message
	parts      []interop.Part
	strs       []string
	bytes      []byte
}

func newArena(z cloneSizes) arena {
	var a arena
	if z.interrupts > 0 {
		a.interrupts = make([]interop.Interrupt, z.interrupts)
	}
	if z.artifacts > 0 {
		a.artifacts = make([]interop.Artifact, z.artifacts)
	}
	if z.messages > 0 {
		a.messages = make([]interop.Message, z.messages)
	}
	if z.parts > 0 {
		a.parts = make([]interop.Part, z.parts)
	}
	if z.strs > 0 {
		a.strs = make([]string, z.strs)
	}
	if z.bytes > 0 {
		a.bytes = make([]byte, z.bytes)
	}
	return a
}

// take returns the first n elements of *from, capped, and advances it.
func take[T any](from *[]T, n int) []T {
	out := (*from)[:n:n]
	*from = (*from)[n:]
	return out
}

func (a *arena) cloneBytes(b []byte) []byte {
	switch {
	case b == nil:
		return nil
	case len(b) == 0:
		return []byte{}
	}
	out := take(&a.bytes, len(b))
	copy(out, b)
	return out
}

func (a *arena) cloneStrs(s []string) []string {
	switch {
	case s == nil:
		return nil
	case len(s) == 0:
		return []string{}
	}
	out := take(&a.strs, len(s))
	copy(out, s)
	return out
}

func (a *arena) cloneParts(ps []interop.Part) []interop.Part {
	switch {
	case ps == nil:
		return nil
	case len(ps) == 0:
		return []interop.Part{}
	}
	out := take(&a.parts, len(ps))
	for i := range ps {
		p := ps[i]
		p.Data = a.cloneBytes(p.Data)
		p.Raw = a.cloneBytes(p.Raw)
		p.Metadata = cloneJSONMap(p.Metadata)
		out[i] = p
	}
	return out
}

func (a *arena) cloneInterrupt(in interop.Interrupt) interop.Interrupt {
	in.Data = a.cloneBytes(in.Data)
	in.ResumeSchema = a.cloneBytes(in.ResumeSchema)
	in.Actions = a.cloneStrs(in.Actions)
	in.Approvers = a.cloneStrs(in.Approvers)
	if in.Credential != nil {
		c := *in.Credential
		c.Scopes = a.cloneStrs(c.Scopes)
		in.Credential = &c
	}
	return in
}

func (a *arena) cloneArtifact(x interop.Artifact) interop.Artifact {
	x.Parts = a.cloneParts(x.Parts)
	x.Metadata = cloneJSONMap(x.Metadata)
	return x
}

func (a *arena) cloneMessage(m interop.Message) interop.Message {
	m.Parts = a.cloneParts(m.Parts)
	m.Metadata = cloneJSONMap(m.Metadata)
	m.ReferenceTaskIDs = a.cloneStrs(m.ReferenceTaskIDs)
	m.Extensions = a.cloneStrs(m.Extensions)
	m.ActivatedExtensions = a.cloneStrs(m.ActivatedExtensions)
	return m
}

func (a *arena) cloneRun(r *interop.Run) interop.Run {
	out := *r
	if r.Interrupts != nil {
		out.Interrupts = take(&a.interrupts, len(r.Interrupts))
		for i := range r.Interrupts {
			out.Interrupts[i] = a.cloneInterrupt(r.Interrupts[i])
		}
	}
	if r.Artifacts != nil {
		out.Artifacts = take(&a.artifacts, len(r.Artifacts))
		for i := range r.Artifacts {
			out.Artifacts[i] = a.cloneArtifact(r.Artifacts[i])
		}
	}
	if r.Messages != nil {
		out.Messages = take(&a.messages, len(r.Messages))
		for i := range r.Messages {
			out.Messages[i] = a.cloneMessage(r.Messages[i])
		}
	}
	out.Output = a.cloneBytes(r.Output)
	return out
}

// cloneRun returns a copy of r that shares no memory with it.
func cloneRun(r *interop.Run) interop.Run {
	var z cloneSizes
	z.addRun(r)
	a := newArena(z)
	return a.cloneRun(r)
}

// cloneEntries copies the runs of a ListRuns page out of one arena. It
// never returns nil, so an empty page encodes as [].
func cloneEntries(page []*listEntry) []interop.Run {
	var z cloneSizes
	for _, e := range page {
		z.addRun(&e.rec.run)
	}
	a := newArena(z)
	out := make([]interop.Run, len(page))
	for i, e := range page {
		out[i] = a.cloneRun(&e.rec.run)
	}
	return out
}

func cloneArtifact(x interop.Artifact) interop.Artifact {
	var z cloneSizes
	z.addParts(x.Parts)
	a := newArena(z)
	return a.cloneArtifact(x)
}

func cloneMessage(m interop.Message) interop.Message {
	var z cloneSizes
	z.addMessage(&m)
	a := newArena(z)
	return a.cloneMessage(m)
}

func cloneInterrupt(in interop.Interrupt) interop.Interrupt {
	var z cloneSizes
	z.addInterrupt(&in)
	a := newArena(z)
	return a.cloneInterrupt(in)
}

// cloneEvent copies the parts of an event that are reachable through
// references (the payload and an artifact chunk).
func cloneEvent(ev interop.RunEvent) interop.RunEvent {
	if ev.Chunk != nil {
		c := *ev.Chunk
		c.Artifact = cloneArtifact(c.Artifact)
		ev.Chunk = &c
	}
	ev.Payload = bytes.Clone(ev.Payload)
	return ev
}

func cloneSubject(s interop.Subject) interop.Subject {
	s.Scopes = slices.Clone(s.Scopes)
	if s.Actor != nil {
		actor := cloneSubject(*s.Actor)
		s.Actor = &actor
	}
	return s
}

func cloneJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneJSONValue(v)
	}
	return out
}

func cloneJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneJSONMap(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = cloneJSONValue(x[i])
		}
		return out
	case json.RawMessage:
		return json.RawMessage(bytes.Clone(x))
	case []byte:
		return bytes.Clone(x)
	}
	return v
}
