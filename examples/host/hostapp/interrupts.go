package hostapp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/wopinterop/wopinterop/interop"
)

// The interrupt page: GET on an interrupt's resolveUrl describes the open
// interrupt to its run's tenant — what is asked (message, resume schema,
// a credential's provider and connectUrl) — and POST on the same URL
// answers it. It is the page the MCP mount sends a client to in URL mode
// for input it must not ask in a form: a nested schema or a secret field
// (MCP elicitation §URL mode; OpenWOP interop §MRTR).

// interruptPage is the GET answer.
type interruptPage struct {
	interruptView
	ResumeSchema json.RawMessage         `json:"resumeSchema,omitempty"`
	Credential   *interop.CredentialData `json:"credential,omitempty"`
}

// interruptPage is the page of in, an open interrupt of run runID.
// Approvers and Data stay on the host: who may answer is decided by the
// store, and the credential is shown through its closed shape.
func (l links) interruptPage(runID string, in interop.Interrupt) interruptPage {
	return interruptPage{
		interruptView: interruptView{
			InterruptID: in.ID, Kind: in.Kind, Key: in.Key, NodeID: in.NodeID,
			Message: in.Message, Actions: in.Actions, ResolveURL: l.interrupt(runID, in.ID),
		},
		ResumeSchema: in.ResumeSchema,
		Credential:   in.Credential,
	}
}

// interruptURL is the MCP mount's InterruptURL: the interrupt's own URL on
// this host.
func (l links) interruptURL(_ context.Context, _ interop.Subject, run interop.Run, in interop.Interrupt) string {
	return l.interrupt(run.ID, in.ID)
}

// getInterrupt serves GET /runs/{runId}/interrupts/{interruptId}: the open
// interrupt, or 404 when the run has no such open interrupt.
func (s *server) getInterrupt(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	runID, interruptID, err := interruptPath(sub, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	run, err := s.store.GetRun(r.Context(), sub, runID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, in := range run.Interrupts {
		if in.ID != interruptID || !run.Status.Suspended() {
			continue
		}
		s.respond(w, r, http.StatusOK, s.links.interruptPage(run.ID, in))
		return
	}
	s.writeError(w, r, interop.ErrNotFound)
}
