package remote

import (
	"errors"
	"net/http"
	"strconv"
)

// The errors an exchange with an admitted server ends in. Each names the
// alias (the host's own word for the server) and never the endpoint, a
// credential or anything the server answered; [ProjectError] turns every
// one of them into the OpenWOP error the host renders.

// ErrUnknownServer is an alias no admission names. Nothing outbound is
// ever chosen by content (admission-boundaries §18.3): an unknown alias is
// refused, never resolved as a URL.
var ErrUnknownServer = errors.New("remote: no MCP server is admitted under this alias")

// ErrCredential is a credential the host's [Credentials] could not resolve.
var ErrCredential = errors.New("remote: the admitted credential could not be resolved")

// ErrCredentialExpired is a credential whose [CredentialRef].Expiry has
// passed: it is never presented, and the host must renew it.
var ErrCredentialExpired = errors.New("remote: the admitted credential has expired")

// ErrRoundsExceeded is wrapped by every [*RoundsError].
var ErrRoundsExceeded = errors.New("remote: the input_required round ceiling was reached")

// RoundsError is a call whose server asked for input once more than the
// host's ceiling allows (the mcp facet's mrtr.maxRounds; OpenWOP
// interop.md §The MCP round ceiling). The round past the ceiling is
// refused locally: the retry that would answer it is never sent. It
// projects to 422 mcp_mrtr_rounds_exceeded.
type RoundsError struct {
	Alias string
	Tool  string
	// MaxRounds is the ceiling that was reached.
	MaxRounds int
}

func (e *RoundsError) Error() string {
	return "remote: server " + strconv.Quote(e.Alias) + ": tool " + strconv.Quote(e.Tool) +
		" asked for input past the ceiling of " + strconv.Itoa(e.MaxRounds) + " rounds"
}

// Unwrap makes errors.Is(err, ErrRoundsExceeded) hold.
func (e *RoundsError) Unwrap() error { return ErrRoundsExceeded }

// NegotiationError is the cause of a refused negotiation: the reason the
// policy gave (negotiate.Reason values: below-floor, unauthenticated,
// unsupported). [Client.Connect] returns it inside
// outbound.VersionUnsupported.
type NegotiationError struct {
	Alias  string
	Reason string
}

func (e *NegotiationError) Error() string {
	return "remote: server " + strconv.Quote(e.Alias) + ": no acceptable MCP revision (" + e.Reason + ")"
}

// Problem says why an item a server lists may not be used.
type Problem string

// Problems of an [*AdmissionError].
const (
	// NotAdmitted: the admission does not name the item.
	NotAdmitted Problem = "not admitted"
	// NotListed: admitted, but the server no longer lists it.
	NotListed Problem = "no longer listed"
	// Changed: listed, but its definition's digest differs from the one
	// it was admitted with.
	Changed Problem = "changed since it was admitted"
)

// AdmissionError is a tool, resource or prompt the admission does not let
// the host use as the server now lists it. Discovery is not permission
// (admission-boundaries §18.3): such an item is invisible in the lists a
// [Session] returns and is refused before anything naming it is sent,
// until the host admits it again.
type AdmissionError struct {
	Alias string
	// Kind is "tool", "resource" or "prompt".
	Kind string
	// Name is the tool's or prompt's name, or the resource's URI.
	Name    string
	Problem Problem
}

func (e *AdmissionError) Error() string {
	msg := "remote: server " + strconv.Quote(e.Alias) + ": " + e.Kind + " " + strconv.Quote(e.Name) + " " + string(e.Problem)
	if e.Problem != NotAdmitted {
		msg += "; re-admission is required"
	}
	return msg
}

// ListError is a list the host refused to use: longer than the
// admission's MaxPages, a cursor the server repeated, or a list the server
// would only complete after asking for input. Nothing of it is kept.
type ListError struct {
	Alias  string
	Method string
	// Problem says what was wrong, in the library's words.
	Problem string
	// InputRequired is true when the server answered the list with
	// input_required, which the host does not answer for a list.
	InputRequired bool
}

func (e *ListError) Error() string {
	return "remote: server " + strconv.Quote(e.Alias) + ": " + e.Method + ": " + e.Problem
}

// StatusError is an HTTP answer without a JSON-RPC error in its body: an
// authentication challenge (401), a refusal (403), an endpoint that is not
// there (404), an overloaded or failing server. The body is never kept.
type StatusError struct {
	StatusCode int
}

func (e *StatusError) Error() string {
	return "remote: the server answered HTTP " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
}

// RevisionError is a request the connection refused to send because it
// was not at the revision the host negotiated (MCP 2026-07-28 §Versioning;
// OpenWOP interop.md §The floor: a client never sends a revision below the
// floor). go-sdk would, on its own, fall back to the legacy initialize
// handshake of 2025-11-25 when server/discover fails; that request, and
// any other not carrying the negotiated MCP-Protocol-Version, ends here
// and never reaches the network.
type RevisionError struct {
	// Sent is the MCP-Protocol-Version the request carried, "" for none.
	Sent string
	// Want is the revision of the connection.
	Want string
}

func (e *RevisionError) Error() string {
	sent := e.Sent
	if sent == "" {
		sent = "no MCP-Protocol-Version"
	}
	return "remote: refused to send a request at " + sent + " on a connection negotiated at " + e.Want
}

// PeerError is a JSON-RPC error the server answered with, by its code.
// Nothing of the server's text is kept: its message and data never reach
// an error message, a log or the host (OpenWOP interop map; a server's
// words are content, not the library's).
type PeerError struct {
	Alias string
	// Method is the MCP method the server answered ("server/discover",
	// "tools/list", ...).
	Method string
	// Code is the JSON-RPC error code.
	Code int64
	// SupportedVersions are the well-formed revisions a -32022
	// (UnsupportedProtocolVersionError) named in data.supported.
	SupportedVersions []string
}

func (e *PeerError) Error() string {
	return "remote: server " + strconv.Quote(e.Alias) + ": " + e.Method + " answered with error " + strconv.FormatInt(e.Code, 10)
}

// ExchangeError is an exchange that failed without an answer the library
// could use: the egress guard refused the destination, the server did not
// answer in time, the connection broke, the response was over
// MaxResultBytes or was not MCP. Err is the cause, stripped of net/http's
// *url.Error (which names the endpoint).
type ExchangeError struct {
	Alias  string
	Method string
	Err    error
}

func (e *ExchangeError) Error() string {
	return "remote: server " + strconv.Quote(e.Alias) + ": " + e.Method + ": " + e.Err.Error()
}

func (e *ExchangeError) Unwrap() error { return e.Err }
