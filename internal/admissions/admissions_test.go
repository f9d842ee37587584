package admissions

import (
	"slices"
	"sync"
	"testing"
)

type rec struct{ tags []string }

func newRegistry() *Registry[rec] {
	return New(func(r rec) rec { r.tags = slices.Clone(r.tags); return r })
}

func TestRecordsAreCopies(t *testing.T) {
	r := newRegistry()
	in := rec{tags: []string{"a"}}
	r.Put("x", in)
	in.tags[0] = "changed by the host"
	got, _ := r.Get("x")
	got.tags[0] = "changed by a caller"
	again, _ := r.Get("x")
	if again.tags[0] != "a" {
		t.Fatalf("stored record changed to %q", again.tags[0])
	}
}

func TestAddPutDelete(t *testing.T) {
	r := newRegistry()
	if !r.Add("x", rec{tags: []string{"1"}}) || r.Add("x", rec{tags: []string{"2"}}) {
		t.Fatal("Add must store a new alias and refuse a taken one")
	}
	if got, _ := r.Get("x"); got.tags[0] != "1" {
		t.Fatalf("a refused Add replaced the record: %v", got)
	}
	r.Put("x", rec{tags: []string{"3"}})
	if got, _ := r.Get("x"); got.tags[0] != "3" {
		t.Fatalf("Put did not replace: %v", got)
	}
	if !r.Delete("x") || r.Delete("x") {
		t.Fatal("Delete must report whether there was a record")
	}
	if _, ok := r.Get("x"); ok {
		t.Fatal("a deleted alias is still found")
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				r.Put("x", rec{tags: []string{string(rune('a' + i))}})
				r.Get("x")
				r.Delete("x")
			}
		})
	}
	wg.Wait()
}
