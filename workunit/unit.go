package workunit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// Unit is one structured piece of work: what the envelope carries.
type Unit struct {
	// Kind names what the work is, so that the receiver can dispatch on
	// it, e.g. "com.example.invoice.review". Required.
	Kind string
	// ID is the sender's own id for the unit. Optional.
	ID string
	// ResultOf marks a result unit: the digest of the unit it is the
	// result of. A [Completion] is accepted only for a result whose
	// ResultOf names the unit that was sent. Optional.
	ResultOf string
	// Body is the work itself, any JSON value. Required. A sealed unit's
	// body is in RFC 8785 canonical form.
	Body json.RawMessage
}

// Errors a unit is refused with. Every refusal of [Open], [FromA2A],
// [FromMessage] and [FromMCPArguments] wraps exactly one of the first
// five; none quotes the unit's content.
var (
	// ErrNotActivated: the extension is not active for the exchange the
	// unit came in (A2A: the request's A2A-Extensions did not activate
	// it; MCP: the tool does not declare the envelope argument).
	ErrNotActivated = errors.New("workunit: extension not activated")
	// ErrNoUnit: the extension is active but nothing carries a unit.
	ErrNoUnit = errors.New("workunit: no unit")
	// ErrMalformed: the envelope or the unit is not in the shape this
	// package writes.
	ErrMalformed = errors.New("workunit: malformed envelope")
	// ErrDigestMismatch: the SHA-256 of the bytes is not the digest that
	// came with them.
	ErrDigestMismatch = errors.New("workunit: digest mismatch")
	// ErrNotCanonical: the bytes match their digest but are not the RFC
	// 8785 canonical form of the unit they hold.
	ErrNotCanonical = errors.New("workunit: not RFC 8785 canonical")

	// ErrInvalidUnit: [Seal] was given a unit it cannot carry.
	ErrInvalidUnit = errors.New("workunit: invalid unit")
	// ErrNotTheResult: [Completion.Verify] was given a result of another
	// unit, or another result than the one already accepted.
	ErrNotTheResult = errors.New("workunit: not the result of the unit sent")
)

// Members of a unit's canonical JSON object.
const (
	memberBody     = "body"
	memberID       = "id"
	memberKind     = "kind"
	memberResultOf = "resultOf"
)

// Envelope is a sealed unit: the unit, its RFC 8785 canonical bytes and
// their SHA-256 digest. Only [Seal] and [Open] (and the readers over them)
// make one, so an Envelope in hand is always consistent: its digest is
// the hash of its bytes, and its bytes are the canonical form of its
// unit. The zero Envelope holds no unit.
type Envelope struct {
	unit      Unit // Body is a sub-slice of canonical
	canonical []byte
	digest    string
}

// Unit returns the unit, its body in canonical form.
func (e Envelope) Unit() Unit {
	u := e.unit
	u.Body = bytes.Clone(u.Body)
	return u
}

// Canonical returns the unit's RFC 8785 canonical JSON: exactly the bytes
// the digest covers and the wire carries.
func (e Envelope) Canonical() []byte { return bytes.Clone(e.canonical) }

// Digest returns the lowercase hex SHA-256 of [Envelope.Canonical].
func (e Envelope) Digest() string { return e.digest }

// Seal puts u in canonical form (RFC 8785, JSON Canonicalization Scheme)
// and computes its digest. Kind and Body are required; the strings must be
// valid UTF-8 (nothing is replaced on the way); ResultOf, when set, must
// be a digest. Canonicalization keeps every value and drops only what JSON
// does not distinguish: whitespace, member order, escape and number
// spelling (RFC 8785 §3.2). Numbers are IEEE-754 doubles (§3.2.2.3): an
// integer beyond ±2^53 becomes the nearest double, so send such values as
// strings. Duplicate member names are refused (RFC 8785 §3.1).
func Seal(u Unit) (Envelope, error) {
	if err := u.check(); err != nil {
		return Envelope{}, err
	}
	doc := make([]byte, 0, len(u.Body)+len(u.Kind)+len(u.ID)+len(u.ResultOf)+48)
	doc = append(doc, `{"body":`...)
	doc = append(doc, u.Body...)
	doc = append(doc, `,"kind":`...)
	doc = jsonbytes.AppendString(doc, u.Kind, false)
	if u.ID != "" {
		doc = append(doc, `,"id":`...)
		doc = jsonbytes.AppendString(doc, u.ID, false)
	}
	if u.ResultOf != "" {
		doc = append(doc, `,"resultOf":`...)
		doc = jsonbytes.AppendString(doc, u.ResultOf, false)
	}
	doc = append(doc, '}')
	canonical, err := jcs.Transform(doc)
	if err != nil {
		// jcs's message quotes the input; the unit's content stays out
		// of errors.
		return Envelope{}, fmt.Errorf("%w: the body cannot be canonicalized (RFC 8785: I-JSON, no duplicate member names, numbers within IEEE-754 range)", ErrInvalidUnit)
	}
	unit, err := parseUnit(canonical)
	if err != nil {
		return Envelope{}, fmt.Errorf("%w: %w", ErrInvalidUnit, err)
	}
	return Envelope{unit: unit, canonical: canonical, digest: digestOf(canonical)}, nil
}

