package hostapp

import (
	"context"
	"errors"
	"net/http"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// Error codes this host answers with, each with the status the OpenWOP
// error registry gives it (OpenWOP errors.md §The envelope).
const (
	codeValidation         = "validation_error"             // 400
	codeIdempotencyKey     = "idempotency_key_invalid"      // 400
	codeUnauthenticated    = "unauthenticated"              // 401
	codeForbidden          = "forbidden"                    // 403
	codeTenantMismatch     = "id_tenant_mismatch"           // 403
	codeNotFound           = "not_found"                    // 404
	codeVersionUnsupported = "protocol_version_unsupported" // 406
	codeRunTerminal        = "run_terminal"                 // 409
	codeAlreadyResolved    = "interrupt_already_resolved"   // 409
	codePayloadTooLarge    = "payload_too_large"            // 413
	codeUnsupportedMedia   = "unsupported_media_type"       // 415
	codeInternal           = "internal_error"               // 500
	internalMessage        = "the host could not complete the request"
	notFoundMessage        = "no such resource"
	unauthenticatedMessage = "a valid bearer credential is required"
)

// apiError is a refusal already decided at the REST edge: its code, status,
// caller-safe message and optional details.
type apiError struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// errorEnvelope is the closed OpenWOP error body (OpenWOP errors.md §The envelope).
type errorEnvelope struct {
	Error   string         `json:"error"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// invalid is a 400 validation_error naming the field at fault (when known).
func invalid(field, reason string) *apiError {
	d := map[string]any{"reason": reason}
	if field != "" {
		d["field"] = field
	}
	return &apiError{
		Status:  http.StatusBadRequest,
		Code:    codeValidation,
		Message: "the request is not valid",
		Details: d,
	}
}

// toAPIError classifies any error a handler met into the refusal the caller
// sees. internal reports a fault the caller must not learn about.
func toAPIError(err error) (e *apiError, internal bool) {
	var ae *apiError
	var ie *interop.InputError
	var mbe *http.MaxBytesError
	var oe *outbound.Error
	switch {
	case errors.As(err, &ae):
		return ae, false
	case errors.As(err, &oe):
		// An outbound exchange (the host as an A2A client) already
		// projected: its registered code, the library's message, details
		// naming the protocol and the run (OpenWOP interop.md §The floor).
		return &apiError{oe.Status, oe.Code, oe.Message, oe.Details}, oe.Code == codeInternal
	case errors.As(err, &mbe):
		return &apiError{http.StatusRequestEntityTooLarge, codePayloadTooLarge,
			"the request body is too large", map[string]any{"limitBytes": mbe.Limit}}, false
	case errors.As(err, &ie):
		return invalid(ie.Field, ie.Reason), false
	case errors.Is(err, interop.ErrInvalidInput):
		return &apiError{http.StatusBadRequest, codeValidation, "the request is not valid", nil}, false
	case errors.Is(err, interop.ErrNotFound):
		return &apiError{http.StatusNotFound, codeNotFound, notFoundMessage, nil}, false
	case errors.Is(err, interop.ErrUnauthenticated):
		return &apiError{http.StatusUnauthorized, codeUnauthenticated, unauthenticatedMessage, nil}, false
	case errors.Is(err, interop.ErrNotEligible):
		return &apiError{http.StatusForbidden, codeForbidden,
			"the caller may not resolve this interrupt", nil}, false
	case errors.Is(err, interop.ErrForbidden):
		return &apiError{http.StatusForbidden, codeForbidden, "the caller may not use this operation", nil}, false
	case errors.Is(err, interop.ErrRunTerminal):
		return &apiError{http.StatusConflict, codeRunTerminal, "the run is already terminal", nil}, false
	case errors.Is(err, interop.ErrAlreadyResolved):
		return &apiError{http.StatusConflict, codeAlreadyResolved, "the interrupt was already resolved", nil}, false
	}
	return &apiError{http.StatusInternalServerError, codeInternal, internalMessage, nil}, true
}

// writeError is the one place a REST refusal becomes bytes. Unclassified
// errors are logged (the caller gets a fixed message) unless the caller has
// already gone away, which is not a fault.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, internal := toAPIError(err)
	if internal && r.Context().Err() == nil && !errors.Is(err, context.Canceled) {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if e.Code == codeUnauthenticated {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	// An envelope holds only strings, numbers and string lists: it always
	// encodes.
	body, _ := encodeJSON(errorEnvelope{Error: e.Code, Message: e.Message, Details: e.Details})
	writeBody(w, e.Status, body)
}
