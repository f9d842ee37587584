// Package sseread reads the data of a text/event-stream body, for the two
// clients that consume one: a2a/delegate (SendStreamingMessage and
// SubscribeToTask over JSON-RPC) and mcp/remote (subscriptions/listen).
// Memory follows the bytes of one event, never the stream.
package sseread

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"iter"

	"github.com/wopinterop/wopinterop/egress"
)

// Data yields the data of each event of a text/event-stream body
// (WHATWG HTML §9.2.6, "Interpreting an event stream"): the "data" lines
// of an event joined by line feeds, dispatched at a blank line. Comments
// and the event, id and retry fields are read and dropped; an event
// without data dispatches nothing, and an event the stream ends inside is
// discarded, as the standard says. Lines end in LF or CRLF.
//
// One event — every line of it, comments included — may take at most
// limit bytes; past it the iterator yields an *egress.TooLargeError and
// stops, having buffered no more than the limit and one read.
func Data(r io.Reader, limit int64) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		br := bufio.NewReaderSize(r, 4<<10)
		var (
			data      []byte
			hasData   bool
			line      []byte
			eventSize int64
		)
		for {
			line = line[:0]
			for {
				chunk, err := br.ReadSlice('\n')
				eventSize += int64(len(chunk))
				if eventSize > limit {
					yield(nil, &egress.TooLargeError{Limit: limit})
					return
				}
				line = append(line, chunk...)
				if errors.Is(err, bufio.ErrBufferFull) {
					continue
				}
				if err == io.EOF {
					// A last line without its line feed, and the event it
					// belongs to, were never completed.
					return
				}
				if err != nil {
					yield(nil, err)
					return
				}
				break
			}
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if len(line) == 0 {
				if hasData {
					if !yield(data, nil) {
						return
					}
				}
				data, hasData, eventSize = nil, false, 0
				continue
			}
			if line[0] == ':' {
				continue
			}
			field, value, found := bytes.Cut(line, []byte(":"))
			if found {
				value = bytes.TrimPrefix(value, []byte(" "))
			}
			if string(field) != "data" {
				continue
			}
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
}
