package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"sort"
	"strings"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// maxEphemeralBacklog bounds the ephemeral events queued for one slow
// subscriber. Ephemeral events are best effort by definition (OpenWOP events.md §Host events),
// so beyond it they are dropped for that subscriber rather than buffered
// without limit.
const maxEphemeralBacklog = 1024

// hostEventLog is one tenant's host events: a bounded ring of durable
// events (for Last-Event-ID resumption and live delivery) and the live
// subscribers. It is guarded by the tenant lock.
type hostEventLog struct {
	// ring is circular: the retained events, oldest first, are at(0) …
	// at(n-1). It grows up to the retention and is released when the age
	// bound empties it.
	ring    []hostEntry
	head, n int
	seq     uint64 // order of every event published, durable or not
	// changed is made by the first subscriber that has to wait and closed
	// and cleared by the next publication: a publication nobody waits for
	// (an audit record on a host without subscribers) costs no channel.
	changed chan struct{}
	subs    map[*hostSubscriber]struct{}
}

type hostEntry struct {
	seq uint64
	at  int64 // store clock at publication, Unix nanoseconds: the age bound reads it
	ev  interop.HostEvent
}

type hostSubscriber struct {
	workspace string
	after     uint64      // durable events with seq > after are due
	queue     []hostEntry // ephemeral events published since it subscribed
	used      bool        // the sequence was already ranged over
}

func newHostEventLog() hostEventLog {
	return hostEventLog{subs: make(map[*hostSubscriber]struct{})}
}

// at returns the i-th oldest retained durable event, 0 <= i < n.
func (l *hostEventLog) at(i int) *hostEntry { return &l.ring[(l.head+i)%len(l.ring)] }

// push retains e, evicting the oldest event when the ring already holds
// retention events.
func (l *hostEventLog) push(e hostEntry, retention int) {
	switch {
	case l.n < len(l.ring):
		*l.at(l.n) = e
		l.n++
	case len(l.ring) < retention:
		grown := make([]hostEntry, min(max(2*len(l.ring), 64), retention))
		for i := range l.n {
			grown[i] = *l.at(i)
		}
		grown[l.n] = e
		l.ring, l.head = grown, 0
		l.n++
	default:
		*l.at(0) = e
		l.head = (l.head + 1) % len(l.ring)
	}
}

// expire drops the events published before cutoff (Unix nanoseconds) and
// returns how many. Publication order is the ring's order, so they are the
// oldest.
func (l *hostEventLog) expire(cutoff int64) int {
	dropped := 0
	for l.n > 0 && l.at(0).at < cutoff {
		*l.at(0) = hostEntry{} // release the payload
		l.head = (l.head + 1) % len(l.ring)
		l.n--
		dropped++
	}
	if l.n == 0 && dropped > 0 {
		l.ring, l.head = nil, 0
	}
	return dropped
}

// firstAfter returns the index of the oldest retained event with seq > s.
func (l *hostEventLog) firstAfter(s uint64) int {
	return sort.Search(l.n, func(i int) bool { return l.at(i).seq > s })
}

func (l *hostEventLog) wake() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// visible reports whether a subscriber of workspace receives ev: an event
// naming a workspace goes only to subscribers of that workspace — not to
// tenant-wide subscribers — while an event naming none goes to every
// subscriber of the tenant (events.md §Host events, invariant
// host-event-tenant-isolation).
func visible(ev *interop.HostEvent, workspace string) bool {
	return ev.WorkspaceID == "" || ev.WorkspaceID == workspace
}

// validHostEventType reports whether typ matches the host-event type
// grammar of host-event.schema.json,
// ^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*$: two
// segments joined by one dot, each starting with a lowercase letter, of
// lowercase letters, digits and single inner hyphens. Checked by hand, as
// every request's audit record passes here and a regexp costs more than
// the rest of the publication.
func validHostEventType(typ string) bool {
	head, tail, ok := strings.Cut(typ, ".")
	return ok && validTypeSegment(head) && validTypeSegment(tail)
}

