package hostapp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a/delegate"
	"github.com/wopinterop/wopinterop/internal/version"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// The a2a invoke seam (-conformance-seams): the OpenWOP suite's way to make
// the host act as an A2A client toward a peer it runs, and read the
// negotiation record the exchange leaves on a run's log (OpenWOP interop.md
// §Negotiation is a protocol, §The floor, §The audit event).
//
//	POST /conformance/seams/sample/a2a/invoke
//	{"peerUrl": URL, "authenticated"?: bool, "peerOffersOnly"?: "0.3,…", "requestVersion"?: "1.0"}
//	→ 200 {"negotiatedVersion": "1.0", "runId": …}, or the error envelope with details.runId
//
// One call is one run of a hidden workflow in the caller's tenant: the run
// admits the peer for this call alone (every skill on its card pinned by
// its current digest, under an alias no one else uses), connects — the one
// negotiation.decided record goes on the run's log — and sends one message
// with returnImmediately, without following the task (the suite's peer
// never completes one). The run completes once the message is sent, and
// fails with the projected error otherwise: a refused call still creates
// its run, because that is where the audit record lives.
const a2aInvokePath = "/conformance/seams/sample/a2a/invoke"

// seamWorkflowID is the seam's hidden workflow: no surface lists it or
// starts it (hidingStore), only the seam.
const seamWorkflowID = "conformance-seam-a2a-invoke"

// a2aInvoke is a decoded seam call.
type a2aInvoke struct {
	// CardURL is the peer's agent card: peerUrl's path joined with the
	// well-known card path (A2A 1.0 §8.2), as a2a-go's resolver does,
	// unless peerUrl already names it.
	CardURL string
	// Authenticated: the host presents its outbound credential (default
	// true).
	Authenticated bool
	// Versions restrict the versions the host considers
	// (delegate.Admission.Versions): [requestVersion] when given, else
	// peerOffersOnly; empty: whatever the card offers.
	Versions []string
}

// a2aInvokeMembers are the members of the seam's body.
var a2aInvokeMembers = []string{"peerUrl", "authenticated", "peerOffersOnly", "requestVersion"}

// parseA2AInvoke reads the seam's body, whose members decodeObject
// already held to a2aInvokeMembers: peerUrl an absolute http(s) URL
// without userinfo, query or fragment, authenticated a boolean, the
// versions major.minor[.patch], requestVersion one of peerOffersOnly when
// both are given. Every refusal is a 400 validation_error naming the
// member.
func parseA2AInvoke(members map[string]json.RawMessage) (a2aInvoke, error) {
	peer, err := stringMember(members, "peerUrl")
	if err != nil {
		return a2aInvoke{}, err
	}
	u, perr := url.Parse(peer)
	if peer == "" || perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" ||
		u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return a2aInvoke{}, invalid("peerUrl", "must be an absolute http(s) URL without userinfo, query or fragment")
	}
	out := a2aInvoke{CardURL: cardURLOf(u), Authenticated: true}
	if raw, ok := members["authenticated"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out.Authenticated); err != nil {
			return a2aInvoke{}, invalid("authenticated", "must be a boolean")
		}
	}
	offers, err := stringMember(members, "peerOffersOnly")
	if err != nil {
		return a2aInvoke{}, err
	}
	if offers != "" {
		for v := range strings.SplitSeq(offers, ",") {
			v = strings.TrimSpace(v)
			if _, ok := version.A2A(v); !ok {
				return a2aInvoke{}, invalid("peerOffersOnly", "must be a comma-separated list of A2A versions (major.minor)")
			}
			out.Versions = append(out.Versions, v)
		}
	}
	requested, err := stringMember(members, "requestVersion")
	if err != nil {
		return a2aInvoke{}, err
	}
	if requested != "" {
		n, ok := version.A2A(requested)
		if !ok {
			return a2aInvoke{}, invalid("requestVersion", "must be an A2A version (major.minor)")
		}
		if len(out.Versions) > 0 && !containsVersion(out.Versions, n) {
			return a2aInvoke{}, invalid("requestVersion", "must be one of peerOffersOnly")
		}
		out.Versions = []string{requested}
	}
	return out, nil
}

// containsVersion reports whether list holds n, compared as major.minor.
func containsVersion(list []string, n string) bool {
	for _, v := range list {
		if vn, _ := version.A2A(v); vn == n {
			return true
		}
	}
	return false
}

// wellKnownCard is the agent card's well-known path (A2A 1.0 §8.2).
const wellKnownCard = "/.well-known/agent-card.json"

