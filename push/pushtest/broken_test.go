package pushtest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/push"
	"github.com/wopinterop/wopinterop/push/pushtest"
)

// brokenConfigs decorates a MemoryConfigs; each hook that is set replaces
// one method, to break one guarantee.
type brokenConfigs struct {
	*push.MemoryConfigs
	put     func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error)
	get     func(ctx context.Context, taskID, id string) (push.Record, error)
	delete  func(ctx context.Context, taskID, id string) (push.Record, bool, error)
	finish  func(ctx context.Context, taskID, id, secretRef string) error
	advance func(ctx context.Context, taskID string, seq int64) error
	live    func(ctx context.Context) ([]push.Record, error)
}

func (b *brokenConfigs) Put(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
	if b.put != nil {
		return b.put(ctx, rec, max)
	}
	return b.MemoryConfigs.Put(ctx, rec, max)
}

func (b *brokenConfigs) Get(ctx context.Context, taskID, id string) (push.Record, error) {
	if b.get != nil {
		return b.get(ctx, taskID, id)
	}
	return b.MemoryConfigs.Get(ctx, taskID, id)
}

func (b *brokenConfigs) Delete(ctx context.Context, taskID, id string) (push.Record, bool, error) {
	if b.delete != nil {
		return b.delete(ctx, taskID, id)
	}
	return b.MemoryConfigs.Delete(ctx, taskID, id)
}

func (b *brokenConfigs) Finish(ctx context.Context, taskID, id, secretRef string) error {
	if b.finish != nil {
		return b.finish(ctx, taskID, id, secretRef)
	}
	return b.MemoryConfigs.Finish(ctx, taskID, id, secretRef)
}

func (b *brokenConfigs) Advance(ctx context.Context, taskID string, seq int64) error {
	if b.advance != nil {
		return b.advance(ctx, taskID, seq)
	}
	return b.MemoryConfigs.Advance(ctx, taskID, seq)
}

func (b *brokenConfigs) Live(ctx context.Context) ([]push.Record, error) {
	if b.live != nil {
		return b.live(ctx)
	}
	return b.MemoryConfigs.Live(ctx)
}

// brokenVault decorates a MemoryVault.
type brokenVault struct {
	*push.MemoryVault
	seal    func(ctx context.Context, s push.Secret) (string, error)
	open    func(ctx context.Context, ref string) (push.Secret, error)
	discard func(ctx context.Context, ref string) error
}

func (b *brokenVault) Seal(ctx context.Context, s push.Secret) (string, error) {
	if b.seal != nil {
		return b.seal(ctx, s)
	}
	return b.MemoryVault.Seal(ctx, s)
}

func (b *brokenVault) Open(ctx context.Context, ref string) (push.Secret, error) {
	if b.open != nil {
		return b.open(ctx, ref)
	}
	return b.MemoryVault.Open(ctx, ref)
}

func (b *brokenVault) Discard(ctx context.Context, ref string) error {
	if b.discard != nil {
		return b.discard(ctx, ref)
	}
	return b.MemoryVault.Discard(ctx, ref)
}

// mapVault is a vault over a plain map, for breaks a MemoryVault cannot
// be decorated into.
type mapVault struct {
	mu      sync.Mutex
	secrets map[string]push.Secret
	next    int
	ref     func(v *mapVault) string // mints the next ref; v.mu is held
	// cow makes Seal copy the map and swap it in, reading and writing
	// under separate locks: concurrent seals lose each other's secrets.
	cow bool
}

func (v *mapVault) Seal(_ context.Context, s push.Secret) (string, error) {
	v.mu.Lock()
	ref := v.ref(v)
	if !v.cow {
		v.secrets[ref] = s
		v.mu.Unlock()
		return ref, nil
	}
	m := maps.Clone(v.secrets)
	v.mu.Unlock()
	time.Sleep(50 * time.Microsecond) // the window between read and write
	m[ref] = s
	v.mu.Lock()
	v.secrets = m
	v.mu.Unlock()
	return ref, nil
}

func (v *mapVault) Open(_ context.Context, ref string) (push.Secret, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.secrets[ref]
	if !ok {
		return push.Secret{}, push.ErrSecretNotFound
	}
	return s, nil
}

func (v *mapVault) Discard(_ context.Context, ref string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.secrets, ref)
	return nil
}

