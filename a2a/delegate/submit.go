package delegate

import (
	"context"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/outbound"
)

// Submit is the first half of Delegate, for a host that hands a step off
// and comes back later: it checks step against the admission, sends its
// one message with returnImmediately (never streamed) and returns what the
// peer's answer says — the remote task's ids, its state and that state's
// projection — without following the task. [Conn.Resume] follows it later
// and never sends the message again; [Conn.Cancel] stops it. A task that
// is already terminal, or a direct message reply, gets the Outcome and
// error Delegate would give; a task still working gives a nil error and an
// Outcome without Reconciliation, because nothing has ended.
//
// Submit makes one attempt: a send that failed is not retried, whatever
// Limits.Attempts says, and its Outcome says what is known of its effect
// (admission-boundaries §18.9).
func (c *Conn) Submit(ctx context.Context, step Step) (*Outcome, error) {
	if err := c.admitStep(step); err != nil {
		return nil, err
	}
	limits := c.Admission.Limits.withDefaults()
	ctx, stop := context.WithTimeoutCause(ctx, limits.Deadline, ErrDeadline)
	defer stop()
	d := c.newDelegation(step, limits, outbound.NewAttemptID())
	out, err := d.submit(ctx)
	if out.AttemptID != "" {
		out.Attempts = 1
	}
	c.recordLoss(ctx, d)
	c.recordReconciliation(ctx, out)
	return out, err
}

// submit sends the attempt's message and applies the one answer.
func (d *delegation) submit(ctx context.Context) (*Outcome, error) {
	if ctx.Err() != nil {
		return d.cancelledBeforeAdmission(ctx)
	}
	req := &wire.SendMessageRequest{
		Tenant: d.c.Tenant, Message: d.message(ctx),
		Config: &wire.SendMessageConfig{ReturnImmediately: true},
	}
	res, err := d.c.remote.SendMessage(ctx, req)
	if err != nil {
		return d.sendFailed(ctx, err)
	}
	if err := d.apply(res); err != nil {
		if d.taskID == "" {
			return d.sendFailed(ctx, err)
		}
		return d.abandon(ctx, err)
	}
	switch {
	case d.reply != nil:
		return d.finishReply()
	case d.haveState && d.state.Terminal():
		return d.finish()
	}
	return d.outcome(), nil
}
