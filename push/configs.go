package push

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// ErrConfigNotFound reports a config id that is not registered on the
// task. It wraps interop.ErrNotFound: a config of another task answers
// exactly like one that never existed (OpenWOP RFC 0214 §E).
var ErrConfigNotFound = fmt.Errorf("push: config %w", interop.ErrNotFound)

// ErrTooManyConfigs reports a registration beyond the per-task limit.
var ErrTooManyConfigs = errors.New("push: too many configs on the task")

// Record is a push config as the library keeps it. It never holds a
// secret, only the vault reference to one (OpenWOP RFC 0214 §A).
type Record struct {
	// TaskID is the task's bound run id; ID the config id, unique per task.
	TaskID string
	ID     string
	// URL is the destination as registered.
	URL string
	// Scheme is authentication.scheme; it is not a secret.
	Scheme string
	// SecretRef is the vault reference of the config's Secret, "" when it
	// has none or it was discarded.
	SecretRef string
	// Subject registered the config; the run is watched under it.
	Subject interop.Subject
	// Tenant and Workspace own the task: dead letters are host events of
	// them.
	Tenant    string
	Workspace string
	// ContextID is the task's contextId, carried by every push body.
	ContextID string
	// After is the watermark: events with a greater sequence are pushed to
	// this config; the watcher raises it as it queues events (Advance).
	After int64
	// Done is set once the final push was attempted (or the run could no
	// longer be followed); nothing more is delivered.
	Done bool
	// Created is when the config was registered (or last replaced).
	Created time.Time
}

// ConfigStore keeps push config records. The in-memory default is
// [MemoryConfigs]; a multi-replica host implements it over its database,
// and checks it with the kit in package push/pushtest. Implementations
// must be safe for concurrent use, across replicas too, and return
// copies.
type ConfigStore interface {
	// Put stores rec, replacing the record with the same TaskID and ID in
	// its place and returning it. Adding a record to a task that already
	// holds max records is ErrTooManyConfigs and stores nothing; max < 1
	// is no limit. The limit holds under concurrent Puts from every
	// replica (one transaction, or a lock on the task).
	Put(ctx context.Context, rec Record, max int) (old Record, replaced bool, err error)
	// Get returns one record, or ErrConfigNotFound.
	Get(ctx context.Context, taskID, id string) (Record, error)
	// List returns a task's records in registration order (none: empty).
	List(ctx context.Context, taskID string) ([]Record, error)
	// Delete removes a record and returns it; deleted is false when there
	// was none.
	Delete(ctx context.Context, taskID, id string) (old Record, deleted bool, err error)
	// Finish marks a record done and clears its SecretRef, provided the
	// record still holds secretRef (a concurrent replacement keeps its
	// own). An absent record is not an error.
	Finish(ctx context.Context, taskID, id, secretRef string) error
	// Advance raises the watermark (After) of every record of the task to
	// seq where it is lower.
	Advance(ctx context.Context, taskID string, seq int64) error
	// Live returns every record that is not done, for resuming the
	// watchers when delivery starts and, on every replica, once per
	// Options.WatchRescan, to follow the tasks other replicas registered.
	Live(ctx context.Context) ([]Record, error)
}

// MemoryConfigs is the in-memory [ConfigStore].
type MemoryConfigs struct {
	mu    sync.Mutex
	tasks map[string][]Record // registration order per task
}

// NewMemoryConfigs returns an empty store.
func NewMemoryConfigs() *MemoryConfigs { return &MemoryConfigs{tasks: map[string][]Record{}} }

func indexOf(recs []Record, id string) int {
	return slices.IndexFunc(recs, func(r Record) bool { return r.ID == id })
}

// Put implements [ConfigStore].
func (m *MemoryConfigs) Put(_ context.Context, rec Record, max int) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.tasks[rec.TaskID]
	rec.Subject = rec.Subject.Clone()
	if i := indexOf(recs, rec.ID); i >= 0 {
		old := recs[i]
		recs[i] = rec
		return old, true, nil
	}
	if max > 0 && len(recs) >= max {
		return Record{}, false, ErrTooManyConfigs
	}
	m.tasks[rec.TaskID] = append(recs, rec)
	return Record{}, false, nil
}

// Get implements [ConfigStore].
func (m *MemoryConfigs) Get(_ context.Context, taskID, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.tasks[taskID]
	if i := indexOf(recs, id); i >= 0 {
		r := recs[i]
		r.Subject = r.Subject.Clone()
		return r, nil
	}
	return Record{}, ErrConfigNotFound
}

// List implements [ConfigStore].
func (m *MemoryConfigs) List(_ context.Context, taskID string) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.tasks[taskID])
	for i := range out {
		out[i].Subject = out[i].Subject.Clone()
	}
	return out, nil
}

// Delete implements [ConfigStore].
func (m *MemoryConfigs) Delete(_ context.Context, taskID, id string) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.tasks[taskID]
	i := indexOf(recs, id)
	if i < 0 {
		return Record{}, false, nil
	}
	old := recs[i]
	recs = slices.Delete(recs, i, i+1)
	if len(recs) == 0 {
		delete(m.tasks, taskID)
	} else {
		m.tasks[taskID] = recs
	}
	return old, true, nil
}

// Finish implements [ConfigStore].
func (m *MemoryConfigs) Finish(_ context.Context, taskID, id, secretRef string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.tasks[taskID]
	if i := indexOf(recs, id); i >= 0 && recs[i].SecretRef == secretRef {
		recs[i].Done = true
		recs[i].SecretRef = ""
	}
	return nil
}

// Advance implements [ConfigStore].
func (m *MemoryConfigs) Advance(_ context.Context, taskID string, seq int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.tasks[taskID] {
		if r.After < seq {
			m.tasks[taskID][i].After = seq
		}
	}
	return nil
}

// Live implements [ConfigStore].
func (m *MemoryConfigs) Live(_ context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, recs := range m.tasks {
		for _, r := range recs {
			if !r.Done {
				r.Subject = r.Subject.Clone()
				out = append(out, r)
			}
		}
	}
	return out, nil
}
