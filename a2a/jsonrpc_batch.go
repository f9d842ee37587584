package a2a

// JSON-RPC batches (JSON-RPC 2.0 §6): one authentication and version
// decision for the HTTP request, at most Options.MaxBatch requests,
// Options.BatchConcurrency of them at a time, answered in order.

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wopinterop/wopinterop/internal/jsonrpc"
)

// batchItem is one element of a batch on its way to its answer.
type batchItem struct {
	q rpcRequest
	// out is the element's response; nil for a notification, which has
	// none.
	out []byte
}

// serveBatch answers a JSON array of requests. A batch of more than
// Options.MaxBatch elements is refused whole before any of them runs. The
// others are decided first — refused, or notifications (not executed) —
// then the rest run at most Options.BatchConcurrency at a time, each on
// its own copy of the call, and every blocking SendMessage among them
// waits until one deadline, BlockTimeout after the batch began: a batch
// holds its connection about as long as one request does. Responses keep
// the order of the requests. refusal, when set, is the answer prepare gave
// the HTTP request.
func (h *rpcHandler) serveBatch(w http.ResponseWriter, r *http.Request, b *buffers, raw []byte, c *call, refusal *Error) {
	s := h.s
	elems, err := jsonrpc.SplitBatch(raw, s.cfg.MaxBatch)
	switch {
	case errors.Is(err, jsonrpc.ErrBatchTooLarge):
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, batchTooLarge(s.cfg.MaxBatch)))
		return
	case err != nil || len(elems) == 0:
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, invalidRequest("a batch must hold at least one request")))
		return
	}
	items, runs := decideBatch(elems, refusal)
	if len(runs) > 0 {
		bc := *c
		bc.waitUntil = time.Now().Add(s.cfg.BlockTimeout)
		h.runBatch(r.Context(), &bc, items, runs)
	}
	b.out.WriteByte('[')
	answered := 0
	for i := range items {
		if items[i].out == nil {
			continue
		}
		if answered > 0 {
			b.out.WriteByte(',')
		}
		b.out.Write(items[i].out)
		answered++
	}
	if answered == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	b.out.WriteByte(']')
	s.writeRPC(w, http.StatusOK, b.out.Bytes())
}

// decideBatch reads the elements of a batch and answers those that do not
// run: malformed ones, the refusal of the HTTP request, streaming methods.
// Notifications are neither run nor answered. runs are the indexes of the
// elements to run.
func decideBatch(elems [][]byte, refusal *Error) (items []batchItem, runs []int) {
	items = make([]batchItem, len(elems))
	for i, elem := range elems {
		it := &items[i]
		bad := invalidRequest("request must be a JSON object")
		if elem[0] == '{' {
			it.q, bad = parseEnvelope(elem)
		}
		switch {
		case bad != nil:
			it.out = appendRPCError(nil, it.q.id, bad)
		case it.q.notification():
		case refusal != nil:
			it.out = appendRPCError(nil, it.q.id, refusal)
		case it.q.streams():
			it.out = appendRPCError(nil, it.q.id, invalidRequest("streaming methods cannot be batched"))
		default:
			runs = append(runs, i)
		}
	}
	return items, runs
}

// runBatch answers items[runs] with at most Options.BatchConcurrency
// goroutines, this one included. Every goroutine has ended when it
// returns.
func (h *rpcHandler) runBatch(ctx context.Context, c *call, items []batchItem, runs []int) {
	var next atomic.Int64
	work := func() {
		scratch := h.bufs.get(nil)
		defer h.bufs.put(scratch)
		for {
			n := int(next.Add(1)) - 1
			if n >= len(runs) {
				return
			}
			it := &items[runs[n]]
			// Each element resolves its own routing value on its own copy
			// of the call.
			ec := *c
			h.answerContained(ctx, &ec, &it.q, scratch)
			it.out = bytes.Clone(scratch.out.Bytes())
			scratch.out.Reset()
		}
	}
	var wg sync.WaitGroup
	for range min(h.s.cfg.BatchConcurrency, len(runs)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// answerContained is answer for a batch element: a panic anywhere in it
// (the operation recovers its own; this covers encoding the result) is
// the element's internal error, never the process's crash — the element
// may run on a goroutine of its own.
func (h *rpcHandler) answerContained(ctx context.Context, c *call, q *rpcRequest, b *buffers) {
	mark := b.out.Len()
	defer func() {
		if p := recover(); p != nil {
			h.s.logPanic(ctx, "JSON-RPC batch element", q.method(), p)
			b.out.Truncate(mark)
			b.out.Write(appendRPCError(b.out.AvailableBuffer(), q.id, internalError()))
		}
	}()
	h.answer(ctx, c, q, b)
}
