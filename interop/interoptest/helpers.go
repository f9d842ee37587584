package interoptest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// Inputs and resume values the fixtures take (constants, so that no check
// can alter what another sends).
const (
	emptyInputs = `{}`
	acceptValue = `{"action":"accept"}`
)

func delayInputs(ms int) string { return fmt.Sprintf(`{"delayMs":%d}`, ms) }

// unique returns a fresh value for contextIds, keys and message ids, so that
// checks never collide with data already in a shared store.
func unique(prefix string) string { return "interoptest-" + prefix + "-" + rand.Text() }

// neverMinted returns an id with the shape of a tenant-bound id of tenant
// whose opaque segment has opaqueLen characters, and that no store ever
// minted (130 random bits per 26 characters).
func neverMinted(tenant string, opaqueLen int) string {
	var b strings.Builder
	for b.Len() < opaqueLen {
		b.WriteString(rand.Text())
	}
	return tenant + "/" + b.String()[:opaqueLen]
}

// sameShape returns a never-minted id shaped like id (same tenant segment
// unless tenant is non-empty, same opaque length).
func sameShape(id, tenant string) (string, error) {
	t, o, err := isolation.Split(id)
	if err != nil {
		return "", fmt.Errorf("id %q is not a tenant-bound id (OpenWOP identity.md §5): %w", id, err)
	}
	if tenant != "" {
		t = tenant
	}
	return neverMinted(t, len(o)), nil
}

// create starts a run and insists on created=true.
func (k *kit) create(ctx context.Context, s interop.Subject, workflow, inputs, contextID string) (interop.Run, error) {
	run, created, err := k.s.CreateRun(ctx, s, interop.CreateRunRequest{
		WorkflowID:    workflow,
		Inputs:        json.RawMessage(inputs),
		Transport:     interop.TransportA2A,
		ContextID:     contextID,
		TrustBoundary: interop.TrustUntrusted,
	})
	if err != nil {
		return interop.Run{}, fmt.Errorf("CreateRun(%s) as %s: %w", workflow, who(s), err)
	}
	if !created {
		return interop.Run{}, fmt.Errorf("CreateRun(%s) without idempotency key returned created=false (run %s)", workflow, run.ID)
	}
	if run.ID == "" {
		return interop.Run{}, fmt.Errorf("CreateRun(%s) returned a run without id", workflow)
	}
	return run, nil
}

// waitRun polls GetRun until cond holds. Polling (not WatchRun) keeps the
// checks that only need a state independent of the watch guarantee.
func (k *kit) waitRun(ctx context.Context, s interop.Subject, id, what string, cond func(interop.Run) bool) (interop.Run, error) {
	delay := 250 * time.Microsecond
	var last interop.Run
	for {
		run, err := k.s.GetRun(ctx, s, id)
		if err != nil {
			if ctx.Err() != nil {
				return last, fmt.Errorf("run %s did not become %s before the deadline (last status %q)", id, what, last.Status)
			}
			return run, fmt.Errorf("GetRun(%s) while waiting for %s: %w", id, what, err)
		}
		if cond(run) {
			return run, nil
		}
		last = run
		if run.Status.Terminal() {
			return run, fmt.Errorf("run %s ended %q instead of becoming %s", id, run.Status, what)
		}
		select {
		case <-ctx.Done():
			return run, fmt.Errorf("run %s did not become %s before the deadline (last status %q)", id, what, run.Status)
		case <-time.After(delay):
		}
		delay = min(2*delay, 16*time.Millisecond)
	}
}

func (k *kit) waitStatus(ctx context.Context, s interop.Subject, id string, want interop.RunStatus) (interop.Run, error) {
	return k.waitRun(ctx, s, id, string(want), func(r interop.Run) bool { return r.Status == want })
}

// waitSuspended waits for a waiting-approval run with an open interrupt.
func (k *kit) waitSuspended(ctx context.Context, s interop.Subject, id string) (interop.Run, interop.Interrupt, error) {
	run, err := k.waitRun(ctx, s, id, "waiting-approval with an open interrupt", func(r interop.Run) bool {
		return r.Status == interop.StatusWaitingApproval && len(r.Interrupts) > 0
	})
	if err != nil {
		return run, interop.Interrupt{}, err
	}
	in, _ := run.OpenInterrupt()
	if in.ID == "" {
		return run, in, fmt.Errorf("run %s is suspended on an interrupt without id", id)
	}
	return run, in, nil
}

