package a2a

// Tasks and stream events are encoded by appending (internal/wirejson),
// byte for byte what encoding/json writes: every read answers a Task,
// every stream frame carries an event, and reflection was most of such a
// request.

import (
	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/wirejson"
)

// encodeResult appends v's JSON to b.out as b.enc would, without its
// newline. On error b.out may hold part of v; the caller truncates.
func encodeResult(b *buffers, v any) error {
	switch t := v.(type) {
	case *wire.Task:
		if t != nil {
			return writeTask(b, "", t, "")
		}
	case sendMessageResponse:
		if t.Task != nil {
			return writeTask(b, `{"task":`, t.Task, "}")
		}
	case wire.StreamResponse:
		out, err := wirejson.AppendStreamResponse(b.out.AvailableBuffer(), t.Event)
		if err != nil {
			return err
		}
		b.out.Write(out)
		return nil
	}
	if err := b.enc.Encode(v); err != nil {
		return err
	}
	b.out.Truncate(b.out.Len() - 1) // Encode's newline
	return nil
}

// writeTask appends prefix, t and suffix to b.out.
func writeTask(b *buffers, prefix string, t *wire.Task, suffix string) error {
	out, err := wirejson.AppendTask(append(b.out.AvailableBuffer(), prefix...), t)
	if err != nil {
		return err
	}
	b.out.Write(append(out, suffix...))
	return nil
}
