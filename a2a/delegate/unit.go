package delegate

import (
	"context"
	"net/http"
	"sync"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/workunit"
)

// A step may carry a work unit (package workunit, the canonical payload
// envelope): its part travels in the message, the message lists the
// extension in its extensions, and every request of the delegation
// activates the extension with the A2A-Extensions service parameter (A2A
// 1.0 §3.2.6; A2A extensions §Extension Activation). The agent lists in
// each response's A2A-Extensions the extensions it activated; a result
// unit is read only when every response did, and the completion is
// accepted only when that result opens with a matching digest and names
// the unit sent (workunit.Completion.Verify).

// unitEcho records whether the agent activated the extension on every
// response of one delegation. Responses of one delegation arrive one
// after the other, but the transport reports them from the goroutines
// net/http and a2aclient run them on.
type unitEcho struct {
	mu        sync.Mutex
	responses int
	missing   int // responses whose A2A-Extensions did not list the extension
}

type unitEchoKey struct{}

// note takes in the A2A-Extensions values of one response.
func (e *unitEcho) note(values []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.responses++
	if !workunit.Activated(values) {
		e.missing++
	}
}

// activated are the extensions active for the delegation's results, in
// the form workunit.FromA2A reads: the extension when every response
// echoed it, else none.
func (e *unitEcho) activated() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.responses == 0 || e.missing > 0 {
		return nil
	}
	return []string{workunit.ExtensionURI}
}

// noteResponse hands a response's A2A-Extensions to the delegation whose
// request it answers, when that delegation sends a unit. Both transports
// call it for every response they receive.
func noteResponse(ctx context.Context, h http.Header) {
	if e, ok := ctx.Value(unitEchoKey{}).(*unitEcho); ok {
		e.note(h.Values(wire.SvcParamExtensions))
	}
}

// unitContext is ctx for the requests of a delegation: when the step
// carries a unit, it activates the extension on every request and
// records what each response activated.
func (d *delegation) unitContext(ctx context.Context) context.Context {
	if d.step.Unit == nil {
		return ctx
	}
	ctx = a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{wire.SvcParamExtensions: {workunit.ExtensionURI}})
	return context.WithValue(ctx, unitEchoKey{}, &d.echo)
}

// verifyUnit records the completion of the unit the step sent, from the
// parts of the admitted results (each artifact's, or the reply's):
// pending verification, and accepted only when exactly one result carries
// a unit, it opens under an activated extension (its digest recomputed),
// and its resultOf is the digest of the unit sent. A result unit that
// fails any of this leaves the completion pending and earns
// WarningResultUnitRefused; the results themselves stay as admitted.
func (d *delegation) verifyUnit(out *Outcome, results [][]*wire.Part) {
	if d.step.Unit == nil {
		return
	}
	pending := workunit.RemoteCompleted(*d.step.Unit)
	out.Unit = &pending
	var carriers [][]*wire.Part
	for _, parts := range results {
		if carriesUnit(parts) {
			carriers = append(carriers, parts)
		}
	}
	refuse := func(why string) {
		out.Warnings = append(out.Warnings, WarningResultUnitRefused)
		d.c.logger().Warn("delegate: result unit not accepted", "reason", why)
	}
	switch len(carriers) {
	case 0:
		// No result unit: the host verifies the results its own way.
		return
	case 1:
	default:
		refuse("more than one result carries a unit")
		return
	}
	result, err := workunit.FromA2A(carriers[0], d.echo.activated())
	if err != nil {
		refuse(err.Error()) // workunit's errors never quote the unit
		return
	}
	accepted, err := out.Unit.Verify(result)
	if err != nil {
		refuse(err.Error())
		return
	}
	out.Unit, out.ResultUnit, out.Acceptance = &accepted, &result, AcceptanceAccepted
}

// carriesUnit reports whether a part of parts names the extension in its
// metadata, as a unit's part does (workunit.Envelope.A2APart).
func carriesUnit(parts []*wire.Part) bool {
	for _, p := range parts {
		if p != nil {
			if _, ok := p.Metadata[workunit.ExtensionURI]; ok {
				return true
			}
		}
	}
	return false
}
