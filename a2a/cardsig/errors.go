package cardsig

import (
	"fmt"
	"strconv"
)

// Reason says why a card was refused. Each is a way verification fails
// closed (A2A 1.0 §8.4.3; RFC 7515 §5.2).
type Reason string

const (
	// ReasonUnsigned: the card has no signatures member, or an empty one.
	ReasonUnsigned Reason = "unsigned"
	// ReasonMalformedCard: the bytes are not one JSON object in UTF-8
	// without duplicate member names (RFC 8785 §3.1 refuses the rest), or
	// the signatures member is not an array of objects.
	ReasonMalformedCard Reason = "malformed_card"
	// ReasonMalformedSignature: protected or signature is not unpadded
	// base64url, the protected header is not a JSON object, alg or kid is
	// missing or not a string, or the unprotected header repeats a
	// protected member (RFC 7515 §7.2.1).
	ReasonMalformedSignature Reason = "malformed_signature"
	// ReasonAlgorithmRefused: alg is none, an HMAC, unknown, or does not
	// fit the trusted key of kid (RFC 7518 §3.1; RFC 8725 §3.1).
	ReasonAlgorithmRefused Reason = "algorithm_refused"
	// ReasonCriticalHeader: the header names an extension this package
	// does not understand — any crit, or b64 (RFC 7515 §4.1.11; RFC 7797
	// §3).
	ReasonCriticalHeader Reason = "critical_header"
	// ReasonUnknownKey: kid names no key of the verifier's set.
	ReasonUnknownKey Reason = "unknown_key"
	// ReasonMismatch: a trusted key did not verify the signature over the
	// card's canonical form — the card was changed after it was signed, or
	// it was signed by another key under the same kid.
	ReasonMismatch Reason = "signature_mismatch"
)

// Error is why [Verifier] refused a card. When the card carries several
// signatures and none verifies, it describes the one that got furthest:
// a mismatch under a trusted key before a refused header, before an
// unknown kid.
type Error struct {
	Reason Reason
	// Index is the position in signatures[] of the signature described,
	// -1 when the reason is about the card as a whole.
	Index int
	// KeyID is the signature's kid, when it could be read.
	KeyID string
	// Detail says what exactly was wrong; it never holds key material.
	Detail string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	msg := "cardsig: " + string(e.Reason)
	if e.Index >= 0 {
		msg += " (signature " + strconv.Itoa(e.Index)
		if e.KeyID != "" {
			msg += ", kid " + strconv.Quote(e.KeyID)
		}
		msg += ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// rank orders the reasons of one signature's failure by how far its
// verification got, for the one error a card's refusal reports.
func (r Reason) rank() int {
	switch r {
	case ReasonMismatch:
		return 3
	case ReasonUnknownKey:
		return 1
	default:
		return 2
	}
}

func cardError(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Index: -1, Detail: fmt.Sprintf(format, args...)}
}