// check refuses what Seal cannot carry exactly.
func (u *Unit) check() error {
	switch {
	case u.Kind == "":
		return fmt.Errorf("%w: kind is required", ErrInvalidUnit)
	case !utf8.ValidString(u.Kind):
		return fmt.Errorf("%w: kind is not valid UTF-8", ErrInvalidUnit)
	case !utf8.ValidString(u.ID):
		return fmt.Errorf("%w: id is not valid UTF-8", ErrInvalidUnit)
	case u.ResultOf != "" && !validDigest(u.ResultOf):
		return fmt.Errorf("%w: resultOf is not a lowercase hex SHA-256 digest", ErrInvalidUnit)
	case len(u.Body) == 0:
		return fmt.Errorf("%w: body is required", ErrInvalidUnit)
	case !json.Valid(u.Body):
		// json.Valid also refuses trailing text, so the body can never
		// add members to the unit's object.
		return fmt.Errorf("%w: body is not one JSON value", ErrInvalidUnit)
	}
	return nil
}

// Open reconstructs the unit that canonical holds and proves it is the
// one sealed: the lowercase hex SHA-256 of canonical must be digest, and
// canonical must be the RFC 8785 form of a unit exactly as [Seal] writes
// it. Anything else is refused — a changed byte anywhere, another digest,
// bytes that are not canonical even when the digest matches them — so
// Open(Seal(u)) gives back the sealed unit and Seal of an opened unit
// gives back the same bytes.
func Open(canonical []byte, digest string) (Envelope, error) {
	if !validDigest(digest) {
		return Envelope{}, fmt.Errorf("%w: the digest is not a lowercase hex SHA-256", ErrMalformed)
	}
	if digestOf(canonical) != digest {
		return Envelope{}, fmt.Errorf("%w: the unit's bytes do not hash to its digest", ErrDigestMismatch)
	}
	canonical = bytes.Clone(canonical)
	unit, err := parseUnit(canonical)
	if err != nil {
		return Envelope{}, err
	}
	again, err := jcs.Transform(canonical)
	if err != nil || !bytes.Equal(again, canonical) {
		return Envelope{}, fmt.Errorf("%w: the unit's bytes are not its canonical form", ErrNotCanonical)
	}
	return Envelope{unit: unit, canonical: canonical, digest: digest}, nil
}

// parseUnit reads a unit from its JSON object: exactly the members Seal
// writes, each once, names matched exactly, the optional ones absent
// rather than empty. Body is a sub-slice of raw.
func parseUnit(raw []byte) (Unit, error) {
	var (
		u                Unit
		seen             [4]bool
		kind, id, result []byte
	)
	sc := jsonbytes.Scanner{Data: raw}
	err := sc.Members(func(name []byte, escaped bool, value []byte) error {
		var i int
		switch {
		case escaped:
			return fmt.Errorf("%w: a member name of the unit holds an escape", ErrMalformed)
		case string(name) == memberBody:
			i, u.Body = 0, value
		case string(name) == memberKind:
			i, kind = 1, value
		case string(name) == memberID:
			i, id = 2, value
		case string(name) == memberResultOf:
			i, result = 3, value
		default:
			return fmt.Errorf("%w: the unit has a member other than body, id, kind and resultOf", ErrMalformed)
		}
		if seen[i] {
			return fmt.Errorf("%w: a member of the unit is repeated", ErrMalformed)
		}
		seen[i] = true
		return nil
	})
	if err == nil {
		sc.Space()
		if sc.Pos != len(raw) {
			err = jsonbytes.ErrMalformed
		}
	}
	switch {
	case errors.Is(err, jsonbytes.ErrMalformed):
		return Unit{}, fmt.Errorf("%w: the unit is not a JSON object", ErrMalformed)
	case err != nil:
		return Unit{}, err
	case u.Body == nil:
		return Unit{}, fmt.Errorf("%w: the unit has no body", ErrMalformed)
	case kind == nil:
		return Unit{}, fmt.Errorf("%w: the unit has no kind", ErrMalformed)
	}
	if u.Kind, err = stringMember(kind, memberKind); err != nil {
		return Unit{}, err
	}
	if id != nil {
		if u.ID, err = stringMember(id, memberID); err != nil {
			return Unit{}, err
		}
	}
	if result != nil {
		if u.ResultOf, err = stringMember(result, memberResultOf); err != nil {
			return Unit{}, err
		}
		if !validDigest(u.ResultOf) {
			return Unit{}, fmt.Errorf("%w: resultOf is not a lowercase hex SHA-256", ErrMalformed)
		}
	}
	return u, nil
}

// stringMember decodes a unit member that must be a non-empty string:
// Seal leaves an empty optional member out, so one that is present and
// empty was not written by Seal.
func stringMember(value []byte, name string) (string, error) {
	raw, escaped := jsonbytes.StringContents(value)
	if raw == nil {
		return "", fmt.Errorf("%w: %s is not a string", ErrMalformed, name)
	}
	s, err := jsonbytes.Unquote(raw, escaped)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: %s is not a string", ErrMalformed, name)
	case s == "":
		return "", fmt.Errorf("%w: %s is empty", ErrMalformed, name)
	}
	return s, nil
}

// digestOf is the lowercase hex SHA-256 of b.
func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// validDigest reports whether d is 64 lowercase hex digits.
func validDigest(d string) bool {
	if len(d) != 2*sha256.Size {
		return false
	}
	for i := range len(d) {
		if c := d[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
