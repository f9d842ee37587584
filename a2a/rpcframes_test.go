package a2a

import (
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// A JSON-RPC stream encodes its first event in the request's buffers and
// gives them back once it is written: an open stream holds none of them
// while it waits, and the id its later events echo, which aliased the
// request body, is its own copy — whatever the next request writes into
// the buffers.
func TestRPCStreamGivesBackTheRequestBuffers(t *testing.T) {
	pool := &bufferPool{}
	b := pool.get(nil)
	b.body.WriteString(`{"jsonrpc":"2.0","id":"req-7","method":"SubscribeToTask"}`)
	body := b.body.Bytes()
	at := strings.Index(string(body), `"req-7"`)
	f := &rpcFrames{pool: pool, b: b, id: body[at : at+len(`"req-7"`)]}

	status := func(state wire.TaskState) wire.Event {
		return &wire.TaskStatusUpdateEvent{TaskID: "t-1", ContextID: "c-1", Status: wire.TaskStatus{State: state}}
	}
	frame, err := f.event(status(wire.TaskStateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(frame), `{"jsonrpc":"2.0","id":"req-7","result":{"statusUpdate":`) {
		t.Fatalf("first frame %s", frame)
	}
	if f.b == nil {
		t.Fatal("the request's buffers were let go before the first event was written")
	}
	f.written()
	if f.b != nil || f.ev != nil {
		t.Fatal("the stream still holds buffers after its first event was written")
	}

	// The pool hands the buffers to the next request.
	b.body.Reset()
	b.body.WriteString(strings.Repeat("x", len(body)))
	frame, err = f.event(status(wire.TaskStateCompleted))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(frame), `{"jsonrpc":"2.0","id":"req-7","result":{"statusUpdate":`) ||
		!strings.Contains(string(frame), `"TASK_STATE_COMPLETED"`) {
		t.Fatalf("later frame %s", frame)
	}
	f.written()
	if got := string(f.failure(internalError())); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"req-7","error":{"code":-32603`) {
		t.Fatalf("failure frame %s", got)
	}
}

// A stream that ends before its first event (a refusal) gives the
// request's buffers back when it ends, after answering from them.
func TestRPCStreamWithoutEventsGivesBackTheRequestBuffers(t *testing.T) {
	pool := &bufferPool{}
	f := &rpcFrames{pool: pool, b: pool.get(nil), id: []byte("3")}
	if got := string(f.failure(internalError())); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603`) {
		t.Fatalf("failure frame %s", got)
	}
	f.release()
	if f.b != nil {
		t.Fatal("the request's buffers were not given back")
	}
	f.release() // idempotent
}

// An HTTP+JSON stream gives the request's buffers back once its first
// event is written, and when it ends without one.
func TestRESTStreamGivesBackTheRequestBuffers(t *testing.T) {
	pool := &bufferPool{}
	st := &restStream{pool: pool, b: pool.get(nil)}
	frame, err := st.event(&wire.TaskStatusUpdateEvent{TaskID: "t-1", ContextID: "c-1", Status: wire.TaskStatus{State: wire.TaskStateWorking}})
	if err != nil || !strings.HasPrefix(string(frame), `{"statusUpdate":`) {
		t.Fatalf("frame %s, %v", frame, err)
	}
	if st.b == nil {
		t.Fatal("the request's buffers were let go before the first event was written")
	}
	st.written()
	if st.b != nil {
		t.Fatal("the stream still holds the request's buffers after its first event was written")
	}
	st.written() // every later event

	ended := &restStream{pool: pool, b: pool.get(nil)}
	ended.written() // serve's deferred call, no event written
	if ended.b != nil {
		t.Fatal("the request's buffers were not given back")
	}
}
