package interoptest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/interoptest"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

// brokenStore decorates a real memstore. Each hook that is set replaces one
// method, usually to break exactly one guarantee; unset hooks pass through.
type brokenStore struct {
	*memstore.Store
	create  func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error)
	get     func(ctx context.Context, s interop.Subject, id string) (interop.Run, error)
	list    func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error)
	cancel  func(ctx context.Context, s interop.Subject, id, reason string) (interop.Run, error)
	resolve func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error)
	watch   func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error)
	feed    func(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[interop.HostEvent]
	// publishHost replaces PublishHostEvent.
	publishHost func(ctx context.Context, tenant string, ev interop.HostEvent) error
	// appendRun replaces AppendRunEvent.
	appendRun func(ctx context.Context, runID string, ev interop.RunEvent) error
	// waitRun replaces WaitRun.
	waitRun func(ctx context.Context, s interop.Subject, id string, settled func(interop.RunStatus) bool) (interop.Run, error)
}

func (b *brokenStore) WaitRun(ctx context.Context, s interop.Subject, id string, settled func(interop.RunStatus) bool) (interop.Run, error) {
	if b.waitRun != nil {
		return b.waitRun(ctx, s, id, settled)
	}
	return b.Store.WaitRun(ctx, s, id, settled)
}

func (b *brokenStore) AppendRunEvent(ctx context.Context, runID string, ev interop.RunEvent) error {
	if b.appendRun != nil {
		return b.appendRun(ctx, runID, ev)
	}
	return b.Store.AppendRunEvent(ctx, runID, ev)
}

func (b *brokenStore) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	if b.publishHost != nil {
		return b.publishHost(ctx, tenant, ev)
	}
	return b.Store.PublishHostEvent(ctx, tenant, ev)
}

var _ interop.RunStore = (*brokenStore)(nil)

func (b *brokenStore) CreateRun(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	if b.create != nil {
		return b.create(ctx, s, req)
	}
	return b.Store.CreateRun(ctx, s, req)
}

func (b *brokenStore) GetRun(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
	if b.get != nil {
		return b.get(ctx, s, id)
	}
	return b.Store.GetRun(ctx, s, id)
}

func (b *brokenStore) ListRuns(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
	if b.list != nil {
		return b.list(ctx, s, q)
	}
	return b.Store.ListRuns(ctx, s, q)
}

func (b *brokenStore) CancelRun(ctx context.Context, s interop.Subject, id, reason string) (interop.Run, error) {
	if b.cancel != nil {
		return b.cancel(ctx, s, id, reason)
	}
	return b.Store.CancelRun(ctx, s, id, reason)
}

func (b *brokenStore) ResolveInterrupt(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
	if b.resolve != nil {
		return b.resolve(ctx, s, req)
	}
	return b.Store.ResolveInterrupt(ctx, s, req)
}

func (b *brokenStore) WatchRun(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
	if b.watch != nil {
		return b.watch(ctx, s, id, after)
	}
	return b.Store.WatchRun(ctx, s, id, after)
}

func (b *brokenStore) SubscribeHostEvents(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[interop.HostEvent] {
	if b.feed != nil {
		return b.feed(ctx, tenant, workspace, lastEventID)
	}
	return b.Store.SubscribeHostEvents(ctx, tenant, workspace, lastEventID)
}

// editEvents rewrites the events of every watch with edit.
func editEvents(m *memstore.Store, edit func(ev *interop.RunEvent)) *brokenStore {
	return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
		seq, err := m.WatchRun(ctx, s, id, after)
		if err != nil {
			return nil, err
		}
		return mapEvents(seq, func(ev interop.RunEvent, err error, yield func(interop.RunEvent, error) bool) bool {
			if err == nil {
				edit(&ev)
			}
			return yield(ev, err)
		}), nil
	}}
}

// editPayload rewrites the payload members of every event of type typ.
func editPayload(m *memstore.Store, typ interop.EventType, edit func(p map[string]any)) *brokenStore {
	return editEvents(m, func(ev *interop.RunEvent) {
		if ev.Type != typ {
			return
		}
		var p map[string]any
		_ = json.Unmarshal(ev.Payload, &p)
		edit(p)
		ev.Payload, _ = json.Marshal(p)
	})
}

// ownerOf is a subject that may read and resolve id: memstore lets any
// principal of a run's tenant read it, and alice is an approver of every
// approval fixture.
func ownerOf(id string) interop.Subject { return subject(isolation.TenantOf(id), alice().Principal) }

// foreign reports whether id is an existing run of a tenant other than s's.
func foreign(ctx context.Context, m *memstore.Store, s interop.Subject, id string) bool {
	if isolation.TenantOf(id) == s.Tenant {
		return false
	}
	_, err := m.GetRun(ctx, ownerOf(id), id)
	return err == nil
}

func notFoundFor(what string) error {
	return fmt.Errorf("memstore: %s belongs to another tenant: %w", what, interop.ErrNotFound)
}

// mapEvents wraps a watch sequence.
func mapEvents(seq iter.Seq2[interop.RunEvent, error], each func(ev interop.RunEvent, err error, yield func(interop.RunEvent, error) bool) bool) iter.Seq2[interop.RunEvent, error] {
	return func(yield func(interop.RunEvent, error) bool) {
		for ev, err := range seq {
			if !each(ev, err, yield) {
				return
			}
		}
	}
}

