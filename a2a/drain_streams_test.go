package a2a

import (
	"context"
	"iter"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// openStreams lists what add listed until remove unlists it; end cancels
// every listed watch once, and nothing is listed after it.
func TestOpenStreams(t *testing.T) {
	var o openStreams
	canceled := map[string]int{}
	link := func(name string) *streamLink {
		return &streamLink{cancel: func() { canceled[name]++ }}
	}
	a, b, c, d := link("a"), link("b"), link("c"), link("d")
	for _, l := range []*streamLink{a, b, c} {
		if !o.add(l) {
			t.Fatal("add refused before the drain")
		}
	}
	o.remove(b) // from the middle
	o.remove(c) // the head
	if canceled["b"] != 1 || canceled["c"] != 1 || canceled["a"] != 0 {
		t.Fatalf("after remove: canceled %v", canceled)
	}
	if o.head != a || a.prev != nil || a.next != nil {
		t.Fatal("after remove the list is not [a]")
	}
	if !o.add(c) {
		t.Fatal("add refused before the drain")
	}
	o.end()
	if canceled["a"] != 1 || canceled["c"] != 2 || canceled["b"] != 1 {
		t.Fatalf("after end: canceled %v", canceled)
	}
	if o.add(d) {
		t.Fatal("add listed a watch after the drain")
	}
	o.remove(a)
	o.remove(c)
	if o.head != nil {
		t.Fatal("a removed link is still listed")
	}
	if canceled["d"] != 0 {
		t.Fatalf("end canceled an unlisted watch: %v", canceled)
	}
}

// Drain ends every stream open on the server without an error event, and
// a stream that ended, before the drain or at it, is no longer listed.
func TestDrainEndsEveryOpenStream(t *testing.T) {
	env := newCoreEnv(t, coreStreaming)
	c := asCaller(coreTenantA, "alice")
	task := env.send(t, c, textMessage("m-1", "approve"))

	subscribe := func(ctx context.Context) iter.Seq2[wire.Event, error] {
		seq, err := opened(env.srv.subscribeToTask(ctx, c, &wire.SubscribeToTaskRequest{ID: task.ID}))
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	// One stream whose client goes away before the drain.
	gone, leave := context.WithCancel(coreCtx(t))
	ended := make(chan error, 4)
	drive := func(seq iter.Seq2[wire.Event, error]) {
		var err error
		for _, e := range seq {
			if e != nil {
				err = e
			}
		}
		ended <- err
	}
	go drive(subscribe(gone))
	leave()
	if err := <-ended; err != nil {
		t.Fatalf("the stream of a client that went away ended with %v", err)
	}
	for range 3 {
		go drive(subscribe(coreCtx(t)))
	}
	env.srv.Drain()
	for range 3 {
		select {
		case err := <-ended:
			if err != nil {
				t.Fatalf("a drained stream ended with %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a stream outlived the drain")
		}
	}
	env.srv.streams.mu.Lock()
	defer env.srv.streams.mu.Unlock()
	if env.srv.streams.head != nil {
		t.Fatal("an ended stream is still listed")
	}
}