func cardURLOf(u *url.URL) string {
	c := *u
	if !strings.HasSuffix(c.Path, wellKnownCard) {
		c.Path = strings.TrimSuffix(c.Path, "/") + wellKnownCard
		c.RawPath = ""
	}
	return c.String()
}

// a2aInvokedView is the seam's success answer.
type a2aInvokedView struct {
	NegotiatedVersion string `json:"negotiatedVersion"`
	RunID             string `json:"runId"`
}

// seamText is the message the seam sends: plain text, asking nothing.
const seamText = "OpenWOP conformance seam: one delegation"

// seamRunGrace bounds how long the seam waits for its run to start, send
// and end; the two card reads (10 s each) and the send (seamSendTimeout)
// have their own, shorter bounds.
const seamRunGrace = time.Minute

// seamSendTimeout bounds the seam's one send (delegate.Options.RequestTimeout).
const seamSendTimeout = 20 * time.Second

// invokeA2A serves the seam: it decodes the body (refusing bad input
// before any run exists), starts the seam run in the caller's tenant and
// answers with what the run's delegation ended in.
func (s *server) invokeA2A(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	members, err := s.readJSONBody(w, r, false, a2aInvokeMembers...)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	call, err := parseA2AInvoke(members)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), seamRunGrace)
	defer cancel()
	job := &seamCall{a2aInvoke: call, done: make(chan seamResult, 1)}
	token := s.delegation.seamOps.put(job)
	defer s.delegation.seamOps.take(token)
	run, err := s.startSeamRun(ctx, r, sub, seamWorkflowID, token)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var res seamResult
	select {
	case res = <-job.done:
	case <-ctx.Done():
		// The run goes on within its own bounds; the caller learns that the
		// peer did not answer in time, and which run to read.
		s.writeError(w, r, delegate.ProjectError(run.ID, ctx.Err()))
		return
	}
	// The run ends right after its delegation reported: wait for that, so
	// the log a caller reads next already says how it ended.
	s.awaitEnd(ctx, sub, run.ID)
	if res.err != nil {
		s.writeError(w, r, delegate.ProjectError(run.ID, res.err))
		return
	}
	s.respond(w, r, http.StatusOK, a2aInvokedView{NegotiatedVersion: res.version, RunID: run.ID})
}

// startSeamRun starts a seam's hidden workflow in the caller's tenant,
// untrusted, with the request's trace context; its only input is the token
// under which the handler parked the call (both seams).
func (s *server) startSeamRun(ctx context.Context, r *http.Request, sub interop.Subject, workflowID, token string) (interop.Run, error) {
	inputs, _ := json.Marshal(map[string]string{"call": token}) // strings always encode
	run, _, err := s.runs.CreateRun(ctx, sub, interop.CreateRunRequest{
		WorkflowID:    workflowID,
		Inputs:        inputs,
		Transport:     interop.TransportREST,
		Trace:         parseTrace(r.Header),
		TrustBoundary: interop.TrustUntrusted,
	})
	return run, err
}

// awaitEnd long-polls the run's log until the run is terminal or ctx ends.
func (s *server) awaitEnd(ctx context.Context, sub interop.Subject, runID string) {
	after := int64(-1)
	for ctx.Err() == nil {
		evs, run, err := s.store.PollEvents(ctx, sub, runID, after, time.Second)
		if err != nil || run.Status.Terminal() {
			return
		}
		if n := len(evs); n > 0 {
			after = evs[n-1].Sequence
		}
	}
}

// seamCall is one seam call waiting for its run.
type seamCall struct {
	a2aInvoke
	done chan seamResult // buffered 1: the run never blocks on it
}

// seamResult is what the seam run's delegation ended in.
type seamResult struct {
	version string
	err     error
}

// seamCalls hands each seam call to the run it started, by a random token
// that is the run's one input: the hidden workflow does nothing for a
// token it was not given.
type seamCalls[T any] struct {
	mu    sync.Mutex
	calls map[string]T
}

func newSeamCalls[T any]() *seamCalls[T] { return &seamCalls[T]{calls: map[string]T{}} }

func (c *seamCalls[T]) put(call T) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[token] = call
	return token
}

// take removes and returns the call of token.
func (c *seamCalls[T]) take(token string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	call, ok := c.calls[token]
	delete(c.calls, token)
	return call, ok
}