// startSuspended creates an Approval run in contextID and waits for its
// interrupt.
func (k *kit) startSuspended(ctx context.Context, s interop.Subject, contextID string) (interop.Run, interop.Interrupt, error) {
	run, err := k.create(ctx, s, k.h.Approval, emptyInputs, contextID)
	if err != nil {
		return run, interop.Interrupt{}, err
	}
	return k.waitSuspended(ctx, s, run.ID)
}

// startCompleted creates Noop runs in contextID, one after the other, and
// waits for each to complete.
func (k *kit) startCompleted(ctx context.Context, s interop.Subject, contextID string, n int) ([]interop.Run, error) {
	var runs []interop.Run
	for range n {
		run, err := k.create(ctx, s, k.h.Noop, emptyInputs, contextID)
		if err != nil {
			return nil, err
		}
		if run, err = k.waitStatus(ctx, s, run.ID, interop.StatusCompleted); err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// snapshot is the part of a run a refusal must not change.
type snapshot struct {
	Status       interop.RunStatus
	StatusAt     time.Time
	LastSequence int64
	Interrupts   []string
	CancelReason string
	Messages     int
}

func snap(r interop.Run) snapshot {
	s := snapshot{
		Status: r.Status, StatusAt: r.StatusAt, LastSequence: r.LastSequence,
		CancelReason: r.CancelReason, Messages: len(r.Messages),
	}
	for _, in := range r.Interrupts {
		s.Interrupts = append(s.Interrupts, in.ID)
	}
	return s
}

func (a snapshot) equal(b snapshot) bool {
	return a.Status == b.Status && a.StatusAt.Equal(b.StatusAt) && a.LastSequence == b.LastSequence &&
		slices.Equal(a.Interrupts, b.Interrupts) && a.CancelReason == b.CancelReason && a.Messages == b.Messages
}

func (a snapshot) String() string {
	return fmt.Sprintf("{status %s at %s, lastSequence %d, interrupts %v, cancelReason %q, messages %d}",
		a.Status, a.StatusAt.Format(time.RFC3339Nano), a.LastSequence, a.Interrupts, a.CancelReason, a.Messages)
}

// unchanged re-reads a run and reports any difference from before.
func (k *kit) unchanged(ctx context.Context, s interop.Subject, before interop.Run, after string) error {
	now, err := k.s.GetRun(ctx, s, before.ID)
	if err != nil {
		return fmt.Errorf("GetRun(%s) by its owner after %s: %w", before.ID, after, err)
	}
	if b, a := snap(before), snap(now); !b.equal(a) {
		return fmt.Errorf("run %s changed after %s: before %v, after %v", before.ID, after, b, a)
	}
	return nil
}

// contractErrors are the contract's sentinels; two answers are alike only
// if they match the same ones.
func contractErrors() []error {
	return []error{
		interop.ErrNotFound, interop.ErrRunTerminal, interop.ErrAlreadyResolved, interop.ErrNotEligible,
		interop.ErrInvalidInput, interop.ErrUnauthenticated, interop.ErrForbidden,
	}
}

// sameAnswer reports how two errors differ once each one's ids are replaced
// by placeholders, or "" when they are indistinguishable. ids pairs the id
// strings of a with those of b, in the same order.
func sameAnswer(a, b error, idsA, idsB []string) string {
	if (a == nil) != (b == nil) {
		return fmt.Sprintf("one is nil: %v vs %v", a, b)
	}
	if a == nil {
		return ""
	}
	for _, s := range contractErrors() {
		if errors.Is(a, s) != errors.Is(b, s) {
			return fmt.Sprintf("errors.Is(%v) differs: %v vs %v", s, errors.Is(a, s), errors.Is(b, s))
		}
	}
	ta, tb := a.Error(), b.Error()
	for i := range idsA {
		ph := fmt.Sprintf("<id%d>", i)
		ta = strings.ReplaceAll(ta, idsA[i], ph)
		tb = strings.ReplaceAll(tb, idsB[i], ph)
	}
	if ta != tb {
		return fmt.Sprintf("text differs: %q vs %q", ta, tb)
	}
	return ""
}

// isNotFound checks that err is ErrNotFound.
func isNotFound(op string, err error) error {
	if err == nil {
		return fmt.Errorf("%s succeeded, want ErrNotFound", op)
	}
	if !errors.Is(err, interop.ErrNotFound) {
		return fmt.Errorf("%s = %v, want ErrNotFound", op, err)
	}
	return nil
}

func who(s interop.Subject) string { return s.Tenant + ":" + s.Principal }

// listAll pages through ListRuns and returns the runs in order, failing on a
// repeated id or a runaway cursor.
func (k *kit) listAll(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) ([]interop.Run, int, error) {
	var out []interop.Run
	seen := map[string]bool{}
	total := -1
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, 0, errors.New("ListRuns: more than 1000 pages; the cursor never ends")
		}
		p, err := k.s.ListRuns(ctx, s, q)
		if err != nil {
			return nil, 0, fmt.Errorf("ListRuns(%+v) as %s: %w", q, who(s), err)
		}
		total = p.Total
		for _, r := range p.Runs {
			if seen[r.ID] {
				return nil, 0, fmt.Errorf("ListRuns paging returned run %s twice", r.ID)
			}
			seen[r.ID] = true
			out = append(out, r)
		}
		if p.NextCursor == "" {
			return out, total, nil
		}
		if len(p.Runs) == 0 {
			return nil, 0, errors.New("ListRuns returned an empty page with a next cursor")
		}
		q.Cursor = p.NextCursor
	}
}

