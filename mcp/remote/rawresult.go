package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A host that hands a workflow what a server answered (OpenWOP RFC 0204:
// ctx.mcp.callTool and listTools resolve with the server's result) needs
// the result as the server sent it: go-sdk decodes it into typed results
// that drop what they do not model (a result's _meta keys, fields of a
// later revision) and the tap zeroes a list's ttlMs. The session's
// transport, the last point before the network, copies the JSON-RPC
// result of every response into the request context's resultSlot.

// resultSlot receives the JSON-RPC results of the requests sent under one
// context, exactly as received; the last one wins, so a call's slot holds
// its final result after its input rounds. One is put in the context of
// each exchange whose result is returned raw.
type resultSlot struct {
	mu  sync.Mutex
	raw json.RawMessage
}

type resultSlotKey struct{}

// withResultSlot returns ctx carrying a new slot, and the slot.
func withResultSlot(ctx context.Context) (context.Context, *resultSlot) {
	s := &resultSlot{}
	return context.WithValue(ctx, resultSlotKey{}, s), s
}

func resultSlotFrom(ctx context.Context) *resultSlot {
	s, _ := ctx.Value(resultSlotKey{}).(*resultSlot)
	return s
}

// take keeps the result of msg, a JSON-RPC message as received, when it is
// a response carrying one (an error response, a request or a notification
// of the server is not a result).
func (s *resultSlot) take(msg []byte) {
	if s == nil {
		return
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return
	}
	resp, ok := m.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = bytes.Clone(resp.Result)
}

// reset forgets what the slot holds, before a request whose result it
// is to hold.
func (s *resultSlot) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = nil
}

// get returns the last result taken, nil when none was.
func (s *resultSlot) get() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw
}

// sseResults feeds the slot the data of every event of an event stream as
// it is read (WHATWG HTML §Server-sent events: data lines joined by
// newlines, an event ended by a blank line). The stream is already bounded
// by MaxResultBytes, and so is what this keeps.
type sseResults struct {
	slot    *resultSlot
	pending []byte // the current, unfinished line
	data    []byte // the current event's data
	hasData bool
}

func (p *sseResults) Write(b []byte) (int, error) {
	p.pending = append(p.pending, b...)
	for {
		i := bytes.IndexByte(p.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.line(bytes.TrimSuffix(p.pending[:i], []byte("\r")))
		p.pending = p.pending[i+1:]
	}
}

func (p *sseResults) line(l []byte) {
	switch {
	case len(l) == 0:
		if p.hasData {
			p.slot.take(p.data)
		}
		p.data, p.hasData = p.data[:0], false
	case bytes.HasPrefix(l, []byte("data:")):
		v := bytes.TrimPrefix(l[len("data:"):], []byte(" "))
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		p.data, p.hasData = append(p.data, v...), true
	}
}

// teeStream copies what is read from r into the slot's event parser.
func teeStream(r io.Reader, slot *resultSlot) io.Reader {
	if slot == nil {
		return r
	}
	return io.TeeReader(r, &sseResults{slot: slot})
}