// sequenceBump fakes appended events on runs by raising their LastSequence
// (memstore itself refuses to append to a terminal run).
type sequenceBump struct {
	mu   sync.Mutex
	runs map[string]int64
}

func (sb *sequenceBump) add(id string) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.runs == nil {
		sb.runs = map[string]int64{}
	}
	sb.runs[id]++
}

func (sb *sequenceBump) apply(r interop.Run, err error) (interop.Run, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	r.LastSequence += sb.runs[r.ID]
	return r, err
}

// duplicatedResolution makes every resolution appear twice in the log: an
// interrupt.resolved event copied right after the real one, with later
// sequences and LastSequence shifted to stay consistent.
func duplicatedResolution(m *memstore.Store) *brokenStore {
	var mu sync.Mutex
	dupAt := map[string]int64{}
	record := func(id string, seq int64) {
		mu.Lock()
		defer mu.Unlock()
		dupAt[id] = seq
	}
	lookup := func(id string) (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		d, ok := dupAt[id]
		return d, ok
	}
	shift := func(r interop.Run, err error) (interop.Run, error) {
		if d, ok := lookup(r.ID); ok && err == nil && r.LastSequence >= d {
			r.LastSequence++
		}
		return r, err
	}
	return &brokenStore{
		Store: m,
		get: func(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
			return shift(m.GetRun(ctx, s, id))
		},
		resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
			r, err := m.ResolveInterrupt(ctx, s, req)
			if err == nil {
				record(r.ID, r.LastSequence)
			}
			return shift(r, err)
		},
		watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
			innerAfter := after
			if d, ok := lookup(id); ok && after > d {
				innerAfter = after - 1
			}
			seq, err := m.WatchRun(ctx, s, id, innerAfter)
			if err != nil {
				return seq, err
			}
			return mapEvents(seq, func(ev interop.RunEvent, err error, yield func(interop.RunEvent, error) bool) bool {
				if err != nil {
					return yield(ev, err)
				}
				if ev.Type == interop.EventInterruptResolved {
					record(id, ev.Sequence)
				}
				d, ok := lookup(id)
				if ok && ev.Sequence > d {
					ev.Sequence++
				}
				if !yield(ev, nil) {
					return false
				}
				if ok && ev.Type == interop.EventInterruptResolved && ev.Sequence == d && d+1 > after {
					dup := ev
					dup.Sequence = d + 1
					return yield(dup, nil)
				}
				return true
			}), nil
		},
	}
}

// offsetCursor pages by position instead of by key, the classic cursor bug:
// a run created between pages shifts every later page by one.
func offsetCursor(m *memstore.Store) *brokenStore {
	return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
		offset := 0
		if q.Cursor != "" {
			raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
			tenant, n, ok := strings.Cut(string(raw), "|")
			if err != nil || !ok || tenant != s.Tenant {
				return interop.RunPage{}, &interop.InputError{Field: "cursor", Reason: "not issued"}
			}
			if offset, err = strconv.Atoi(n); err != nil {
				return interop.RunPage{}, &interop.InputError{Field: "cursor", Reason: "not issued"}
			}
		}
		size := q.PageSize
		if size == 0 {
			size = memstore.DefaultPageSize
		}
		var all []interop.Run
		inner := q
		inner.Cursor, inner.PageSize = "", memstore.MaxPageSize
		for {
			p, err := m.ListRuns(ctx, s, inner)
			if err != nil {
				return interop.RunPage{}, err
			}
			all = append(all, p.Runs...)
			if p.NextCursor == "" {
				break
			}
			inner.Cursor = p.NextCursor
		}
		end := min(offset+size, len(all))
		out := interop.RunPage{Runs: all[min(offset, end):end], Total: len(all)}
		if end < len(all) {
			out.NextCursor = base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s|%d", s.Tenant, end))
		}
		return out, nil
	}}
}

// unboundCursor accepts a cursor issued to one tenant from another (serving
// that tenant's first page) instead of refusing it.
func unboundCursor(m *memstore.Store) *brokenStore {
	var mu sync.Mutex
	issuer := map[string]string{} // cursor -> tenant it was issued to
	return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
		mu.Lock()
		tenant, known := issuer[q.Cursor]
		mu.Unlock()
		if known && tenant != s.Tenant {
			q.Cursor = ""
		}
		p, err := m.ListRuns(ctx, s, q)
		if p.NextCursor != "" {
			mu.Lock()
			issuer[p.NextCursor] = s.Tenant
			mu.Unlock()
		}
		return p, err
	}}
}

// pageHook post-processes ListRuns pages requested with a cursor.
func pageHook(m *memstore.Store, edit func(q interop.ListRunsQuery, p *interop.RunPage)) *brokenStore {
	return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
		p, err := m.ListRuns(ctx, s, q)
		if err == nil {
			edit(q, &p)
		}
		return p, err
	}}
}

