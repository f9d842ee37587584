package pushtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/push"
)

// put stores rec, which must be new, through c.
func put(ctx context.Context, c push.ConfigStore, rec push.Record, max int) error {
	old, replaced, err := c.Put(ctx, rec, max)
	switch {
	case err != nil:
		return fmt.Errorf("Put(%s): %w", rec.ID, err)
	case replaced:
		return fmt.Errorf("Put of the new config %s reported it replaced %+v", rec.ID, old)
	}
	return nil
}

// listIDs lists the task's config ids through c.
func listIDs(ctx context.Context, c push.ConfigStore, task string) ([]string, error) {
	recs, err := c.List(ctx, task)
	if err != nil {
		return nil, fmt.Errorf("List: %w", err)
	}
	return ids(recs), nil
}

// get reads one record through c.
func get(ctx context.Context, c push.ConfigStore, task, id string) (push.Record, error) {
	rec, err := c.Get(ctx, task, id)
	if err != nil {
		return rec, fmt.Errorf("Get(%s): %w", id, err)
	}
	return rec, nil
}

func checkConfigsPutGetList(ctx context.Context, k *kit) error {
	task, other := taskID(), taskID()
	want := []push.Record{record(task, "c1"), record(task, "c2"), record(task, "c3")}
	want[1].Scheme, want[1].SecretRef, want[1].Subject.Actor, want[1].Subject.Scopes = "", "", nil, nil
	want[2].Done, want[2].After = true, -1
	for i, rec := range want {
		if err := put(ctx, k.configs[i%2], rec, 10); err != nil {
			return err
		}
	}
	if err := put(ctx, k.configs[0], record(other, "c2"), 10); err != nil {
		return err
	}
	for i, w := range want {
		got, err := get(ctx, k.configs[(i+1)%2], task, w.ID)
		if err != nil {
			return err
		}
		if d := diffRecord(w, got); d != "" {
			return fmt.Errorf("Get(%s) is not the record Put: %s", w.ID, d)
		}
	}
	for _, c := range k.configs {
		recs, err := c.List(ctx, task)
		if err != nil {
			return fmt.Errorf("List: %w", err)
		}
		if len(recs) != len(want) {
			return fmt.Errorf("List returned %v, want %v", ids(recs), ids(want))
		}
		for i := range want {
			if d := diffRecord(want[i], recs[i]); d != "" {
				return fmt.Errorf("List[%d] is not the record Put as %d: %s", i, i, d)
			}
		}
	}
	none, err := k.configs[1].List(ctx, taskID())
	if err != nil || len(none) != 0 {
		return fmt.Errorf("List of a task without configs = %v, %v; want none, nil", ids(none), err)
	}
	return nil
}

func checkConfigsUnknown(ctx context.Context, k *kit) error {
	task, other := taskID(), taskID()
	held := record(other, "theirs")
	if err := put(ctx, k.configs[0], held, 10); err != nil {
		return err
	}
	if err := put(ctx, k.configs[0], record(task, "mine"), 10); err != nil {
		return err
	}
	for _, probe := range []struct{ task, id, what string }{
		{task, "never-registered", "an id never registered"},
		{task, "theirs", "another task's config id"},
		{taskID(), "mine", "a task without configs"},
	} {
		_, err := k.configs[1].Get(ctx, probe.task, probe.id)
		if !errors.Is(err, push.ErrConfigNotFound) || !errors.Is(err, interop.ErrNotFound) {
			return fmt.Errorf("Get of %s = %v, want ErrConfigNotFound wrapping interop.ErrNotFound", probe.what, err)
		}
	}
	if old, deleted, err := k.configs[1].Delete(ctx, task, "theirs"); err != nil || deleted {
		return fmt.Errorf("Delete of another task's config id = %+v, %v, %v; want nothing deleted, nil", old, deleted, err)
	}
	if err := k.configs[1].Finish(ctx, task, "theirs", held.SecretRef); err != nil {
		return fmt.Errorf("Finish of an absent config: %w", err)
	}
	if err := k.configs[1].Advance(ctx, taskID(), 99); err != nil {
		return fmt.Errorf("Advance of a task without configs: %w", err)
	}
	got, err := get(ctx, k.configs[0], other, "theirs")
	if err != nil {
		return err
	}
	if d := diffRecord(held, got); d != "" {
		return fmt.Errorf("operations on another task changed its config: %s", d)
	}
	return nil
}

