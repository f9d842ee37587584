package pushtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/push"
)

// Lease durations the checks use: long enough never to expire during a
// check, and short enough to wait out.
const (
	longTTL  = time.Minute
	shortTTL = 500 * time.Millisecond
)

// delivery returns a delivery of lane (task, config) with a body naming it.
func delivery(task, config string, seq int64) push.Delivery {
	id := unique("dl")
	return push.Delivery{
		ID: id, TaskID: task, ConfigID: config, Sequence: seq,
		Body: fmt.Appendf(nil, `{"statusUpdate":{"taskId":%q,"n":%d}}`, task, seq),
	}
}

// diffDelivery describes how got differs from want, "" when it does not.
func diffDelivery(want, got push.Delivery) string {
	switch {
	case got.ID != want.ID || got.TaskID != want.TaskID || got.ConfigID != want.ConfigID:
		return fmt.Sprintf("delivery %s of (%s, %s), want %s of (%s, %s)", got.ID, got.TaskID, got.ConfigID, want.ID, want.TaskID, want.ConfigID)
	case got.Sequence != want.Sequence || got.Final != want.Final:
		return fmt.Sprintf("%s: Sequence %d Final %t, want %d %t", want.ID, got.Sequence, got.Final, want.Sequence, want.Final)
	case want.Body == nil && got.Body != nil:
		return fmt.Sprintf("%s: a nil Body came back as %q, not nil", want.ID, got.Body)
	case !bytes.Equal(got.Body, want.Body):
		return fmt.Sprintf("%s: Body %q, want %q", want.ID, got.Body, want.Body)
	}
	return ""
}

// putAll puts ds in order, alternating the handles.
func putAll(ctx context.Context, k *kit, ds ...push.Delivery) error {
	for i, d := range ds {
		if err := k.outbox[i%2].Put(ctx, d); err != nil {
			return fmt.Errorf("Put(%s): %w", d.ID, err)
		}
	}
	return nil
}

// lease leases through o and wraps a failure.
func lease(ctx context.Context, o push.Outbox, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
	got, err := o.Lease(ctx, owner, max, ttl)
	if err != nil {
		return nil, fmt.Errorf("Lease(%s): %w", owner, err)
	}
	return got, nil
}

// leaseIDs leases and expects exactly the deliveries want, in order.
func leaseIDs(ctx context.Context, o push.Outbox, owner string, max int, ttl time.Duration, when string, want ...push.Delivery) error {
	got, err := lease(ctx, o, owner, max, ttl)
	if err != nil {
		return err
	}
	if !slices.Equal(deliveryIDs(got), deliveryIDs(want)) {
		return fmt.Errorf("%s: Lease(%s, %d) = %v, want %v", when, owner, max, deliveryIDs(got), deliveryIDs(want))
	}
	return nil
}

func remove(ctx context.Context, o push.Outbox, ds ...push.Delivery) error {
	for _, d := range ds {
		if err := o.Remove(ctx, d.ID); err != nil {
			return fmt.Errorf("Remove(%s): %w", d.ID, err)
		}
	}
	return nil
}

func checkOutboxPutLeaseRemove(ctx context.Context, k *kit) error {
	t1, t2, t3 := taskID(), taskID(), taskID()
	a := delivery(t1, "c", 7)
	fin := delivery(t2, "c", 9)
	fin.Body, fin.Final = nil, true
	if err := putAll(ctx, k, a, fin); err != nil {
		return err
	}
	x, y := unique("owner"), unique("owner")
	got, err := lease(ctx, k.outbox[1], x, 10, longTTL)
	if err != nil {
		return err
	}
	if len(got) != 2 {
		return fmt.Errorf("Lease = %v, want [%s %s]", deliveryIDs(got), a.ID, fin.ID)
	}
	for i, want := range []push.Delivery{a, fin} {
		if d := diffDelivery(want, got[i]); d != "" {
			return fmt.Errorf("Lease returned another delivery than Put: %s", d)
		}
	}
	if err := leaseIDs(ctx, k.outbox[0], x, 10, longTTL, "the owner leasing again while it holds both"); err != nil {
		return err
	}
	c := delivery(t3, "c", 1)
	if err := putAll(ctx, k, c); err != nil {
		return err
	}
	for _, max := range []int{0, -1} {
		if err := leaseIDs(ctx, k.outbox[1], y, max, longTTL, "max < 1"); err != nil {
			return err
		}
	}
	if err := remove(ctx, k.outbox[0], a, fin); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[1], y, 10, longTTL, "after removing the leased deliveries", c); err != nil {
		return err
	}
	if err := remove(ctx, k.outbox[1], c); err != nil {
		return err
	}
	return leaseIDs(ctx, k.outbox[0], unique("owner"), 10, longTTL, "after removing everything")
}