// racyKeys checks the idempotency key and inserts the run in two steps with a
// gap between them, like a store without a unique constraint.
func racyKeys(m *memstore.Store) *brokenStore {
	var mu sync.Mutex
	keys := map[string]string{} // tenant|principal|key -> run id
	return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
		if req.IdempotencyKey == "" {
			return m.CreateRun(ctx, s, req)
		}
		k := s.Tenant + "|" + s.Principal + "|" + req.IdempotencyKey
		mu.Lock()
		id, ok := keys[k]
		mu.Unlock()
		if ok {
			r, err := m.GetRun(ctx, s, id)
			return r, false, err
		}
		time.Sleep(20 * time.Millisecond) // the window a slow database would leave
		req.IdempotencyKey = ""
		r, created, err := m.CreateRun(ctx, s, req)
		if err == nil {
			mu.Lock()
			keys[k] = r.ID
			mu.Unlock()
		}
		return r, created, err
	}}
}

// brokenCase is a store that breaks one guarantee and the check that must
// catch it.
type brokenCase struct {
	name string
	// check must fail with an error containing want.
	check, want string
	// alsoFails are the other checks the break trips; every check not
	// listed must still pass, so each break stays narrow.
	alsoFails []string
	opts      []memstore.Option
	timeout   time.Duration
	wrap      func(m *memstore.Store) *brokenStore
}