func checkConfigsReplace(ctx context.Context, k *kit) error {
	task := taskID()
	a, b, c := record(task, "a"), record(task, "b"), record(task, "c")
	for _, rec := range []push.Record{a, b, c} {
		if err := put(ctx, k.configs[0], rec, 3); err != nil {
			return err
		}
	}
	b2 := record(task, "b")
	b2.URL, b2.Scheme = "https://other.example.com/hook", ""
	old, replaced, err := k.configs[1].Put(ctx, b2, 3)
	if err != nil {
		return fmt.Errorf("Put replacing a config on a task at its limit: %w", err)
	}
	if !replaced {
		return errors.New("Put of a held id did not report a replacement")
	}
	if d := diffRecord(b, old); d != "" {
		return fmt.Errorf("Put returned another old record than the replaced one: %s", d)
	}
	got, err := listIDs(ctx, k.configs[0], task)
	if err != nil {
		return err
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		return fmt.Errorf("after replacing b, List = %v, want [a b c]", got)
	}
	now, err := get(ctx, k.configs[0], task, "b")
	if err != nil {
		return err
	}
	if d := diffRecord(b2, now); d != "" {
		return fmt.Errorf("Get after the replacement: %s", d)
	}
	return nil
}

func checkConfigsLimit(ctx context.Context, k *kit) error {
	task, other := taskID(), taskID()
	for i := range 3 {
		if err := put(ctx, k.configs[i%2], record(task, fmt.Sprint("c", i)), 3); err != nil {
			return err
		}
	}
	if _, _, err := k.configs[1].Put(ctx, record(task, "c3"), 3); !errors.Is(err, push.ErrTooManyConfigs) {
		return fmt.Errorf("a fourth config with max 3: %v, want ErrTooManyConfigs", err)
	}
	if _, err := k.configs[0].Get(ctx, task, "c3"); !errors.Is(err, push.ErrConfigNotFound) {
		return fmt.Errorf("the refused config was stored (Get: %v)", err)
	}
	if err := put(ctx, k.configs[0], record(other, "c0"), 3); err != nil {
		return fmt.Errorf("another task is limited by this one's configs: %w", err)
	}
	if _, deleted, err := k.configs[0].Delete(ctx, task, "c1"); err != nil || !deleted {
		return fmt.Errorf("Delete: %v, %v", deleted, err)
	}
	if err := put(ctx, k.configs[1], record(task, "c3"), 3); err != nil {
		return fmt.Errorf("the slot a deletion freed: %w", err)
	}
	got, err := listIDs(ctx, k.configs[0], task)
	if err != nil {
		return err
	}
	if !slices.Equal(got, []string{"c0", "c2", "c3"}) {
		return fmt.Errorf("List = %v, want [c0 c2 c3]", got)
	}
	unlimited := taskID()
	for i := range 20 {
		if err := put(ctx, k.configs[i%2], record(unlimited, fmt.Sprint("u", i)), 0); err != nil {
			return fmt.Errorf("max 0 means no limit: %w", err)
		}
	}
	return nil
}