// brokenOutbox decorates a MemoryOutbox. It tracks each lane's queue
// (for the breaks that need to know a lane's head) and the owner of each
// lease it handed out.
type brokenOutbox struct {
	*push.MemoryOutbox
	put     func(ctx context.Context, d push.Delivery) error
	lease   func(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error)
	renew   func(ctx context.Context, owner string, ids []string, ttl time.Duration) ([]string, error)
	release func(ctx context.Context, owner, id string) error
	remove  func(ctx context.Context, id string) error

	mu     sync.Mutex
	lanes  map[string][]string // lane → ids in Put order
	laneOf map[string]string
}

func newBrokenOutbox() *brokenOutbox {
	return &brokenOutbox{MemoryOutbox: push.NewMemoryOutbox(), lanes: map[string][]string{}, laneOf: map[string]string{}}
}

func (b *brokenOutbox) Put(ctx context.Context, d push.Delivery) error {
	b.mu.Lock()
	if _, held := b.laneOf[d.ID]; !held {
		lane := d.TaskID + "/" + d.ConfigID
		b.laneOf[d.ID] = lane
		b.lanes[lane] = append(b.lanes[lane], d.ID)
	}
	b.mu.Unlock()
	if b.put != nil {
		return b.put(ctx, d)
	}
	return b.MemoryOutbox.Put(ctx, d)
}

func (b *brokenOutbox) Lease(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
	if b.lease != nil {
		return b.lease(ctx, owner, max, ttl)
	}
	return b.MemoryOutbox.Lease(ctx, owner, max, ttl)
}

func (b *brokenOutbox) Renew(ctx context.Context, owner string, ids []string, ttl time.Duration) ([]string, error) {
	if b.renew != nil {
		return b.renew(ctx, owner, ids, ttl)
	}
	return b.MemoryOutbox.Renew(ctx, owner, ids, ttl)
}

func (b *brokenOutbox) Release(ctx context.Context, owner, id string) error {
	if b.release != nil {
		return b.release(ctx, owner, id)
	}
	return b.MemoryOutbox.Release(ctx, owner, id)
}

func (b *brokenOutbox) Remove(ctx context.Context, id string) error {
	if b.remove != nil {
		return b.remove(ctx, id)
	}
	return b.removeTracked(ctx, id)
}

// removeTracked removes id from the outbox and from the lane tracking.
func (b *brokenOutbox) removeTracked(ctx context.Context, id string) error {
	b.mu.Lock()
	if lane, ok := b.laneOf[id]; ok {
		delete(b.laneOf, id)
		b.lanes[lane] = slices.DeleteFunc(b.lanes[lane], func(s string) bool { return s == id })
	}
	b.mu.Unlock()
	return b.MemoryOutbox.Remove(ctx, id)
}

// isHead reports whether id is its lane's oldest delivery.
func (b *brokenOutbox) isHead(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.lanes[b.laneOf[id]]
	return len(q) > 0 && q[0] == id
}

// brokenCase is a store that breaks one guarantee and the check that must
// catch it.
type brokenCase struct {
	name string
	// check must fail with an error containing want.
	check, want string
	// alsoFails are the other checks the break trips; every other check
	// of the interface must still pass, so each break stays narrow.
	alsoFails []string
	configs   func() push.ConfigStore
	vault     func() push.Vault
	outbox    func() push.Outbox
}

