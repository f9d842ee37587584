package hostapp

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// Path segment positions of the id wildcards, fixed by the route patterns
// in mountREST ("/runs/{runId}/interrupts/{interruptId}").
const (
	runIDSegment       = 1
	interruptIDSegment = 3
)

// createRun serves POST /runs (createRun). A repeated Idempotency-Key of the
// same caller answers 200 with the run the first request created.
func (s *server) createRun(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	key, err := parseIdempotencyKey(r.Header)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	members, err := s.readJSONBody(w, r, false, "workflowId", "inputs")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	workflowID, err := stringMember(members, "workflowId")
	if err == nil && workflowID == "" {
		err = invalid("workflowId", "is required")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	inputs, ok, err := objectMember(members, "inputs")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !ok {
		inputs = json.RawMessage(`{}`)
	}
	run, created, err := s.store.CreateRun(r.Context(), sub, interop.CreateRunRequest{
		WorkflowID:     workflowID,
		Inputs:         inputs,
		IdempotencyKey: key,
		Transport:      interop.TransportREST,
		Trace:          parseTrace(r.Header),
		TrustBoundary:  interop.TrustUntrusted,
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", s.links.run(run.ID))
	} else {
		w.Header().Set("OpenWOP-Idempotent-Replay", "true")
	}
	s.respond(w, r, status, createdView{
		RunID:     run.ID,
		Status:    run.Status,
		EventsURL: s.links.poll(run.ID),
		StatusURL: s.links.run(run.ID),
	})
}

// getRun serves GET /runs/{runId} with a strong ETag over the snapshot
// bytes, so If-None-Match answers 304 while nothing changed.
func (s *server) getRun(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	id, err := parsePathID(sub, pathSegment(r, runIDSegment), "runId")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	run, err := s.store.GetRun(r.Context(), sub, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := encodeJSON(s.links.snapshot(run))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	etag := strongETag(body)
	w.Header().Set("ETag", etag)
	if inm := r.Header.Values("If-None-Match"); len(inm) > 0 && etagMatches(strings.Join(inm, ","), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(w, http.StatusOK, body)
}

// listRuns serves GET /runs (listRuns, gated on the advertised runList).
func (s *server) listRuns(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, invalid("query", "the query string is malformed"))
		return
	}
	query, err := parseListQuery(q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.store.ListRuns(r.Context(), sub, query)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := runListView{Runs: make([]runSnapshot, 0, len(page.Runs)), NextCursor: page.NextCursor}
	for _, run := range page.Runs {
		v.Runs = append(v.Runs, s.links.snapshot(run))
	}
	s.respond(w, r, http.StatusOK, v)
}

// colonCancel serves POST /runs/{runId}:cancel with h, the cancelRun
// handler, and answers a POST to a plain /runs/{runId} as a method the
// path does not serve. The colon may arrive percent-encoded.
func (s *server) colonCancel(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := cutCancelSuffix(pathSegment(r, runIDSegment)); !ok {
			s.notServedOnRun.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// colonCancelPattern is the route of the ":cancel" alias.
const colonCancelPattern = "POST /runs/{runId}"

// cutCancelSuffix splits "{runId}:cancel" (or "{runId}%3Acancel") into
// the run id segment.
func cutCancelSuffix(seg string) (string, bool) {
	for _, suffix := range []string{":cancel", "%3Acancel", "%3acancel"} {
		if id, ok := strings.CutSuffix(seg, suffix); ok && id != "" {
			return id, true
		}
	}
	return "", false
}

// cancelRun serves POST /runs/{runId}/cancel and its alias
// POST /runs/{runId}:cancel, with an optional {"reason": string} body.
func (s *server) cancelRun(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	seg := pathSegment(r, runIDSegment)
	if r.Pattern == colonCancelPattern {
		seg, _ = cutCancelSuffix(seg)
	}
	id, err := parsePathID(sub, seg, "runId")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	members, err := s.readJSONBody(w, r, true, "reason")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	reason, err := stringMember(members, "reason")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	run, err := s.store.CancelRun(r.Context(), sub, id, reason)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.respond(w, r, http.StatusOK, cancelView{RunID: run.ID, Status: run.Status})
}

// interruptPath reads the run and interrupt ids of a
// /runs/{runId}/interrupts/{interruptId} path.
func interruptPath(sub interop.Subject, r *http.Request) (runID, interruptID string, err error) {
	if runID, err = parsePathID(sub, pathSegment(r, runIDSegment), "runId"); err != nil {
		return "", "", err
	}
	if interruptID, err = parsePathID(sub, pathSegment(r, interruptIDSegment), "interruptId"); err != nil {
		return "", "", err
	}
	return runID, interruptID, nil
}

// resolveInterrupt serves POST /runs/{runId}/interrupts/{interruptId} with
// the closed body {"resumeValue": …}; it answers the run after resolution.
func (s *server) resolveInterrupt(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	runID, interruptID, err := interruptPath(sub, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	members, err := s.readJSONBody(w, r, false, "resumeValue")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	value, ok := members["resumeValue"]
	if !ok || string(value) == "null" {
		s.writeError(w, r, invalid("resumeValue", "is required"))
		return
	}
	run, err := s.store.ResolveInterrupt(r.Context(), sub, interop.ResolveRequest{
		RunID:       runID,
		InterruptID: interruptID,
		Outcome:     interop.OutcomeAccept,
		Value:       value,
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.respond(w, r, http.StatusOK, s.links.snapshot(run))
}

// pollEvents serves GET /runs/{runId}/events/poll (pollRunEvents): events
// after afterSequence, waiting up to timeout for the first one.
func (s *server) pollEvents(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	id, err := parsePathID(sub, pathSegment(r, runIDSegment), "runId")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, r, invalid("query", "the query string is malformed"))
		return
	}
	after, timeout, err := parsePollQuery(q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	events, run, err := s.store.PollEvents(ctx, sub, id, after, timeout)
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		// The host is draining: answer with what is there now rather than
		// failing a poll the client can simply repeat.
		events, run, err = s.store.PollEvents(r.Context(), sub, id, after, 0)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.respond(w, r, http.StatusOK, pollOf(run, events))
}

// listAgents serves GET /agents: the caller's inventory.
func (s *server) listAgents(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	agents, err := s.store.ListAgents(r.Context(), sub)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.respond(w, r, http.StatusOK, agentsOf(agents, s.interop.A2ATenant))
}
