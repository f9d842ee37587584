package pushservice

import (
	"context"
	"errors"

	"github.com/wopinterop/wopinterop/internal/recovery"
)

// Containing panics. Host code — the RunStore, the Projector, the config
// store, the vault, the outbox, the event sink, the resolver, the dialer,
// the clock — runs inside the goroutines this package starts, where a
// panic would end the whole process. Each call into it is made under a
// deferred [Service.recovered], which turns the panic into errPanicked for
// the caller's usual error handling (a failed attempt is retried or
// dead-lettered, a failed store read is retried), so a panic costs only
// the delivery of the task it happened in. It is logged once, at error
// level: where it happened, the task, and the stack — the panic value
// itself only when it is a runtime error, whose text is the runtime's,
// since a value of host code may hold a push body or a credential.

// errPanicked is what a recovered panic becomes.
var errPanicked = errors.New("push: recovered from a panic")

// recovered is deferred around calls into host code in a goroutine of
// this package: a panic is logged once and, when err is not nil, becomes
// errPanicked there.
func (s *Service) recovered(ctx context.Context, where, task string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	s.logPanic(ctx, where, task, recovery.Contain(v))
	if err != nil {
		*err = errPanicked
	}
}

// contained calls f under recovered.
func (s *Service) contained(ctx context.Context, where, task string, f func() error) (err error) {
	defer s.recovered(ctx, where, task, &err)
	return f()
}

// logPanic logs a recovered panic, once, at error level.
func (s *Service) logPanic(ctx context.Context, where, task string, p *recovery.Panic) {
	s.log.ErrorContext(ctx, "push: recovered from a panic", "in", where, "task", task, "panic", p.Value, "stack", string(p.Stack))
}