func brokenCases() []brokenCase {
	return []brokenCase{
		// wait-run
		{
			name: "WaitRun reads across tenants", check: "wait-run", want: "WaitRun by another tenant succeeded",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, waitRun: func(ctx context.Context, s interop.Subject, id string, settled func(interop.RunStatus) bool) (interop.Run, error) {
					return m.WaitRun(ctx, ownerOf(id), id, settled)
				}}
			},
		},
		{
			name: "WaitRun waits past a terminal run", check: "wait-run", want: "across its cancellation", timeout: 500 * time.Millisecond,
			wrap: func(m *memstore.Store) *brokenStore {
				// Polls for settled alone, as if terminal needed saying.
				return &brokenStore{Store: m, waitRun: func(ctx context.Context, s interop.Subject, id string, settled func(interop.RunStatus) bool) (interop.Run, error) {
					for {
						r, err := m.GetRun(ctx, s, id)
						if err != nil || settled(r.Status) {
							return r, err
						}
						select {
						case <-ctx.Done():
							return interop.Run{}, ctx.Err()
						case <-time.After(time.Millisecond):
						}
					}
				}}
			},
		},
		{
			name: "WaitRun answers before the run settles", check: "wait-run", want: "want waiting-approval",
			wrap: func(m *memstore.Store) *brokenStore {
				// The run as it was when the wait began.
				return &brokenStore{Store: m, waitRun: func(ctx context.Context, s interop.Subject, id string, settled func(interop.RunStatus) bool) (interop.Run, error) {
					r, err := m.GetRun(ctx, s, id)
					if err != nil {
						return r, err
					}
					r.Status, r.Interrupts = interop.StatusRunning, nil
					return r, nil
				}}
			},
		},
		// unknown-ids
		{
			name: "unknown id reads as an empty run", check: "unknown-ids", want: "GetRun(never-minted id) succeeded",
			alsoFails: []string{"foreign-run-is-unknown"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, get: func(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
					r, err := m.GetRun(ctx, s, id)
					if errors.Is(err, interop.ErrNotFound) && !foreign(ctx, m, s, id) {
						return interop.Run{}, nil
					}
					return r, err
				}}
			},
		},
		{
			name: "watch of an unknown id returns a sequence too", check: "unknown-ids", want: "non-nil sequence",
			alsoFails: []string{"foreign-run-is-unknown", "watch"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
					seq, err := m.WatchRun(ctx, s, id, after)
					if err != nil {
						return func(func(interop.RunEvent, error) bool) {}, err
					}
					return seq, nil
				}}
			},
		},
		// create-and-read
		{
			name: "contextId not persisted", check: "create-and-read", want: "ContextID",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, get: func(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
					r, err := m.GetRun(ctx, s, id)
					r.ContextID = ""
					return r, err
				}}
			},
		},
		{
			name: "starting message not recorded", check: "create-and-read", want: "first exchanged message",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
					req.Message = nil
					return m.CreateRun(ctx, s, req)
				}}
			},
		},
		// foreign-run-is-unknown
		{
			name: "foreign GetRun says whose run it is", check: "foreign-run-is-unknown", want: "GetRun of another tenant's run answers unlike",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, get: func(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
					if foreign(ctx, m, s, id) {
						return interop.Run{}, notFoundFor("run " + id)
					}
					return m.GetRun(ctx, s, id)
				}}
			},
		},
		{
			name: "foreign GetRun is also ErrForbidden", check: "foreign-run-is-unknown", want: "errors.Is(interop: forbidden) differs",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, get: func(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
					r, err := m.GetRun(ctx, s, id)
					if foreign(ctx, m, s, id) {
						return r, fmt.Errorf("%w%w", err, interop.ErrForbidden)
					}
					return r, err
				}}
			},
		},
		{
			name: "foreign CancelRun says whose run it is", check: "foreign-run-is-unknown", want: "CancelRun of another tenant's run answers unlike",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, cancel: func(ctx context.Context, s interop.Subject, id, reason string) (interop.Run, error) {
					if foreign(ctx, m, s, id) {
						return interop.Run{}, notFoundFor("run")
					}
					return m.CancelRun(ctx, s, id, reason)
				}}
			},
		},
		{
			name: "foreign ResolveInterrupt says whose run it is", check: "foreign-run-is-unknown", want: "ResolveInterrupt of another tenant's run answers unlike",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					if foreign(ctx, m, s, req.RunID) {
						return interop.Run{}, notFoundFor("interrupt")
					}
					return m.ResolveInterrupt(ctx, s, req)
				}}
			},
		},
		{
			name: "foreign WatchRun says whose run it is", check: "foreign-run-is-unknown", want: "WatchRun of another tenant's run answers unlike",
			alsoFails: []string{},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
					if foreign(ctx, m, s, id) {
						return nil, notFoundFor("run")
					}
					return m.WatchRun(ctx, s, id, after)
				}}
			},
		},
		{
			name: "foreign CancelRun cancels the run", check: "foreign-run-is-unknown", want: "changed after CancelRun by another tenant",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, cancel: func(ctx context.Context, s interop.Subject, id, reason string) (interop.Run, error) {
					if foreign(ctx, m, s, id) {
						_, _ = m.CancelRun(ctx, ownerOf(id), id, reason)
					}
					return m.CancelRun(ctx, s, id, reason)
				}}
			},
		},
		{
			name: "foreign ResolveInterrupt resolves it", check: "foreign-run-is-unknown", want: "changed after ResolveInterrupt by another tenant",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					if foreign(ctx, m, s, req.RunID) {
						_, _ = m.ResolveInterrupt(ctx, ownerOf(req.RunID), req)
					}
					return m.ResolveInterrupt(ctx, s, req)
				}}
			},
		},
		{
			name: "contextId filter crosses tenants", check: "foreign-run-is-unknown", want: "ListRuns(owner's contextId) by another tenant",
			alsoFails: []string{"list-order-and-filters"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
					p, err := m.ListRuns(ctx, s, q)
					if err != nil || q.ContextID == "" {
						return p, err
					}
					for _, other := range []interop.Subject{alice(), carol()} {
						if other.Tenant == s.Tenant {
							continue
						}
						theirs, err := m.ListRuns(ctx, other, interop.ListRunsQuery{ContextID: q.ContextID})
						if err != nil {
							return p, err
						}
						p.Runs = append(p.Runs, theirs.Runs...)
						p.Total += theirs.Total
					}
					return p, nil
				}}
			},
		},
		// idempotent-create
		{
			name: "key checked and set in two steps", check: "idempotent-create", want: "concurrent CreateRun",
			wrap: racyKeys,
		},
		{
			name: "key scoped per tenant, not per principal", check: "idempotent-create", want: "returned acme:alice's run",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
					if req.IdempotencyKey != "" {
						// one principal per tenant holds every key
						s.Principal = "interoptest-shared"
					}
					return m.CreateRun(ctx, s, req)
				}}
			},
		},
		{
			name: "refused create takes the key", check: "idempotent-create", want: "a key only a refused call used",
			alsoFails: []string{"refuse-invalid-inputs"},
			wrap: func(m *memstore.Store) *brokenStore {
				var mu sync.Mutex
				burned := map[string]error{}
				return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
					k := s.Tenant + "|" + s.Principal + "|" + req.IdempotencyKey
					mu.Lock()
					defer mu.Unlock()
					if err, ok := burned[k]; ok {
						return interop.Run{}, false, err
					}
					r, created, err := m.CreateRun(ctx, s, req)
					if err != nil && req.IdempotencyKey != "" {
						burned[k] = err
					}
					return r, created, err
				}}
			},
		},
		// list-order-and-filters
		{
			name: "oldest first", check: "list-order-and-filters", want: "ListRuns order",
			alsoFails: []string{"list-cursor-stability"},
			wrap: func(m *memstore.Store) *brokenStore {
				return pageHook(m, func(_ interop.ListRunsQuery, p *interop.RunPage) { slices.Reverse(p.Runs) })
			},
		},
		{
			name: "ties broken by ascending id", check: "list-order-and-filters", want: "ListRuns order",
			alsoFails: []string{"list-cursor-stability"},
			opts:      []memstore.Option{memstore.WithClock(frozenClock())},
			wrap: func(m *memstore.Store) *brokenStore {
				return pageHook(m, func(_ interop.ListRunsQuery, p *interop.RunPage) {
					slices.SortStableFunc(p.Runs, func(x, y interop.Run) int {
						if c := y.StatusAt.Compare(x.StatusAt); c != 0 {
							return c
						}
						return strings.Compare(x.ID, y.ID)
					})
				})
			},
		},
		{
			name: "statusAfter exclusive", check: "list-order-and-filters", want: "statusAfter=middle run's status time (inclusive)",
			wrap: func(m *memstore.Store) *brokenStore {
				return pageHook(m, func(q interop.ListRunsQuery, p *interop.RunPage) {
					n := len(p.Runs)
					p.Runs = slices.DeleteFunc(p.Runs, func(r interop.Run) bool { return r.StatusAt.Equal(q.StatusAfter) })
					p.Total -= n - len(p.Runs)
				})
			},
		},
		{
			name: "statuses filter ignored", check: "list-order-and-filters", want: "statuses=[waiting-approval]",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
					q.Statuses = nil
					return m.ListRuns(ctx, s, q)
				}}
			},
		},
		{
			name: "workflow filter ignored", check: "list-order-and-filters", want: "workflow=Approval",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
					q.WorkflowID = ""
					return m.ListRuns(ctx, s, q)
				}}
			},
		},
		{
			name: "Total counts only the page", check: "list-order-and-filters", want: "Total = 2, want 5",
			alsoFails: []string{"list-cursor-stability"},
			wrap: func(m *memstore.Store) *brokenStore {
				return pageHook(m, func(_ interop.ListRunsQuery, p *interop.RunPage) { p.Total = len(p.Runs) })
			},
		},
		{
			name: "page size ignored", check: "list-order-and-filters", want: "ListRuns(pageSize=2) =",
			alsoFails: []string{"list-cursor-stability"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
					q.PageSize = memstore.MaxPageSize
					return m.ListRuns(ctx, s, q)
				}}
			},
		},
		// list-cursor-stability
		{
			name: "offset cursor", check: "list-cursor-stability", want: "paging while 3 runs were added",
			wrap: offsetCursor,
		},
		{
			name: "cursor repeats the previous page's last run", check: "list-cursor-stability", want: "paging by 2 visited",
			wrap: func(m *memstore.Store) *brokenStore {
				var mu sync.Mutex
				last := map[string]interop.Run{}
				return pageHook(m, func(q interop.ListRunsQuery, p *interop.RunPage) {
					mu.Lock()
					defer mu.Unlock()
					if r, ok := last[q.Cursor]; ok && len(p.Runs) > 0 {
						p.Runs = append([]interop.Run{r}, p.Runs[:len(p.Runs)-1]...)
					}
					if p.NextCursor != "" {
						last[p.NextCursor] = p.Runs[len(p.Runs)-1]
					}
				})
			},
		},
		{
			name: "cursor skips a run", check: "list-cursor-stability", want: "paging by 2 visited",
			wrap: func(m *memstore.Store) *brokenStore {
				return pageHook(m, func(q interop.ListRunsQuery, p *interop.RunPage) {
					if q.Cursor != "" && len(p.Runs) > 0 {
						p.Runs = p.Runs[1:]
					}
				})
			},
		},
		{
			name: "unknown cursor restarts the listing", check: "list-cursor-stability", want: "with a made-up cursor succeeded",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, list: func(ctx context.Context, s interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
					p, err := m.ListRuns(ctx, s, q)
					if errors.Is(err, interop.ErrInvalidInput) && q.Cursor != "" {
						q.Cursor = ""
						return m.ListRuns(ctx, s, q)
					}
					return p, err
				}}
			},
		},
		{
			name: "cursor not bound to its tenant", check: "list-cursor-stability", want: "another tenant's cursor succeeded",
			wrap: unboundCursor,
		},
		// cancel
		{
			name: "cancel of a terminal run appends an event", check: "cancel", want: "changed after CancelRun of a cancelled run",
			wrap: func(m *memstore.Store) *brokenStore {
				var bump sequenceBump
				return &brokenStore{
					Store: m,
					get: func(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
						return bump.apply(m.GetRun(ctx, s, id))
					},
					cancel: func(ctx context.Context, s interop.Subject, id, reason string) (interop.Run, error) {
						r, err := m.CancelRun(ctx, s, id, reason)
						if errors.Is(err, interop.ErrRunTerminal) {
							bump.add(id)
						}
						return bump.apply(r, err)
					},
				}
			},
		},
		{
			name: "cancel of a terminal run succeeds", check: "cancel", want: "CancelRun of a cancelled run succeeded",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, cancel: func(ctx context.Context, s interop.Subject, id, reason string) (interop.Run, error) {
					r, err := m.CancelRun(ctx, s, id, reason)
					if errors.Is(err, interop.ErrRunTerminal) {
						return m.GetRun(ctx, s, id)
					}
					return r, err
				}}
			},
		},
		{
			name: "cancel answers the run as it was", check: "cancel", want: `CancelRun returned the run at "running"`,
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, cancel: func(ctx context.Context, s interop.Subject, id, reason string) (interop.Run, error) {
					before, err := m.GetRun(ctx, s, id)
					if err != nil {
						return before, err
					}
					if _, err := m.CancelRun(ctx, s, id, reason); err != nil {
						return interop.Run{}, err
					}
					return before, nil
				}}
			},
		},
		{
			name: "cancel reason dropped", check: "cancel", want: "CancelReason",
			alsoFails: []string{"event-documents"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, cancel: func(ctx context.Context, s interop.Subject, id, _ string) (interop.Run, error) {
					return m.CancelRun(ctx, s, id, "")
				}}
			},
		},
		// resolve-at-most-once
		{
			name: "a racing resolve also succeeds", check: "resolve-at-most-once", want: "2 of 16 concurrent ResolveInterrupt calls",
			wrap: func(m *memstore.Store) *brokenStore {
				var granted atomic.Bool
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					r, err := m.ResolveInterrupt(ctx, s, req)
					if errors.Is(err, interop.ErrAlreadyResolved) && granted.CompareAndSwap(false, true) {
						return m.GetRun(ctx, s, req.RunID)
					}
					return r, err
				}}
			},
		},
		{
			name: "resolution logged twice", check: "resolve-at-most-once", want: "log holds 2 interrupt.resolved events",
			alsoFails: []string{"event-documents"},
			wrap:      duplicatedResolution,
		},
		{
			name: "late resolve of a finished run is ErrRunTerminal", check: "resolve-at-most-once", want: "ErrAlreadyResolved",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					r, err := m.ResolveInterrupt(ctx, s, req)
					if errors.Is(err, interop.ErrAlreadyResolved) {
						if cur, gerr := m.GetRun(ctx, s, req.RunID); gerr == nil && cur.Status.Terminal() {
							return r, fmt.Errorf("memstore: resolve: %w", interop.ErrRunTerminal)
						}
					}
					return r, err
				}}
			},
		},
		// resolve-eligibility
		{
			name: "approvers list ignored", check: "resolve-eligibility", want: "want ErrNotEligible",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					r, err := m.ResolveInterrupt(ctx, s, req)
					if errors.Is(err, interop.ErrNotEligible) {
						return m.ResolveInterrupt(ctx, alice(), req)
					}
					return r, err
				}}
			},
		},
		// watch
		{
			name: "watch drops interrupt.resolved", check: "watch", want: "want consecutive sequences",
			alsoFails: []string{"resolve-at-most-once", "event-documents"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
					seq, err := m.WatchRun(ctx, s, id, after)
					if err != nil {
						return seq, err
					}
					return mapEvents(seq, func(ev interop.RunEvent, err error, yield func(interop.RunEvent, error) bool) bool {
						if err == nil && ev.Type == interop.EventInterruptResolved {
							return true
						}
						return yield(ev, err)
					}), nil
				}}
			},
		},
		{
			name: "watch swaps the first two events", check: "watch", want: "want run.started",
			alsoFails: []string{"event-documents"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
					seq, err := m.WatchRun(ctx, s, id, after)
					if err != nil {
						return seq, err
					}
					var held *interop.RunEvent
					return mapEvents(seq, func(ev interop.RunEvent, err error, yield func(interop.RunEvent, error) bool) bool {
						if err == nil && ev.Sequence == 0 {
							held = &ev
							return true
						}
						if !yield(ev, err) {
							return false
						}
						if held != nil {
							first := *held
							held = nil
							return yield(first, nil)
						}
						return true
					}), nil
				}}
			},
		},
		{
			name: "watch resumes from the start", check: "watch", want: "want the tail",
			alsoFails: []string{"audit-events"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, _ int64) (iter.Seq2[interop.RunEvent, error], error) {
					return m.WatchRun(ctx, s, id, -1)
				}}
			},
		},
		{
			name: "watch stays open after the terminal event", check: "watch", want: "right after the terminal event did not happen",
			alsoFails: []string{"cancel", "resolve-at-most-once", "event-documents"},
			timeout:   500 * time.Millisecond,
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
					seq, err := m.WatchRun(ctx, s, id, after)
					if err != nil {
						return seq, err
					}
					return func(yield func(interop.RunEvent, error) bool) {
						for ev, err := range seq {
							if !yield(ev, err) || err != nil {
								return
							}
						}
						<-ctx.Done()
						yield(interop.RunEvent{}, ctx.Err())
					}, nil
				}}
			},
		},
		{
			name: "watch ignores its context", check: "watch", want: "the end of the watch after its context was cancelled did not happen",
			timeout: 500 * time.Millisecond,
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
					return m.WatchRun(context.WithoutCancel(ctx), s, id, after)
				}}
			},
		},
		{
			name: "watch ends silently on cancellation", check: "watch", want: "want the context's error",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, watch: func(ctx context.Context, s interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
					seq, err := m.WatchRun(ctx, s, id, after)
					if err != nil {
						return seq, err
					}
					return mapEvents(seq, func(ev interop.RunEvent, err error, yield func(interop.RunEvent, error) bool) bool {
						if errors.Is(err, context.Canceled) {
							return false
						}
						return yield(ev, err)
					}), nil
				}}
			},
		},
		// refuse-unknown-workflow
		{
			name: "unknown workflow leaves a run behind", check: "refuse-unknown-workflow", want: "left a run behind",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
					r, created, err := m.CreateRun(ctx, s, req)
					if errors.Is(err, interop.ErrNotFound) {
						stub := req
						stub.WorkflowID, stub.Inputs, stub.IdempotencyKey = "conformance-noop", json.RawMessage(`{}`), ""
						_, _, _ = m.CreateRun(ctx, s, stub)
					}
					return r, created, err
				}}
			},
		},
		{
			name: "unknown workflow is invalid input", check: "refuse-unknown-workflow", want: "want ErrNotFound",
			alsoFails: []string{"idempotent-create"},
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
					r, created, err := m.CreateRun(ctx, s, req)
					if errors.Is(err, interop.ErrNotFound) {
						return r, created, &interop.InputError{Field: "workflowId", Reason: "unknown workflow"}
					}
					return r, created, err
				}}
			},
		},
		// refuse-invalid-inputs
		{
			name: "invalid inputs leave a run behind", check: "refuse-invalid-inputs", want: "left a run behind",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
					r, created, err := m.CreateRun(ctx, s, req)
					if errors.Is(err, interop.ErrInvalidInput) {
						stub := req
						stub.Inputs, stub.IdempotencyKey = json.RawMessage(`{"delayMs":0}`), ""
						_, _, _ = m.CreateRun(ctx, s, stub)
					}
					return r, created, err
				}}
			},
		},
		{
			name: "invalid inputs accepted", check: "refuse-invalid-inputs", want: "want ErrInvalidInput",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, create: func(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
					r, created, err := m.CreateRun(ctx, s, req)
					if errors.Is(err, interop.ErrInvalidInput) {
						req.Inputs = json.RawMessage(`{"delayMs":0}`)
						return m.CreateRun(ctx, s, req)
					}
					return r, created, err
				}}
			},
		},
		// refuse-bad-resolution
		{
			name: "refused resolution still logs the input", check: "refuse-bad-resolution", want: "changed after ResolveInterrupt with a resume value naming no offered action",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					r, err := m.ResolveInterrupt(ctx, s, req)
					if errors.Is(err, interop.ErrInvalidInput) {
						_ = m.AppendRunEvent(ctx, req.RunID, interop.RunEvent{Type: "interoptest.input-received", Payload: json.RawMessage(`{}`)})
					}
					return r, err
				}}
			},
		},
		{
			name: "unknown action taken as accept", check: "refuse-bad-resolution", want: "want interop: invalid input",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					r, err := m.ResolveInterrupt(ctx, s, req)
					if errors.Is(err, interop.ErrInvalidInput) {
						req.Value = json.RawMessage(`{"action":"accept"}`)
						return m.ResolveInterrupt(ctx, s, req)
					}
					return r, err
				}}
			},
		},
		{
			name: "unknown interrupt resolves the open one", check: "refuse-bad-resolution", want: "want interop: not found",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, resolve: func(ctx context.Context, s interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
					r, err := m.ResolveInterrupt(ctx, s, req)
					if errors.Is(err, interop.ErrNotFound) {
						if cur, gerr := m.GetRun(ctx, s, req.RunID); gerr == nil {
							if in, ok := cur.OpenInterrupt(); ok {
								req.InterruptID = in.ID
								return m.ResolveInterrupt(ctx, s, req)
							}
						}
					}
					return r, err
				}}
			},
		},
		// audit-events
		{
			name: "audit events accepted but never logged", check: "audit-events", want: "one more event",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, appendRun: func(context.Context, string, interop.RunEvent) error { return nil }}
			},
		},
		{
			name: "an audit event on a finished run is dropped silently", check: "audit-events", want: "want ErrRunTerminal",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, appendRun: func(ctx context.Context, runID string, ev interop.RunEvent) error {
					if err := m.AppendRunEvent(ctx, runID, ev); !errors.Is(err, interop.ErrRunTerminal) {
						return err
					}
					return nil
				}}
			},
		},
	}
}