// seamWorkflow is the hidden workflow of the seam's runs.
func (d *delegation) seamWorkflow() memstore.WorkflowDef {
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          seamWorkflowID,
			Name:        "Conformance seam: A2A invoke",
			Description: "One delegation to a peer the OpenWOP conformance suite names (test only).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"call":{"type":"string"}},"required":["call"],"additionalProperties":false}`),
		},
		Run: d.runSeam,
	}
}

// seamOutputs are the outputs of a seam run that sent its message.
type seamOutputs struct {
	NegotiatedVersion string         `json:"negotiatedVersion"`
	RemoteTaskID      string         `json:"remoteTaskId,omitempty"`
	RemoteState       wire.TaskState `json:"remoteState,omitempty"`
}

func (d *delegation) runSeam(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	var in struct {
		Call string `json:"call"`
	}
	_ = json.Unmarshal(rc.Inputs(), &in) // validated against the schema
	call, ok := d.seamOps.take(in.Call)
	if !ok {
		return nil, memstore.Fail("this run was not started by the a2a seam")
	}
	ctx = delegate.WithTraceContext(ctx, rc.Trace())
	out, negotiated, err := d.invokeOnce(ctx, rc.RunID(), call.a2aInvoke)
	call.done <- seamResult{version: negotiated, err: err}
	if err != nil {
		return nil, failProjected(rc.RunID(), err)
	}
	return json.Marshal(seamOutputs{NegotiatedVersion: negotiated, RemoteTaskID: string(out.TaskID), RemoteState: out.State})
}

// invokeOnce admits the peer for this call, connects on runID and sends
// one message without following the task.
func (d *delegation) invokeOnce(ctx context.Context, runID string, call a2aInvoke) (*delegate.Outcome, string, error) {
	alias := randomAlias("seam-")
	a, err := d.pin(ctx, alias, call.CardURL)
	if err != nil {
		return nil, "", err
	}
	a.Versions = call.Versions
	if call.Authenticated {
		a.Credential = delegate.CredentialRef{Name: credentialSeam}
	}
	if err := d.seam.Admit(a); err != nil {
		// The URL and versions were checked at the edge: what is left to
		// refuse is the card's skills (an id missing or repeated).
		return nil, "", &delegate.CardError{Alias: alias, Problem: "cannot be admitted"}
	}
	defer d.seam.Revoke(alias)
	conn, err := d.seam.Connect(ctx, runID, alias)
	if err != nil {
		return nil, "", err
	}
	if len(a.Skills) == 0 {
		return nil, conn.Version, &delegate.CardError{Alias: alias, Problem: "offers no skill to ask for"}
	}
	out, err := conn.Submit(ctx, delegate.Step{
		Skill: a.Skills[0].ID, DataClass: dataClassRunInputs,
		Parts: []*wire.Part{wire.NewTextPart(seamText)},
	})
	if err != nil {
		return nil, conn.Version, err
	}
	return out, conn.Version, nil
}

// hide wraps store in a hidingStore. A store with a status-only wait
// keeps it visible through the wrapper: the blocking sends use it
// instead of following the run's whole log (interop.RunWaiter).
func hide(store hostStore, hidden ...string) hostStore {
	h := hidingStore{hostStore: store, hidden: hidden}
	if w, ok := store.(interop.RunWaiter); ok {
		return hidingWaiter{hidingStore: h, RunWaiter: w}
	}
	return h
}

// hidingWaiter is a hidingStore over a store that is an interop.RunWaiter.
type hidingWaiter struct {
	hidingStore
	interop.RunWaiter
}

// hidingStore keeps the seams' workflows off every surface: ListWorkflows
// leaves them out, and CreateRun answers for one exactly as for a workflow
// that does not exist. The seams start their runs on the store underneath.
type hidingStore struct {
	hostStore
	hidden []string
}

func (h hidingStore) ListWorkflows(ctx context.Context, sub interop.Subject) ([]interop.Workflow, error) {
	wfs, err := h.hostStore.ListWorkflows(ctx, sub)
	if err != nil {
		return nil, err
	}
	out := wfs[:0]
	for _, wf := range wfs {
		if !slices.Contains(h.hidden, wf.ID) {
			out = append(out, wf)
		}
	}
	return out, nil
}

func (h hidingStore) CreateRun(ctx context.Context, sub interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	if slices.Contains(h.hidden, req.WorkflowID) {
		// No workflow has the empty id: the store's own unknown-workflow
		// answer, byte for byte.
		req.WorkflowID = ""
	}
	return h.hostStore.CreateRun(ctx, sub, req)
}