func checkConfigsLimitConcurrent(ctx context.Context, k *kit) error {
	const max, writers, rounds = 4, 16, 5
	for range rounds {
		task := taskID()
		errs := make([]error, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range writers {
			wg.Go(func() {
				<-start
				_, _, errs[i] = k.configs[i%2].Put(ctx, record(task, fmt.Sprint("w", i)), max)
			})
		}
		close(start)
		wg.Wait()
		var stored []string
		for i, err := range errs {
			switch {
			case err == nil:
				stored = append(stored, fmt.Sprint("w", i))
			case !errors.Is(err, push.ErrTooManyConfigs):
				return fmt.Errorf("concurrent Put: %w", err)
			}
		}
		if len(stored) != max {
			return fmt.Errorf("%d of %d concurrent Puts succeeded with max %d", len(stored), writers, max)
		}
		got, err := listIDs(ctx, k.configs[0], task)
		if err != nil {
			return err
		}
		slices.Sort(got)
		slices.Sort(stored)
		if !slices.Equal(got, stored) {
			return fmt.Errorf("the task holds %v, but the Puts that succeeded were %v", got, stored)
		}
	}
	return nil
}

func checkConfigsDelete(ctx context.Context, k *kit) error {
	task := taskID()
	recs := []push.Record{record(task, "a"), record(task, "b"), record(task, "c")}
	for _, rec := range recs {
		if err := put(ctx, k.configs[0], rec, 10); err != nil {
			return err
		}
	}
	old, deleted, err := k.configs[1].Delete(ctx, task, "b")
	if err != nil || !deleted {
		return fmt.Errorf("Delete = %v, %v; want deleted", deleted, err)
	}
	if d := diffRecord(recs[1], old); d != "" {
		return fmt.Errorf("Delete returned another record than the deleted one (its SecretRef is what gets discarded): %s", d)
	}
	if _, err := k.configs[0].Get(ctx, task, "b"); !errors.Is(err, push.ErrConfigNotFound) {
		return fmt.Errorf("Get after Delete = %v, want ErrConfigNotFound", err)
	}
	got, err := listIDs(ctx, k.configs[0], task)
	if err != nil {
		return err
	}
	if !slices.Equal(got, []string{"a", "c"}) {
		return fmt.Errorf("List after deleting b = %v, want [a c]", got)
	}
	if old, deleted, err := k.configs[0].Delete(ctx, task, "b"); err != nil || deleted {
		return fmt.Errorf("a repeated Delete = %+v, %v, %v; want nothing deleted, nil", old, deleted, err)
	}
	return nil
}

func checkConfigsFinish(ctx context.Context, k *kit) error {
	task := taskID()
	rec, plain := record(task, "a"), record(task, "plain")
	plain.SecretRef = ""
	for _, r := range []push.Record{rec, plain} {
		if err := put(ctx, k.configs[0], r, 10); err != nil {
			return err
		}
	}
	// A replacement came in after the finishing delivery read the record:
	// finishing with the old reference must leave the new config alone.
	repl := record(task, "a")
	if _, _, err := k.configs[0].Put(ctx, repl, 10); err != nil {
		return fmt.Errorf("Put replacing: %w", err)
	}
	if err := k.configs[1].Finish(ctx, task, "a", rec.SecretRef); err != nil {
		return fmt.Errorf("Finish with a stale secretRef: %w", err)
	}
	got, err := get(ctx, k.configs[0], task, "a")
	if err != nil {
		return err
	}
	if d := diffRecord(repl, got); d != "" {
		return fmt.Errorf("Finish with the replaced config's secretRef changed the replacement: %s", d)
	}
	if err := k.configs[1].Finish(ctx, task, "a", repl.SecretRef); err != nil {
		return fmt.Errorf("Finish: %w", err)
	}
	want := repl
	want.Done, want.SecretRef = true, ""
	if got, err = get(ctx, k.configs[0], task, "a"); err != nil {
		return err
	}
	if d := diffRecord(want, got); d != "" {
		return fmt.Errorf("after Finish: %s", d)
	}
	if err := k.configs[0].Finish(ctx, task, "plain", ""); err != nil {
		return fmt.Errorf("Finish of a config without a secret: %w", err)
	}
	if got, err = get(ctx, k.configs[1], task, "plain"); err != nil {
		return err
	}
	if !got.Done {
		return errors.New("Finish with the empty secretRef of a config without a secret did not mark it done")
	}
	return nil
}

func checkConfigsAdvance(ctx context.Context, k *kit) error {
	task, other := taskID(), taskID()
	low, high, theirs := record(task, "low"), record(task, "high"), record(other, "theirs")
	low.After, high.After, theirs.After = 3, 10, 3
	for _, r := range []push.Record{low, high, theirs} {
		if err := put(ctx, k.configs[0], r, 10); err != nil {
			return err
		}
	}
	if err := k.configs[1].Advance(ctx, task, 7); err != nil {
		return fmt.Errorf("Advance: %w", err)
	}
	if err := k.configs[0].Advance(ctx, task, 5); err != nil {
		return fmt.Errorf("Advance: %w", err)
	}
	for _, w := range []struct {
		task, id string
		after    int64
	}{{task, "low", 7}, {task, "high", 10}, {other, "theirs", 3}} {
		got, err := get(ctx, k.configs[0], w.task, w.id)
		if err != nil {
			return err
		}
		if got.After != w.after {
			return fmt.Errorf("after Advance to 7 then 5: %s has After %d, want %d", w.id, got.After, w.after)
		}
	}
	return nil
}

func checkConfigsLive(ctx context.Context, k *kit) error {
	t1, t2 := taskID(), taskID()
	live := []push.Record{record(t1, "a"), record(t2, "b"), record(t2, "c")}
	done := record(t1, "done")
	done.Done = true
	finished := record(t2, "finished")
	for _, r := range append(slices.Clone(live), done, finished) {
		if err := put(ctx, k.configs[0], r, 10); err != nil {
			return err
		}
	}
	if err := k.configs[0].Finish(ctx, t2, "finished", finished.SecretRef); err != nil {
		return fmt.Errorf("Finish: %w", err)
	}
	got, err := k.configs[1].Live(ctx)
	if err != nil {
		return fmt.Errorf("Live: %w", err)
	}
	mine := map[string]push.Record{}
	for _, r := range got {
		if r.TaskID == t1 || r.TaskID == t2 {
			if _, dup := mine[r.TaskID+"/"+r.ID]; dup {
				return fmt.Errorf("Live returned %s of %s twice", r.ID, r.TaskID)
			}
			mine[r.TaskID+"/"+r.ID] = r
		}
	}
	for _, w := range live {
		r, ok := mine[w.TaskID+"/"+w.ID]
		if !ok {
			return fmt.Errorf("Live misses the live config %s", w.ID)
		}
		if d := diffRecord(w, r); d != "" {
			return fmt.Errorf("Live returned %s as: %s", w.ID, d)
		}
	}
	if len(mine) != len(live) {
		var extra []string
		for _, r := range mine {
			extra = append(extra, r.ID)
		}
		return fmt.Errorf("Live returned %v, want only the live %v (no done config)", extra, ids(live))
	}
	return nil
}

func checkConfigsCopies(ctx context.Context, k *kit) error {
	task := taskID()
	rec := record(task, "a")
	want := record(task, "a")
	want.SecretRef, want.ContextID, want.Created = rec.SecretRef, rec.ContextID, rec.Created
	if err := put(ctx, k.configs[0], rec, 10); err != nil {
		return err
	}
	scribble := func(r *push.Record) {
		if len(r.Subject.Scopes) > 0 {
			r.Subject.Scopes[0] = "scribbled"
		}
		if r.Subject.Actor != nil {
			r.Subject.Actor.Principal = "scribbled"
			if len(r.Subject.Actor.Scopes) > 0 {
				r.Subject.Actor.Scopes[0] = "scribbled"
			}
		}
	}
	scribble(&rec)
	check := func(after string) error {
		got, err := get(ctx, k.configs[0], task, "a")
		if err != nil {
			return err
		}
		if d := diffRecord(want, got); d != "" {
			return fmt.Errorf("changing the record %s changed the stored one: %s", after, d)
		}
		return nil
	}
	if err := check("given to Put"); err != nil {
		return err
	}
	got, err := k.configs[0].Get(ctx, task, "a")
	if err != nil {
		return fmt.Errorf("Get: %w", err)
	}
	scribble(&got)
	if err := check("returned by Get"); err != nil {
		return err
	}
	list, err := k.configs[0].List(ctx, task)
	if err != nil {
		return fmt.Errorf("List: %w", err)
	}
	for i := range list {
		scribble(&list[i])
	}
	if err := check("returned by List"); err != nil {
		return err
	}
	live, err := k.configs[0].Live(ctx)
	if err != nil {
		return fmt.Errorf("Live: %w", err)
	}
	for i := range live {
		if live[i].TaskID == task {
			scribble(&live[i])
		}
	}
	return check("returned by Live")
}