func brokenCases() []brokenCase {
	return []brokenCase{
		// ConfigStore
		{
			name: "a negative watermark stored as 0", check: "configs-put-get-list", want: "After 0, want -1",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, put: func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
					rec.After = max64(rec.After, 0)
					return m.Put(ctx, rec, max)
				}}
			},
		},
		{
			name: "Get finds a config id of another task", check: "configs-unknown-is-not-found", want: "another task's config id",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, get: func(ctx context.Context, taskID, id string) (push.Record, error) {
					r, err := m.Get(ctx, taskID, id)
					if err == nil {
						return r, nil
					}
					live, _ := m.Live(ctx)
					for _, l := range live {
						if l.ID == id {
							return l, nil
						}
					}
					return r, err
				}}
			},
		},
		{
			name: "a replacement moves to the end", check: "configs-replace-keeps-order", want: "want [a b c]",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, put: func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
					old, deleted, err := m.Delete(ctx, rec.TaskID, rec.ID)
					if err != nil || !deleted {
						return m.Put(ctx, rec, max)
					}
					_, _, err = m.Put(ctx, rec, 0)
					return old, true, err
				}}
			},
		},
		{
			name: "max 0 refuses every config", check: "configs-limit", want: "max 0 means no limit",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, put: func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
					if max < 1 {
						return push.Record{}, false, push.ErrTooManyConfigs
					}
					return m.Put(ctx, rec, max)
				}}
			},
		},
		{
			name: "one config too many", check: "configs-limit", want: "a fourth config with max 3",
			alsoFails: []string{"configs-limit-under-concurrency"},
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, put: func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
					if max > 0 {
						max++
					}
					return m.Put(ctx, rec, max)
				}}
			},
		},
		{
			name: "the limit read and the insert are two steps", check: "configs-limit-under-concurrency", want: "concurrent Puts succeeded",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, put: func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
					recs, _ := m.List(ctx, rec.TaskID)
					if max > 0 && len(recs) >= max && !slices.ContainsFunc(recs, func(r push.Record) bool { return r.ID == rec.ID }) {
						return push.Record{}, false, push.ErrTooManyConfigs
					}
					time.Sleep(2 * time.Millisecond) // the window a slow database leaves
					return m.Put(ctx, rec, 0)
				}}
			},
		},
		{
			name: "Delete does not return the deleted record", check: "configs-delete", want: "Delete returned another record",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, delete: func(ctx context.Context, taskID, id string) (push.Record, bool, error) {
					_, deleted, err := m.Delete(ctx, taskID, id)
					return push.Record{TaskID: taskID, ID: id}, deleted, err
				}}
			},
		},
		{
			name: "Finish ignores the secretRef", check: "configs-finish", want: "changed the replacement",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, finish: func(ctx context.Context, taskID, id, _ string) error {
					r, err := m.Get(ctx, taskID, id)
					if err != nil {
						return nil
					}
					return m.Finish(ctx, taskID, id, r.SecretRef)
				}}
			},
		},
		{
			name: "Advance lowers watermarks", check: "configs-advance", want: "After 5, want 7",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				return &brokenConfigs{MemoryConfigs: m, advance: func(ctx context.Context, taskID string, seq int64) error {
					recs, _ := m.List(ctx, taskID)
					for _, r := range recs {
						r.After = seq
						if _, _, err := m.Put(ctx, r, 0); err != nil {
							return err
						}
					}
					return nil
				}}
			},
		},
		{
			name: "Live includes done configs", check: "configs-live", want: "no done config",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				var mu sync.Mutex
				tasks := map[string]bool{}
				return &brokenConfigs{MemoryConfigs: m,
					put: func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
						mu.Lock()
						tasks[rec.TaskID] = true
						mu.Unlock()
						return m.Put(ctx, rec, max)
					},
					live: func(ctx context.Context) ([]push.Record, error) {
						mu.Lock()
						defer mu.Unlock()
						var out []push.Record
						for task := range tasks {
							recs, _ := m.List(ctx, task)
							out = append(out, recs...)
						}
						return out, nil
					}}
			},
		},
		{
			name: "the store keeps the caller's Subject", check: "configs-copies", want: "the record given to Put",
			configs: func() push.ConfigStore {
				m := push.NewMemoryConfigs()
				var mu sync.Mutex
				shared := map[string]push.Record{}
				return &brokenConfigs{MemoryConfigs: m,
					put: func(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
						old, replaced, err := m.Put(ctx, rec, max)
						if err == nil {
							mu.Lock()
							shared[rec.TaskID+"/"+rec.ID] = rec
							mu.Unlock()
						}
						return old, replaced, err
					},
					get: func(ctx context.Context, taskID, id string) (push.Record, error) {
						r, err := m.Get(ctx, taskID, id)
						mu.Lock()
						defer mu.Unlock()
						if s, ok := shared[taskID+"/"+id]; ok && err == nil {
							r.Subject = s.Subject // the store's own slices
						}
						return r, err
					}}
			},
		},

		// Vault
		{
			name: "long secrets truncated", check: "vault-round-trip", want: "secret 4",
			vault: func() push.Vault {
				m := push.NewMemoryVault()
				cut := func(s string) string { return s[:min(len(s), 1024)] }
				return &brokenVault{MemoryVault: m, seal: func(ctx context.Context, s push.Secret) (string, error) {
					return m.Seal(ctx, push.Secret{Credentials: cut(s.Credentials), Token: cut(s.Token)})
				}}
			},
		},
		{
			name: "the empty ref opens an empty secret", check: "vault-unknown-ref", want: "the empty ref",
			vault: func() push.Vault {
				m := push.NewMemoryVault()
				return &brokenVault{MemoryVault: m, open: func(ctx context.Context, ref string) (push.Secret, error) {
					if ref == "" {
						return push.Secret{}, nil
					}
					return m.Open(ctx, ref)
				}}
			},
		},
		{
			name: "a repeated Discard fails", check: "vault-discard", want: "a repeated Discard",
			vault: func() push.Vault {
				m := push.NewMemoryVault()
				return &brokenVault{MemoryVault: m, discard: func(ctx context.Context, ref string) error {
					if _, err := m.Open(ctx, ref); err != nil && strings.HasPrefix(ref, "sec-") {
						return err
					}
					return m.Discard(ctx, ref)
				}}
			},
		},
		{
			name: "refs count up", check: "vault-refs-unguessable", want: "refs are guessable",
			vault: func() push.Vault {
				return &mapVault{secrets: map[string]push.Secret{}, ref: func(v *mapVault) string {
					v.next++
					return fmt.Sprintf("sec-%016d", v.next)
				}}
			},
		},
		{
			name: "concurrent seals lose each other", check: "vault-concurrent", want: "secret not found",
			vault: func() push.Vault {
				var n atomic.Uint64
				return &mapVault{cow: true, secrets: map[string]push.Secret{}, ref: func(*mapVault) string {
					return fmt.Sprintf("sec-%x-%016x", time.Now().UnixNano(), n.Add(1)*0x9e3779b97f4a7c15)
				}}
			},
		},

		// Outbox
		{
			name: "a nil body comes back empty", check: "outbox-put-lease-remove", want: "a nil Body came back",
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.lease = func(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
					got, err := b.MemoryOutbox.Lease(ctx, owner, max, ttl)
					for i := range got {
						if got[i].Body == nil {
							got[i].Body = []byte{}
						}
					}
					return got, err
				}
				return b
			},
		},
		{
			name: "Put of a held id replaces it", check: "outbox-put-is-idempotent", want: "Put of a held id changed it",
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.put = func(ctx context.Context, d push.Delivery) error {
					if err := b.MemoryOutbox.Remove(ctx, d.ID); err != nil {
						return err
					}
					return b.MemoryOutbox.Put(ctx, d)
				}
				return b
			},
		},
		{
			name: "newest heads first", check: "outbox-lane-order", want: "the oldest head first",
			alsoFails: []string{"outbox-put-lease-remove"},
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.lease = func(ctx context.Context, owner string, n int, ttl time.Duration) ([]push.Delivery, error) {
					got, err := b.MemoryOutbox.Lease(ctx, owner, 1<<20, ttl)
					if err != nil {
						return nil, err
					}
					slices.Reverse(got)
					n = min(max(n, 0), len(got))
					for _, d := range got[n:] {
						if err := b.MemoryOutbox.Release(ctx, owner, d.ID); err != nil {
							return nil, err
						}
					}
					return got[:n], nil
				}
				return b
			},
		},
		{
			name: "every delivery its own lane", check: "outbox-lane-order", want: "the other lane heads",
			alsoFails: []string{"outbox-put-is-idempotent", "outbox-no-double-lease", "outbox-release", "outbox-crash-at-least-once", "outbox-remove-idempotent"},
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.put = func(ctx context.Context, d push.Delivery) error {
					d.ConfigID += "#" + d.ID
					return b.MemoryOutbox.Put(ctx, d)
				}
				b.lease = func(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
					got, err := b.MemoryOutbox.Lease(ctx, owner, max, ttl)
					for i := range got {
						got[i].ConfigID, _, _ = strings.Cut(got[i].ConfigID, "#")
					}
					return got, err
				}
				return b
			},
		},
		{
			name: "a lease is not recorded when another Lease runs", check: "outbox-no-double-lease", want: "leased",
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				// A Lease that began while this one ran overwrote its
				// marks: what it found stays free for others to lease.
				var started atomic.Int64
				b.lease = func(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
					mine := started.Add(1)
					got, err := b.MemoryOutbox.Lease(ctx, owner, max, ttl)
					time.Sleep(200 * time.Microsecond) // the window between reading heads and marking them
					if started.Load() != mine {
						for _, d := range got {
							_ = b.MemoryOutbox.Release(ctx, owner, d.ID)
						}
					}
					return got, err
				}
				return b
			},
		},
		{
			name: "leases never expire", check: "outbox-expiry-takeover", want: "take over the expired lease",
			alsoFails: []string{"outbox-renew", "outbox-crash-at-least-once"},
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				const forever = 100 * 365 * 24 * time.Hour
				b.lease = func(ctx context.Context, owner string, max int, _ time.Duration) ([]push.Delivery, error) {
					return b.MemoryOutbox.Lease(ctx, owner, max, forever)
				}
				b.renew = func(ctx context.Context, owner string, ids []string, _ time.Duration) ([]string, error) {
					return b.MemoryOutbox.Renew(ctx, owner, ids, forever)
				}
				return b
			},
		},
		{
			name: "a lease shorter than a second is stored as no lease", check: "outbox-expiry-takeover", want: "leased again",
			alsoFails: []string{"outbox-renew"},
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.lease = func(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
					return b.MemoryOutbox.Lease(ctx, owner, max, ttl.Truncate(time.Second)+time.Nanosecond)
				}
				return b
			},
		},
		{
			name: "Renew reports correctly but does not extend", check: "outbox-renew", want: "while the lease is renewed",
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.renew = func(ctx context.Context, owner string, ids []string, _ time.Duration) ([]string, error) {
					return b.MemoryOutbox.Renew(ctx, owner, ids, time.Nanosecond)
				}
				return b
			},
		},
		{
			name: "Release does nothing", check: "outbox-release", want: "right after the Release",
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.release = func(context.Context, string, string) error { return nil }
				return b
			},
		},
		{
			name: "a taken-over delivery goes to the end of its lane", check: "outbox-crash-at-least-once", want: "drained as",
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				var mu sync.Mutex
				owners := map[string]string{} // the last owner each delivery was leased to, until released
				b.release = func(ctx context.Context, owner, id string) error {
					mu.Lock()
					delete(owners, id)
					mu.Unlock()
					return b.MemoryOutbox.Release(ctx, owner, id)
				}
				b.lease = func(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
					got, err := b.MemoryOutbox.Lease(ctx, owner, max, ttl)
					if err != nil {
						return nil, err
					}
					mu.Lock()
					defer mu.Unlock()
					kept := got[:0]
					for _, d := range got {
						prev := owners[d.ID]
						if prev == "" || prev == owner {
							owners[d.ID] = owner
							kept = append(kept, d)
							continue
						}
						// Taken over: queued again behind its lane.
						delete(owners, d.ID)
						if err := b.MemoryOutbox.Remove(ctx, d.ID); err != nil {
							return nil, err
						}
						if err := b.MemoryOutbox.Put(ctx, d); err != nil {
							return nil, err
						}
					}
					return kept, nil
				}
				return b
			},
		},
		{
			name: "only a lane's head can be removed", check: "outbox-remove-idempotent", want: "after removing r2",
			outbox: func() push.Outbox {
				b := newBrokenOutbox()
				b.remove = func(ctx context.Context, id string) error {
					if !b.isHead(id) {
						return nil
					}
					return b.removeTracked(ctx, id)
				}
				return b
			},
		},
	}
}