func checkOutboxPutIdempotent(ctx context.Context, k *kit) error {
	task := taskID()
	d1, d2 := delivery(task, "c", 1), delivery(task, "c", 2)
	if err := putAll(ctx, k, d1, d2); err != nil {
		return err
	}
	again := d1
	again.Body, again.Final, again.Sequence = []byte(`{"changed":true}`), true, 3
	if err := k.outbox[1].Put(ctx, again); err != nil {
		return fmt.Errorf("Put of a held id: %w", err)
	}
	x, y := unique("owner"), unique("owner")
	got, err := lease(ctx, k.outbox[0], x, 10, longTTL)
	if err != nil {
		return err
	}
	if len(got) != 1 {
		return fmt.Errorf("after putting d1 again, Lease = %v, want only the head d1 %s", deliveryIDs(got), d1.ID)
	}
	if d := diffDelivery(d1, got[0]); d != "" {
		return fmt.Errorf("Put of a held id changed it: %s", d)
	}
	if err := k.outbox[0].Put(ctx, again); err != nil {
		return fmt.Errorf("Put of a leased id: %w", err)
	}
	if err := leaseIDs(ctx, k.outbox[1], y, 10, longTTL, "after putting the leased d1 again"); err != nil {
		return err
	}
	if err := remove(ctx, k.outbox[0], d1); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[1], y, 10, longTTL, "after removing d1 (put three times)", d2); err != nil {
		return err
	}
	if err := remove(ctx, k.outbox[1], d2); err != nil {
		return err
	}
	return leaseIDs(ctx, k.outbox[0], y, 10, longTTL, "after removing d1 and d2")
}

func checkOutboxLaneOrder(ctx context.Context, k *kit) error {
	t, u := taskID(), taskID()
	a1, a2, a3 := delivery(t, "A", 1), delivery(t, "A", 2), delivery(t, "A", 3)
	b1, b2 := delivery(t, "B", 1), delivery(t, "B", 2)
	u1 := delivery(u, "A", 1)
	all := []push.Delivery{a1, b1, a2, u1, b2, a3}
	if err := putAll(ctx, k, all...); err != nil {
		return err
	}
	x, y := unique("owner"), unique("owner")
	if err := leaseIDs(ctx, k.outbox[0], x, 1, longTTL, "the oldest head first", a1); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[0], x, 10, longTTL, "the other lane heads, oldest first", b1, u1); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[1], y, 10, longTTL, "while every head is leased"); err != nil {
		return err
	}
	if err := remove(ctx, k.outbox[0], a1); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[1], y, 10, longTTL, "after the head of (t, A) was removed", a2); err != nil {
		return err
	}
	// Drain the rest with both owners in turn: each lane in Put order.
	left := map[string][]string{}
	for _, d := range all {
		if d.ID != a1.ID {
			left[d.TaskID+"/"+d.ConfigID] = append(left[d.TaskID+"/"+d.ConfigID], d.ID)
		}
	}
	held := map[string]push.Delivery{a2.ID: a2, b1.ID: b1, u1.ID: u1}
	owners := []string{x, y}
	for turn := 0; len(left) > 0; turn++ {
		if turn > 50 {
			return fmt.Errorf("lanes %v never drained", left)
		}
		for _, d := range held {
			lane := d.TaskID + "/" + d.ConfigID
			if left[lane][0] != d.ID {
				return fmt.Errorf("%s was leased before %s of its lane", d.ID, left[lane][0])
			}
			if left[lane] = left[lane][1:]; len(left[lane]) == 0 {
				delete(left, lane)
			}
			if err := remove(ctx, k.outbox[turn%2], d); err != nil {
				return err
			}
		}
		got, err := lease(ctx, k.outbox[turn%2], owners[turn%2], 10, longTTL)
		if err != nil {
			return err
		}
		clear(held)
		for _, d := range got {
			held[d.ID] = d
		}
	}
	return nil
}