func ids(runs []interop.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

// watchItem is one pair a watch sequence yielded.
type watchItem struct {
	ev  interop.RunEvent
	err error
}

// drain consumes seq on its own goroutine so that a check can bound every
// wait with ctx even when a store blocks. The goroutine ends when seq ends,
// or, once stop is done, at the next yield. The channel is closed when seq
// ends.
func drain(stop context.Context, seq iter.Seq2[interop.RunEvent, error]) <-chan watchItem {
	ch := make(chan watchItem)
	go func() {
		defer close(ch)
		defer func() {
			// A sequence that keeps yielding after being told to stop
			// panics in the range statement; report it rather than crash
			// the test binary.
			if p := recover(); p != nil {
				select {
				case ch <- watchItem{err: fmt.Errorf("watch sequence misbehaved: %v", p)}:
				case <-stop.Done():
				}
			}
		}()
		for ev, err := range seq {
			select {
			case ch <- watchItem{ev: ev, err: err}:
			case <-stop.Done():
				return
			}
		}
	}()
	return ch
}

// next waits for the next item; ok is false when the sequence has ended.
func next(ctx context.Context, ch <-chan watchItem, what string) (item watchItem, ok bool, err error) {
	select {
	case item, ok = <-ch:
		return item, ok, nil
	case <-ctx.Done():
		return watchItem{}, false, fmt.Errorf("watch: %s did not happen before the deadline", what)
	}
}

// collect reads a watch to its end. It fails on a yielded error, on an
// event after a terminal event, and on a watch that does not end.
func collect(ctx context.Context, ch <-chan watchItem) ([]interop.RunEvent, error) {
	var evs []interop.RunEvent
	for {
		what := "the next event"
		if len(evs) > 0 && evs[len(evs)-1].Terminal() {
			what = "the end of the sequence right after the terminal event"
		}
		item, ok, err := next(ctx, ch, what)
		if err != nil {
			return evs, err
		}
		if !ok {
			return evs, nil
		}
		if item.err != nil {
			return evs, fmt.Errorf("watch yielded an error after %d events: %w", len(evs), item.err)
		}
		if len(evs) > 0 && evs[len(evs)-1].Terminal() {
			return evs, fmt.Errorf("watch yielded %s (sequence %d) after the terminal event %s", item.ev.Type, item.ev.Sequence, evs[len(evs)-1].Type)
		}
		evs = append(evs, item.ev)
	}
}

// readLog reads a run's whole log, for a run that is already terminal.
func (k *kit) readLog(ctx context.Context, s interop.Subject, id string) ([]interop.RunEvent, error) {
	seq, err := k.s.WatchRun(ctx, s, id, -1)
	if err != nil {
		return nil, fmt.Errorf("WatchRun(%s, -1): %w", id, err)
	}
	if seq == nil {
		return nil, fmt.Errorf("WatchRun(%s, -1) returned a nil sequence without error", id)
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	return collect(ctx, drain(stop, seq))
}

func describe(evs []interop.RunEvent) string {
	parts := make([]string, len(evs))
	for i, e := range evs {
		parts[i] = fmt.Sprintf("%d:%s", e.Sequence, e.Type)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// interruptOf is the interruptId an event's payload names, or "".
func interruptOf(ev interop.RunEvent) string {
	var p struct {
		InterruptID string `json:"interruptId"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	return p.InterruptID
}