func max64(a, b int64) int64 { return max(a, b) }

// TestBrokenStores proves that every check fails against a store breaking
// its guarantee, for the stated reason, while the other checks of the
// interface still pass.
func TestBrokenStores(t *testing.T) {
	t.Parallel()
	caught := map[string]bool{}
	for _, bc := range brokenCases() {
		caught[bc.check] = true
	}
	for _, c := range pushtest.Checks() {
		if !caught[c.Name] {
			t.Errorf("no broken store proves check %q can fail", c.Name)
		}
	}
	for _, bc := range brokenCases() {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			var h pushtest.Harness
			switch {
			case bc.configs != nil:
				h.NewConfigs = func(testing.TB) push.ConfigStore { return bc.configs() }
			case bc.vault != nil:
				h.NewVault = func(testing.TB) push.Vault { return bc.vault() }
			case bc.outbox != nil:
				h.NewOutbox = func(testing.TB) push.Outbox { return bc.outbox() }
			}
			var checks []pushtest.Check
			for _, c := range pushtest.Checks() {
				if h.Builds(c.Of) {
					checks = append(checks, c)
				}
			}
			errs := make([]error, len(checks))
			var wg sync.WaitGroup
			for i, c := range checks {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
					defer cancel()
					errs[i] = c.Run(ctx, t, h)
				})
			}
			wg.Wait()
			for i, c := range checks {
				err := errs[i]
				switch {
				case errors.Is(err, pushtest.ErrMissingStore):
					t.Errorf("%s: %v", c.Name, err)
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