func validTypeSegment(seg string) bool {
	if seg == "" || seg[0] < 'a' || seg[0] > 'z' || seg[len(seg)-1] == '-' {
		return false
	}
	for i := 1; i < len(seg); i++ {
		switch c := seg[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-' && seg[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// PublishHostEvent records a host event for tenant (OpenWOP host-event.schema.json; events.md §Host events; RFC 0242 §B.4).
// It fills EventID ("hev-" + opaque id) and Timestamp when empty and
// requires a Type matching the host-event type grammar, a Delivery of
// durable or ephemeral, and a Payload that is a JSON object (nil becomes
// {}). Durable events are kept, up to the retention per tenant, and
// delivered to the tenant's subscribers; ephemeral events are never kept,
// only handed to the subscribers present now. Events of the empty tenant
// (unauthenticated exchanges) are kept but reach no subscriber.
func (s *Store) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case !validHostEventType(ev.Type):
		return &interop.InputError{Field: "type", Reason: "not a host-event type"}
	case ev.Delivery != interop.DeliveryDurable && ev.Delivery != interop.DeliveryEphemeral:
		return &interop.InputError{Field: "delivery", Reason: "must be durable or ephemeral"}
	}
	if len(ev.Payload) == 0 {
		ev.Payload = json.RawMessage(`{}`)
	} else if p := bytes.TrimSpace(ev.Payload); len(p) == 0 || p[0] != '{' || !jsonbytes.Valid(p) {
		return &interop.InputError{Field: "payload", Reason: "must be a JSON object"}
	} else {
		ev.Payload = bytes.Clone(p)
	}
	if ev.EventID == "" {
		ev.EventID = "hev-" + isolation.NewOpaque()
	}
	if ev.Timestamp.IsZero() {
		ev.Timestamp = s.now()
	}
	if ev.Delivery == interop.DeliveryEphemeral && tenant == "" {
		return nil // nobody may receive it, and it is never kept
	}

	if ev.Delivery == interop.DeliveryDurable {
		s.startPurge()
	}
	t := s.tenantForWrite(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	l := &t.host
	l.seq++
	// Read under the lock, so that the ring is in clock order too.
	e := hostEntry{seq: l.seq, at: s.now().UnixNano(), ev: ev}
	if ev.Delivery == interop.DeliveryDurable {
		l.push(e, s.cfg.hostEventRetention)
	} else {
		for sub := range l.subs {
			if !visible(&ev, sub.workspace) {
				continue
			}
			if len(sub.queue) >= maxEphemeralBacklog {
				s.cfg.logger.Warn("memstore: ephemeral host event dropped for a slow subscriber", "type", ev.Type)
				continue
			}
			sub.queue = append(sub.queue, e)
		}
	}
	l.wake()
	return nil
}

// SubscribeHostEvents is the feed behind GET /host/events for one tenant
// (and workspace, "" = the whole tenant). The subscription starts when
// SubscribeHostEvents is called and lasts until ctx is done, so the caller
// must cancel ctx. The returned sequence may be ranged over once; it yields
// the retained durable events after lastEventID when that id is still
// retained ("" or an id no longer retained: none), then blocks and yields
// every new durable and ephemeral event visible to the workspace, in
// publication order, until ctx is done. Ephemeral events are only ever
// delivered to subscriptions that existed when they were published, so a
// reconnect never sees them again whatever lastEventID says. A
// subscription to the empty tenant yields nothing and waits for ctx.
//
// Durable events are read from the retained log: a subscriber that falls
// more than the retention behind skips the events that were evicted.
func (s *Store) SubscribeHostEvents(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[interop.HostEvent] {
	if tenant == "" {
		return func(func(interop.HostEvent) bool) { <-ctx.Done() }
	}
	t := s.tenantForWrite(tenant)
	sub := &hostSubscriber{workspace: workspace}
	t.mu.Lock()
	l := &t.host
	sub.after = l.seq
	if lastEventID != "" {
		for i := l.n - 1; i >= 0; i-- {
			if e := l.at(i); e.ev.EventID == lastEventID {
				sub.after = e.seq
				break
			}
		}
	}
	l.subs[sub] = struct{}{}
	t.mu.Unlock()
	unsubscribe := func() {
		t.mu.Lock()
		delete(t.host.subs, sub)
		sub.queue = nil
		t.mu.Unlock()
	}
	stop := context.AfterFunc(ctx, unsubscribe)

	return func(yield func(interop.HostEvent) bool) {
		t.mu.Lock()
		used := sub.used
		sub.used = true
		t.mu.Unlock()
		if used {
			return
		}
		defer func() {
			if stop() { // ctx not done yet: release the subscription now
				unsubscribe()
			}
		}()
		var batch []hostEntry
		for {
			if ctx.Err() != nil {
				return
			}
			var changed <-chan struct{}
			batch, changed = t.takeHostEvents(sub, batch[:0])
			for i := range batch {
				ev := batch[i].ev
				ev.Payload = bytes.Clone(ev.Payload)
				if !yield(ev) {
					return
				}
			}
			if len(batch) > 0 {
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
		}
	}
}

// takeHostEvents moves everything due to sub into batch, in publication order: the
// retained durable events after sub.after that it may see, merged with its
// queued ephemeral events. With nothing due it returns the channel closed
// by the next publication.
func (t *tenantState) takeHostEvents(sub *hostSubscriber, batch []hostEntry) ([]hostEntry, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := &t.host
	queue := sub.queue
	sub.queue = nil
	q := 0
	for i := l.firstAfter(sub.after); i < l.n; i++ {
		e := l.at(i)
		for q < len(queue) && queue[q].seq < e.seq {
			batch = append(batch, queue[q])
			q++
		}
		if visible(&e.ev, sub.workspace) {
			batch = append(batch, *e)
		}
		sub.after = e.seq
	}
	batch = append(batch, queue[q:]...)
	if len(batch) > 0 {
		return batch, nil
	}
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return batch, l.changed
}

// DurableHostEvents returns the retained durable host events of tenant,
// oldest first, including those of the empty tenant that no subscriber
// receives. It is an audit read for the host, not a subscriber feed: it
// applies no workspace filter.
func (s *Store) DurableHostEvents(tenant string) []interop.HostEvent {
	t := s.tenant(tenant)
	if t == nil {
		return []interop.HostEvent{}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]interop.HostEvent, t.host.n)
	for i := range out {
		out[i] = t.host.at(i).ev
		out[i].Payload = bytes.Clone(out[i].Payload)
	}
	return out
}
