package delegate

import (
	"errors"
	"strconv"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// The errors a connection ends in before anything is sent to the agent.
// Each names the alias (the host's own word for the agent) and never the
// card's contents or the peer's host.

// ErrUnknownAgent is an alias no admission names. Nothing outbound is ever
// chosen by content (admission-boundaries §18.3): an unknown alias is
// refused, never resolved as a URL.
var ErrUnknownAgent = errors.New("delegate: no agent is admitted under this alias")

// ErrCredential is a credential the host's [Credentials] could not resolve.
var ErrCredential = errors.New("delegate: the admitted credential could not be resolved")

// CardError is an agent card that could not be used: not fetched (the
// peer did not answer 200, a redirect, a network failure), over the
// admission's MaxCardBytes, or not a well-formed A2A 1.0 card.
type CardError struct {
	Alias string
	// Problem says what was wrong, in the library's words.
	Problem string
	// Err is the cause (a network error, *egress.RefusedError,
	// *egress.TooLargeError, *egress.RedirectError); for a malformed card
	// it is nil, so no decoder text (which can quote the peer) travels on.
	Err error
}

func (e *CardError) Error() string {
	msg := "delegate: agent " + strconv.Quote(e.Alias) + ": card " + e.Problem
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *CardError) Unwrap() error { return e.Err }

// SignatureError is a card refused by its signatures: unsigned while the
// admission requires a signature, or signed but not verified by the
// admission's keys (A2A 1.0 §Agent Card signing; OpenWOP interop.md
// §Cards). It fails closed: nothing is sent.
type SignatureError struct {
	Alias string
	// Unsigned is true when the card carried no signature at all.
	Unsigned bool
	// Err is the verifier's error.
	Err error
}

func (e *SignatureError) Error() string {
	if e.Unsigned {
		return "delegate: agent " + strconv.Quote(e.Alias) + ": the card is unsigned and the admission requires a signature"
	}
	msg := "delegate: agent " + strconv.Quote(e.Alias) + ": the card's signature did not verify"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *SignatureError) Unwrap() error { return e.Err }

// ReadmissionError is an admitted skill the card no longer offers as it
// was admitted: gone from the card, or its entry changed (its digest
// differs). The host must admit the agent again before it is used
// (admission-boundaries §18.3); nothing is sent.
type ReadmissionError struct {
	Alias string
	Skill string
	// Missing is true when the skill is not on the card; otherwise its
	// digest changed.
	Missing bool
}

func (e *ReadmissionError) Error() string {
	what := "changed since it was admitted"
	if e.Missing {
		what = "is no longer on the card"
	}
	return "delegate: agent " + strconv.Quote(e.Alias) + ": skill " + strconv.Quote(e.Skill) + " " + what + "; re-admission is required"
}

// NegotiationError is the cause of a refused negotiation: the reason the
// policy gave (negotiate.Reason values: below-floor, unauthenticated,
// unsupported). [Client.Connect] returns it inside
// outbound.VersionUnsupported.
type NegotiationError struct {
	Alias  string
	Reason string
}

func (e *NegotiationError) Error() string {
	return "delegate: agent " + strconv.Quote(e.Alias) + ": no acceptable A2A version (" + e.Reason + ")"
}

// Unwrap makes errors.Is(err, a2a.ErrVersionNotSupported) hold for a
// refusal the host decided, as for one the peer answered.
func (e *NegotiationError) Unwrap() error { return wire.ErrVersionNotSupported }

// InvalidResponseError is a peer response the library refused: not the
// JSON-RPC envelope or result shape the method has, a required member
// missing, an unknown result kind, over MaxResponseBytes. It is A2A's
// InvalidAgentResponseError (-32006; errors.Is(err,
// a2a.ErrInvalidAgentResponse)), and the body never reaches the caller,
// let alone run state (OpenWOP interop map, a2a.errors).
type InvalidResponseError struct {
	// Problem says what was wrong, in the library's words; it never quotes
	// the body.
	Problem string
	// Err is a size error (*egress.TooLargeError) when that was the
	// problem, else nil.
	Err error
}

func (e *InvalidResponseError) Error() string {
	return "delegate: invalid agent response: " + e.Problem
}

// Is makes errors.Is(err, a2a.ErrInvalidAgentResponse) hold.
func (e *InvalidResponseError) Is(target error) bool { return target == wire.ErrInvalidAgentResponse }

func (e *InvalidResponseError) Unwrap() error { return e.Err }

func invalid(problem string) error { return &InvalidResponseError{Problem: problem} }

// PeerError is an error the agent answered with, identified by its
// JSON-RPC code or its ErrorInfo reason (OpenWOP RFC 0211 §F): errors.Is
// holds for the a2a-go sentinel of the error it names (a2a.ErrTaskNotFound,
// a2a.ErrVersionNotSupported, ...), and for none when the peer's error is
// one the library does not know. Nothing of the peer's text is kept: its
// message and the rest of its body never reach an error message, a log or
// the host (OpenWOP interop map, a2a.fields error message).
type PeerError struct {
	// Code is the JSON-RPC code (for an error identified by its reason or
	// its HTTP status alone, the code of the A2A error it names); 0 when
	// unknown.
	Code int
	// Reason is the ErrorInfo reason the peer gave, when it is an
	// UPPER_SNAKE_CASE token; "" otherwise.
	Reason string
	// HTTPStatus is the response's status.
	HTTPStatus int
	// SupportedVersions are the well-formed versions a -32009 named in
	// ErrorInfo.metadata.supportedVersions (A2A 1.0 §3.6.2). A client never
	// depends on them (the card's interfaces are the truth).
	SupportedVersions []string

	kind error // the a2a-go sentinel, nil when unknown
}

func (e *PeerError) Error() string {
	msg := "delegate: the agent answered with an error"
	if e.kind != nil {
		msg += ": " + e.kind.Error()
	}
	if e.Code != 0 {
		msg += " (" + strconv.Itoa(e.Code) + ")"
	}
	if e.HTTPStatus != 0 && e.HTTPStatus != 200 {
		msg += " [HTTP " + strconv.Itoa(e.HTTPStatus) + "]"
	}
	return msg
}

// Unwrap returns the a2a-go sentinel of the error the peer named.
func (e *PeerError) Unwrap() error { return e.kind }
