package a2a

// google.rpc.Status, the error body of the HTTP+JSON binding and of the
// agent card (OpenWOP RFC 0211 §B, §C), written by one function:
//
//	{"error":{"code":<http status>,"status":<gRPC code name>,"message":<short, safe>,"details":[…]}}
//
// details holds one google.rpc.ErrorInfo for every error with a reason and
// a google.rpc.BadRequest for one naming a field (errordetail.go); it is []
// otherwise, never absent.

import (
	"net/http"
	"strconv"
)

// appendStatus appends the google.rpc.Status of e and returns its HTTP
// status. The HTTP status and gRPC name come from e; a host-built *Error
// with neither gets 500 INTERNAL and UNKNOWN rather than an invalid status
// line.
func appendStatus(dst []byte, e *Error) ([]byte, int) {
	code := e.HTTP
	if code < 400 || code > 599 {
		code = http.StatusInternalServerError
	}
	status := e.GRPC
	if status == "" {
		status = "UNKNOWN"
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(code)
	}
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, status)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `,"details":[`...)
	if e.Reason != "" {
		dst = appendErrorInfo(dst, e)
	}
	if e.Field != "" {
		if e.Reason != "" {
			dst = append(dst, ',')
		}
		dst = appendBadRequest(dst, e.Field, msg)
	}
	return append(dst, `]}}`...), code
}

// writeStatus is the one function that writes an HTTP+JSON error. A 401
// carries challenge as WWW-Authenticate unless the caller already set
// one.
func writeStatus(w http.ResponseWriter, e *Error, challenge string) {
	body, code := appendStatus(make([]byte, 0, 256), e)
	h := w.Header()
	if code == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", challenge)
	}
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// writeStatusError writes e with the challenges of the configured security
// schemes.
func (s *Server) writeStatusError(w http.ResponseWriter, e *Error) {
	writeStatus(w, e, s.authChallenge())
}

// WriteHTTPJSONError writes err as an HTTP+JSON google.rpc.Status, for
// host middleware that refuses a request before it reaches the handler of
// [Server.HTTPJSON] (authentication, rate limiting, body limits), so that
// every answer on the interface URL keeps the binding's shape (OpenWOP RFC 0211 §C).
//
// err may be an [*Error] (from [NewError], e.g. 429 RESOURCE_EXHAUSTED),
// [interop.ErrUnauthenticated] (401 UNAUTHENTICATED),
// [interop.ErrForbidden] (403 PERMISSION_DENIED) or an
// [*http.MaxBytesError] (413). Anything else is written as 500 INTERNAL
// with a generic message; its text is never sent. A 401 carries
// `WWW-Authenticate: Bearer` unless the middleware set the header first.
func WriteHTTPJSONError(w http.ResponseWriter, err error) {
	writeStatus(w, edgeErrorOf(err), "Bearer")
}