func checkOutboxNoDoubleLease(ctx context.Context, k *kit) error {
	const lanes, perLane, owners = 10, 20, 8
	task := taskID()
	var order [][]push.Delivery
	for l := range lanes {
		var ds []push.Delivery
		for i := range perLane {
			ds = append(ds, delivery(task, fmt.Sprint("lane", l), int64(i)))
		}
		order = append(order, ds)
	}
	for i := range perLane {
		for l := range lanes {
			if err := k.outbox[(i+l)%2].Put(ctx, order[l][i]); err != nil {
				return fmt.Errorf("Put: %w", err)
			}
		}
	}
	var (
		mu       sync.Mutex
		next     = map[string]int{} // per lane: the index the next lease must have
		inFlight = map[string]string{}
		leased   = map[string]int{}
		done     int
		fail     error
	)
	index := map[string]int{}
	for _, ds := range order {
		for i, d := range ds {
			index[d.ID] = i
		}
	}
	failf := func(format string, args ...any) {
		if fail == nil {
			fail = fmt.Errorf(format, args...)
		}
	}
	var wg sync.WaitGroup
	for w := range owners {
		wg.Go(func() {
			o, owner := k.outbox[w%2], unique("owner")
			for {
				mu.Lock()
				finished := done == lanes*perLane || fail != nil
				mu.Unlock()
				if finished || ctx.Err() != nil {
					return
				}
				got, err := o.Lease(ctx, owner, 3, longTTL)
				if err != nil {
					mu.Lock()
					failf("Lease: %w", err)
					mu.Unlock()
					return
				}
				if len(got) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				for _, d := range got {
					leased[d.ID]++
					lane := d.ConfigID
					if other, busy := inFlight[lane]; busy {
						failf("%s and %s of one lane were leased at once", other, d.ID)
					}
					if i := index[d.ID]; i != next[lane] {
						failf("delivery %d of %s was leased while %d was due", i, lane, next[lane])
					}
					if leased[d.ID] > 1 {
						failf("%s was leased twice", d.ID)
					}
					inFlight[lane] = d.ID
				}
				mu.Unlock()
				for _, d := range got {
					time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
					mu.Lock()
					delete(inFlight, d.ConfigID)
					next[d.ConfigID]++
					done++
					mu.Unlock()
					if err := o.Remove(ctx, d.ID); err != nil {
						mu.Lock()
						failf("Remove: %w", err)
						mu.Unlock()
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if fail != nil {
		return fail
	}
	if done != lanes*perLane {
		return fmt.Errorf("%d of %d deliveries were leased before the check ran out of time: %w", done, lanes*perLane, ctx.Err())
	}
	return nil
}

func checkOutboxTakeover(ctx context.Context, k *kit) error {
	d := delivery(taskID(), "c", 1)
	if err := putAll(ctx, k, d); err != nil {
		return err
	}
	x, y := unique("owner"), unique("owner")
	start := time.Now()
	if err := leaseIDs(ctx, k.outbox[0], x, 10, shortTTL, "the first lease", d); err != nil {
		return err
	}
	got, err := lease(ctx, k.outbox[1], y, 10, longTTL)
	if err != nil {
		return err
	}
	if len(got) == 0 {
		err = waitFor(ctx, "another owner to take over the expired lease", 25*time.Millisecond, func() (bool, error) {
			got, err = lease(ctx, k.outbox[1], y, 10, longTTL)
			return len(got) > 0, err
		})
		if err != nil {
			return err
		}
	}
	if took := time.Since(start); took < shortTTL {
		return fmt.Errorf("leased again %v into a lease of %v", took, shortTTL)
	}
	if len(got) != 1 || diffDelivery(d, got[0]) != "" {
		return fmt.Errorf("taken over: %v, want exactly %s as Put", deliveryIDs(got), d.ID)
	}
	lost, err := k.outbox[0].Renew(ctx, x, []string{d.ID}, longTTL)
	if err != nil {
		return fmt.Errorf("Renew: %w", err)
	}
	if !slices.Equal(lost, []string{d.ID}) {
		return fmt.Errorf("Renew by the owner whose lease was taken over reported %v lost, want [%s]", lost, d.ID)
	}
	if err := k.outbox[0].Release(ctx, x, d.ID); err != nil {
		return fmt.Errorf("Release by the former owner: %w", err)
	}
	if err := leaseIDs(ctx, k.outbox[0], unique("owner"), 10, longTTL, "after the former owner released what it no longer holds"); err != nil {
		return err
	}
	return remove(ctx, k.outbox[1], d)
}

func checkOutboxRenew(ctx context.Context, k *kit) error {
	d := delivery(taskID(), "c", 1)
	if err := putAll(ctx, k, d); err != nil {
		return err
	}
	x, y := unique("owner"), unique("owner")
	if err := leaseIDs(ctx, k.outbox[0], x, 10, shortTTL, "the first lease", d); err != nil {
		return err
	}
	renewed := time.Now()
	for end := time.Now().Add(3 * shortTTL); time.Now().Before(end); {
		if err := sleep(ctx, shortTTL/4); err != nil {
			return err
		}
		lost, err := k.outbox[1].Renew(ctx, x, []string{d.ID}, shortTTL)
		if err != nil {
			return fmt.Errorf("Renew: %w", err)
		}
		if len(lost) > 0 {
			return fmt.Errorf("Renew of a live lease %v after the last renewal reported %v lost", time.Since(renewed), lost)
		}
		renewed = time.Now()
		if err := leaseIDs(ctx, k.outbox[0], y, 10, longTTL, "while the lease is renewed"); err != nil {
			return err
		}
	}
	err := waitFor(ctx, "the lease to expire once no longer renewed", 25*time.Millisecond, func() (bool, error) {
		got, err := lease(ctx, k.outbox[1], y, 10, longTTL)
		return len(got) > 0, err
	})
	if err != nil {
		return err
	}
	never := unique("dl")
	lost, err := k.outbox[0].Renew(ctx, x, []string{d.ID, never}, longTTL)
	if err != nil {
		return fmt.Errorf("Renew: %w", err)
	}
	slices.Sort(lost)
	want := []string{d.ID, never}
	slices.Sort(want)
	if !slices.Equal(lost, want) {
		return fmt.Errorf("Renew of a lease taken over and of an id never leased reported %v lost, want both", lost)
	}
	return remove(ctx, k.outbox[0], d)
}

func checkOutboxRelease(ctx context.Context, k *kit) error {
	task := taskID()
	d1, d2 := delivery(task, "c", 1), delivery(task, "c", 2)
	if err := putAll(ctx, k, d1, d2); err != nil {
		return err
	}
	x, y := unique("owner"), unique("owner")
	if err := leaseIDs(ctx, k.outbox[0], x, 10, longTTL, "the first lease", d1); err != nil {
		return err
	}
	if err := k.outbox[1].Release(ctx, x, d1.ID); err != nil {
		return fmt.Errorf("Release: %w", err)
	}
	if err := leaseIDs(ctx, k.outbox[0], y, 10, longTTL, "right after the Release", d1); err != nil {
		return err
	}
	if err := k.outbox[1].Release(ctx, x, d1.ID); err != nil {
		return fmt.Errorf("Release by an owner that no longer holds the lease: %w", err)
	}
	if err := k.outbox[0].Release(ctx, x, unique("dl")); err != nil {
		return fmt.Errorf("Release of an unknown id: %w", err)
	}
	if err := leaseIDs(ctx, k.outbox[1], unique("owner"), 10, longTTL, "after a Release by an owner that does not hold the lease"); err != nil {
		return err
	}
	if err := remove(ctx, k.outbox[0], d1); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[1], x, 10, longTTL, "after removing the head", d2); err != nil {
		return err
	}
	return remove(ctx, k.outbox[1], d2)
}

func checkOutboxCrash(ctx context.Context, k *kit) error {
	const lanes, perLane = 3, 4
	task := taskID()
	var all []push.Delivery
	for i := range perLane {
		for l := range lanes {
			all = append(all, delivery(task, fmt.Sprint("lane", l), int64(i)))
		}
	}
	if err := putAll(ctx, k, all...); err != nil {
		return err
	}
	dead := unique("owner")
	crashed, err := lease(ctx, k.outbox[0], dead, 10, shortTTL)
	if err != nil {
		return err
	}
	if len(crashed) != lanes {
		return fmt.Errorf("Lease = %v, want the %d lane heads", deliveryIDs(crashed), lanes)
	}
	// The owner dies: it never renews nor removes. Another owner drains
	// everything, each lane in order, the dead owner's deliveries too.
	want := map[string][]string{}
	for _, d := range all {
		want[d.ConfigID] = append(want[d.ConfigID], d.ID)
	}
	got := map[string][]string{}
	y := unique("owner")
	n := 0
	err = waitFor(ctx, "every delivery of the dead owner's lanes", 25*time.Millisecond, func() (bool, error) {
		ds, err := lease(ctx, k.outbox[1], y, 10, longTTL)
		if err != nil {
			return false, err
		}
		for _, d := range ds {
			got[d.ConfigID] = append(got[d.ConfigID], d.ID)
			n++
		}
		return n >= len(all), remove(ctx, k.outbox[1], ds...)
	})
	if err != nil {
		return fmt.Errorf("%w (delivered %d of %d)", err, n, len(all))
	}
	for lane, ids := range want {
		if !slices.Equal(got[lane], ids) {
			return fmt.Errorf("%s drained as %v, want %v", lane, got[lane], ids)
		}
	}
	if n != len(all) {
		return fmt.Errorf("%d deliveries drained, want %d", n, len(all))
	}
	// The dead owner comes back and removes what it had leased: nothing
	// left to forget, and no error.
	return remove(ctx, k.outbox[0], crashed...)
}

func checkOutboxRemove(ctx context.Context, k *kit) error {
	if err := k.outbox[0].Remove(ctx, unique("dl")); err != nil {
		return fmt.Errorf("Remove of an unknown id: %w", err)
	}
	task := taskID()
	r1, r2, r3, r4 := delivery(task, "c", 1), delivery(task, "c", 2), delivery(task, "c", 3), delivery(task, "c", 4)
	if err := putAll(ctx, k, r1, r2, r3, r4); err != nil {
		return err
	}
	x, y := unique("owner"), unique("owner")
	if err := leaseIDs(ctx, k.outbox[0], x, 10, longTTL, "the first lease", r1); err != nil {
		return err
	}
	// A queued delivery, then a head another owner holds.
	if err := remove(ctx, k.outbox[1], r3, r1); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[1], y, 10, longTTL, "after removing r3 (queued) and r1 (x's head)", r2); err != nil {
		return err
	}
	if err := remove(ctx, k.outbox[0], r2); err != nil {
		return err
	}
	if err := leaseIDs(ctx, k.outbox[0], y, 10, longTTL, "after removing r2", r4); err != nil {
		return err
	}
	for range 2 {
		if err := remove(ctx, k.outbox[1], r4, r1); err != nil {
			return fmt.Errorf("removing again: %w", err)
		}
	}
	if err := leaseIDs(ctx, k.outbox[0], unique("owner"), 10, longTTL, "after removing everything"); err != nil {
		return err
	}
	if err := errors.Join(k.outbox[0].Remove(ctx, r3.ID), k.outbox[1].Remove(ctx, r3.ID)); err != nil {
		return fmt.Errorf("Remove of a removed id: %w", err)
	}
	return nil
}
