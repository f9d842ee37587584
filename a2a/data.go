package a2a

// Data parts keep their exact JSON (OpenWOP interop §What stays opaque: a
// peer's content reaches the run unaltered). a2a-go's wire.Part decodes
// "data" into an any: numbers become float64s, so an integer above 2^53
// loses digits and 1.0, 1e2 and -0 are re-spelled, and objects become maps,
// which re-order their members. The binding therefore puts the bytes the
// peer sent back into each decoded data part, as a json.RawMessage, before
// the message goes anywhere; run inputs, the stored message and every
// projection of it carry those bytes.
//
// Decoding a value into an any only to drop it would cost an allocation
// per member, number and string of it, so before the request is decoded
// each data value is copied out and replaced in the request buffer by the
// number 0 padded with spaces: the same length, still valid JSON, still a
// data part. A null is left alone (it is no data part at all).

import (
	"encoding/json"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// takeDataBytes copies the data values spans point at into one buffer of
// its own, blanks them in params as described above, and returns the
// spans pointing at the copies. params must be the buffer spans alias, and
// the binding's to change.
func takeDataBytes(params []byte, spans []dataSpan) []dataSpan {
	if len(spans) == 0 {
		return nil
	}
	size := 0
	for _, sp := range spans {
		size += len(sp.raw)
	}
	buf := make([]byte, 0, size)
	for i := range spans {
		raw := spans[i].raw
		start := len(buf)
		buf = append(buf, raw...)
		spans[i].raw = buf[start:len(buf):len(buf)]
		if string(raw) == "null" {
			continue
		}
		raw[0] = '0'
		for j := 1; j < len(raw); j++ {
			raw[j] = ' '
		}
	}
	return spans
}

// keepDataBytes puts the bytes of takeDataBytes back into the decoded
// message: each data part of m holds its own as a json.RawMessage. A span
// of a part that did not decode as a data part (a duplicated "parts" or
// "message" member left another part there) is not used; of two spans of
// one part the later wins, as it does in encoding/json.
func keepDataBytes(m *wire.Message, spans []dataSpan) {
	if m == nil {
		return
	}
	for _, sp := range spans {
		if sp.part >= len(m.Parts) || m.Parts[sp.part] == nil {
			continue
		}
		p := m.Parts[sp.part]
		if _, ok := p.Content.(wire.Data); ok {
			p.Content = wire.Data{Value: json.RawMessage(sp.raw)}
		}
	}
}
