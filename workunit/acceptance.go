package workunit

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Acceptance is whether the host has verified what a remote peer returned
// for a unit it executed. A peer reporting completion says only that its
// execution succeeded; the result is the host's to accept.
type Acceptance string

// Acceptance values. The zero Acceptance records nothing.
const (
	// PendingVerification: the peer reported the execution succeeded; its
	// result has not been verified. Nothing may treat the work as done.
	PendingVerification Acceptance = "pending-verification"
	// Accepted: a result that opened with a matching digest and names the
	// unit that was sent as the unit it is the result of.
	Accepted Acceptance = "accepted"
)

// Completion records a remote execution of a unit that the peer reported
// as succeeded. It starts pending ([RemoteCompleted]) and becomes accepted
// only through [Completion.Verify]; no field can be set from outside, so
// a Completion is never accepted by construction or by mistake. Its JSON
// form is {"execution":"succeeded","acceptance":…,"request":digest} with
// "result":digest once accepted.
type Completion struct {
	request    string
	result     string
	acceptance Acceptance
}

// executionSucceeded is the one execution outcome a Completion records.
const executionSucceeded = "succeeded"

// RemoteCompleted records that the peer reported its execution of sent as
// succeeded: execution succeeded, acceptance pending verification — never
// accepted.
func RemoteCompleted(sent Envelope) Completion {
	return Completion{request: sent.digest, acceptance: PendingVerification}
}

// Acceptance is where the completion stands; "" for the zero Completion.
func (c Completion) Acceptance() Acceptance { return c.acceptance }

// Request is the digest of the unit that was sent.
func (c Completion) Request() string { return c.request }

// Result is the digest of the accepted result; "" until accepted.
func (c Completion) Result() string { return c.result }

// Verify accepts result as the result of the unit sent: result is an
// Envelope, so its digest was recomputed when it was opened ([FromA2A],
// [FromMCPArguments], [Open]), and its unit must name the sent unit's
// digest as ResultOf. It returns the accepted Completion; on any
// mismatch it returns c unchanged with an error wrapping
// [ErrNotTheResult]. An accepted Completion verifies again only with the
// same result.
func (c Completion) Verify(result Envelope) (Completion, error) {
	switch {
	case c.request == "":
		return c, errors.New("workunit: the completion records no unit")
	case result.digest == "":
		return c, fmt.Errorf("%w: the result holds no unit", ErrNotTheResult)
	case result.unit.ResultOf != c.request:
		return c, fmt.Errorf("%w: the result's resultOf is not the digest of the unit sent", ErrNotTheResult)
	case c.acceptance == Accepted && c.result != result.digest:
		return c, fmt.Errorf("%w: another result was already accepted", ErrNotTheResult)
	}
	return Completion{request: c.request, result: result.digest, acceptance: Accepted}, nil
}

// completionJSON is the JSON form of a Completion.
type completionJSON struct {
	Execution  string     `json:"execution"`
	Acceptance Acceptance `json:"acceptance"`
	Request    string     `json:"request"`
	Result     string     `json:"result,omitempty"`
}

// MarshalJSON writes the record; the zero Completion is refused.
func (c Completion) MarshalJSON() ([]byte, error) {
	if c.request == "" {
		return nil, errors.New("workunit: the completion records no unit")
	}
	return json.Marshal(completionJSON{Execution: executionSucceeded, Acceptance: c.acceptance, Request: c.request, Result: c.result})
}

// UnmarshalJSON reads back a record [Completion.MarshalJSON] wrote, for a
// host that keeps it in its own run state: exactly those members, the
// digests well-formed, a result only when accepted. A record is only as
// trustworthy as the store it was read from.
func (c *Completion) UnmarshalJSON(b []byte) error {
	var (
		j    completionJSON
		seen = map[string]bool{}
	)
	err := members(b, "a completion record", func(name string, value []byte) error {
		var dst *string
		switch name {
		case "execution":
			dst = &j.Execution
		case "acceptance":
			dst = (*string)(&j.Acceptance)
		case "request":
			dst = &j.Request
		case "result":
			dst = &j.Result
		default:
			return fmt.Errorf("%w: a completion record has no member %q", ErrMalformed, name)
		}
		s, ok := jsonString(value)
		if !ok || seen[name] {
			return fmt.Errorf("%w: %s is not one string", ErrMalformed, name)
		}
		seen[name], *dst = true, s
		return nil
	})
	switch {
	case err != nil:
		return err
	case j.Execution != executionSucceeded:
		return fmt.Errorf("%w: execution is not %q", ErrMalformed, executionSucceeded)
	case !validDigest(j.Request):
		return fmt.Errorf("%w: request is not a lowercase hex SHA-256", ErrMalformed)
	case j.Acceptance == PendingVerification && seen["result"]:
		return fmt.Errorf("%w: a pending completion has no result", ErrMalformed)
	case j.Acceptance == Accepted && !validDigest(j.Result):
		return fmt.Errorf("%w: result is not a lowercase hex SHA-256", ErrMalformed)
	case j.Acceptance != PendingVerification && j.Acceptance != Accepted:
		return fmt.Errorf("%w: acceptance is neither %q nor %q", ErrMalformed, PendingVerification, Accepted)
	}
	*c = Completion{request: j.Request, result: j.Result, acceptance: j.Acceptance}
	return nil
}
