package push

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMemoryOutboxKeepsNothingOfFinishedDeliveries: once its deliveries
// are leased, renewed, released and removed, a MemoryOutbox holds nothing
// of them — no lane, no lease, no heap entry that would keep a body alive
// until its lease would have expired. (Its contract is checked by the kit
// in push/pushtest.)
func TestMemoryOutboxKeepsNothingOfFinishedDeliveries(t *testing.T) {
	ctx := context.Background()
	o := NewMemoryOutbox()
	const lanes, each = 8, 125
	for i := range each {
		for l := range lanes {
			d := Delivery{ID: fmt.Sprint(l, "-", i), TaskID: "acme/T", ConfigID: fmt.Sprint("c", l), Sequence: int64(i), Body: make([]byte, 1024)}
			if err := o.Put(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	for done := 0; done < lanes*each; {
		got, err := o.Lease(ctx, "w", 3, time.Hour)
		if err != nil || len(got) == 0 {
			t.Fatalf("Lease = %d deliveries, %v, with %d of %d done", len(got), err, done, lanes*each)
		}
		ids := make([]string, len(got))
		for i, d := range got {
			ids[i] = d.ID
		}
		if lost, err := o.Renew(ctx, "w", ids, time.Hour); err != nil || len(lost) > 0 {
			t.Fatalf("Renew: lost %v, %v", lost, err)
		}
		if len(ids) > 1 { // give one back, to be leased again
			if err := o.Release(ctx, "w", ids[0]); err != nil {
				t.Fatal(err)
			}
			ids = ids[1:]
		}
		for _, id := range ids {
			if err := o.Remove(ctx, id); err != nil {
				t.Fatal(err)
			}
			done++
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.byID) != 0 || len(o.lanes) != 0 || len(o.expiry) != 0 {
		t.Fatalf("after every delivery was removed: %d deliveries, %d lanes, %d leases held", len(o.byID), len(o.lanes), len(o.expiry))
	}
	if len(o.free) > lanes {
		t.Fatalf("%d free-lane entries left for %d lanes", len(o.free), lanes)
	}
}