// eventDocumentCases break the RunEventDoc contract one way each.
func eventDocumentCases() []brokenCase {
	return []brokenCase{
		{
			name: "unregistered lifecycle type", check: "event-documents", want: `"run.cancelling" is neither registered nor a vendor`,
			wrap: func(m *memstore.Store) *brokenStore {
				return editEvents(m, func(ev *interop.RunEvent) {
					if ev.Type == memstore.EventCancelRequested {
						ev.Type = "run.cancelling"
					}
				})
			},
		},
		{
			name: "event ids not minted", check: "event-documents", want: "eventId",
			alsoFails: []string{"audit-events"},
			wrap: func(m *memstore.Store) *brokenStore {
				return editEvents(m, func(ev *interop.RunEvent) { ev.EventID = "" })
			},
		},
		{
			name: "one event id reused", check: "event-documents", want: "was already used",
			wrap: func(m *memstore.Store) *brokenStore {
				return editEvents(m, func(ev *interop.RunEvent) {
					ev.EventID = "evt-" + strconv.FormatInt(ev.Sequence, 10) + "-same-for-every-run"
				})
			},
		},
		{
			name: "no schema version", check: "event-documents", want: "schemaVersion",
			alsoFails: []string{"audit-events"},
			wrap: func(m *memstore.Store) *brokenStore {
				return editEvents(m, func(ev *interop.RunEvent) { ev.SchemaVersion = 0 })
			},
		},
		{
			name: "run.started lacks workflowId", check: "event-documents", want: `lacks "workflowId"`,
			wrap: func(m *memstore.Store) *brokenStore {
				return editPayload(m, interop.EventRunStarted, func(p map[string]any) { delete(p, "workflowId") })
			},
		},
		{
			name: "run.started names the wrong transport", check: "event-documents", want: "transport",
			wrap: func(m *memstore.Store) *brokenStore {
				return editPayload(m, interop.EventRunStarted, func(p map[string]any) { p["transport"] = "rest" })
			},
		},
		{
			name: "run.completed without outputs", check: "event-documents", want: `lacks "outputs"`,
			wrap: func(m *memstore.Store) *brokenStore {
				return editPayload(m, interop.EventRunCompleted, func(p map[string]any) { delete(p, "outputs") })
			},
		},
		{
			name: "run.completed with an extra member", check: "event-documents", want: `member "output"`,
			wrap: func(m *memstore.Store) *brokenStore {
				return editPayload(m, interop.EventRunCompleted, func(p map[string]any) { p["output"] = p["outputs"] })
			},
		},
		{
			name: "node.suspended names another interrupt", check: "event-documents", want: "node.suspended names node",
			wrap: func(m *memstore.Store) *brokenStore {
				return editPayload(m, interop.EventNodeSuspended, func(p map[string]any) { p["interruptId"] = "acme/" + strings.Repeat("Q", 26) })
			},
		},
		{
			name: "run.cancelled drops the reason", check: "event-documents", want: "want run.cancelled with reason",
			alsoFails: []string{"cancel"},
			wrap: func(m *memstore.Store) *brokenStore {
				return editPayload(m, interop.EventRunCancelled, func(p map[string]any) { delete(p, "reason") })
			},
		},
		{
			name: "workspace host events leak to tenant-wide subscribers", check: "host-events", want: "tenant-wide subscriber of A received",
			wrap: func(m *memstore.Store) *brokenStore {
				// Workspace events kept tenant-wide: the isolation bug this
				// check exists for.
				return &brokenStore{Store: m, publishHost: func(ctx context.Context, tenant string, ev interop.HostEvent) error {
					ev.WorkspaceID = ""
					return m.PublishHostEvent(ctx, tenant, ev)
				}}
			},
		},
		{
			name: "host events cross tenants", check: "host-events", want: "tenant-wide subscriber of B received",
			wrap: func(m *memstore.Store) *brokenStore {
				return &brokenStore{Store: m, feed: func(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[interop.HostEvent] {
					if tenant == "globex" {
						tenant = "acme"
					}
					return m.SubscribeHostEvents(ctx, tenant, workspace, lastEventID)
				}}
			},
		},
		{
			name: "ephemeral host events replayed", check: "host-events", want: "resuming after",
			wrap: func(m *memstore.Store) *brokenStore {
				var mu sync.Mutex
				var ephemeral []interop.HostEvent
				return &brokenStore{Store: m, feed: func(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[interop.HostEvent] {
					live := m.SubscribeHostEvents(ctx, tenant, workspace, lastEventID)
					return func(yield func(interop.HostEvent) bool) {
						if lastEventID != "" {
							mu.Lock()
							replay := slices.Clone(ephemeral)
							mu.Unlock()
							for _, ev := range replay {
								if !yield(ev) {
									return
								}
							}
						}
						for ev := range live {
							if ev.Delivery == interop.DeliveryEphemeral {
								mu.Lock()
								ephemeral = append(ephemeral, ev)
								mu.Unlock()
							}
							if !yield(ev) {
								return
							}
						}
					}
				}}
			},
		},
	}
}

// TestBrokenStores proves that every check fails against a store breaking
// its guarantee, for the stated reason, while the checks not concerned
// still pass.
func TestBrokenStores(t *testing.T) {
	caught := map[string]bool{}
	cases := append(brokenCases(), eventDocumentCases()...)
	for _, bc := range cases {
		caught[bc.check] = true
	}
	for _, c := range interoptest.Checks() {
		if !caught[c.Name] {
			t.Errorf("no broken store proves check %q can fail", c.Name)
		}
	}
	for _, bc := range cases {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			h := memHarness(bc.opts...)
			checks := interoptest.Checks()
			// The checks of one case run concurrently, each on its own
			// store: most of their time is waiting, and -parallel is only
			// GOMAXPROCS.
			stores := make([]interop.RunStore, len(checks))
			for i := range checks {
				stores[i] = bc.wrap(newMemstore(t, bc.opts...))
			}
			errs := make([]error, len(checks))
			var wg sync.WaitGroup
			for i, c := range checks {
				// A short bound only where a check is expected to wait for
				// something that never comes; the others keep the default
				// so a slow machine does not fail them.
				timeout := interoptest.DefaultTimeout
				if bc.timeout > 0 && (c.Name == bc.check || slices.Contains(bc.alsoFails, c.Name)) {
					timeout = bc.timeout
				}
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(t.Context(), timeout)
					defer cancel()
					errs[i] = c.Run(ctx, stores[i], h)
				})
			}
			wg.Wait()
			for i, c := range checks {
				err := errs[i]
				switch {
				case c.Name == bc.check:
					if err == nil {
						t.Errorf("%s passed against a store where %s", c.Name, bc.name)
					} else if !strings.Contains(err.Error(), bc.want) {
						t.Errorf("%s failed for another reason than expected:\n got: %v\nwant: …%s…", c.Name, err, bc.want)
					}
				case slices.Contains(bc.alsoFails, c.Name):
					if err == nil {
						t.Errorf("%s was expected to fail too, but passed", c.Name)
					}
				default:
					if err != nil {
						t.Errorf("%s should be unaffected by this break, but failed: %v", c.Name, err)
					}
				}
			}
		})
	}
}
