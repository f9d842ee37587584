package a2a

// Data parts keep their exact JSON (OpenWOP interop §What stays opaque: a
// peer's content reaches the run unaltered). a2a-go's wire.Part decodes
// "data" into an any: numbers become float64s, so an integer above 2^53
// loses digits and 1.0, 1e2 and -0 are re-spelled, and objects become maps,
// which re-order their members. The binding therefore puts the bytes the
// peer sent back into each decoded data part, as a json.RawMessage, before
// the message goes anywhere; run inputs, the stored message and every
// projection of it carry those bytes.

import (
	"encoding/json"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// keepDataBytes replaces the decoded value of each data part of m with the
// bytes spans says it was read from. A span of a part that did not decode
// as a data part (a duplicated "parts" or "message" member left another
// part there) is not used; of two spans of one part the later wins, as it
// does in encoding/json. The bytes are copied, in one allocation: spans
// alias a request buffer the binding reuses.
func keepDataBytes(m *wire.Message, spans []dataSpan) {
	if m == nil || len(spans) == 0 {
		return
	}
	size := 0
	for _, sp := range spans {
		size += len(sp.raw)
	}
	buf := make([]byte, 0, size)
	for _, sp := range spans {
		if sp.part >= len(m.Parts) || m.Parts[sp.part] == nil {
			continue
		}
		p := m.Parts[sp.part]
		if _, ok := p.Content.(wire.Data); !ok {
			continue
		}
		start := len(buf)
		buf = append(buf, sp.raw...)
		p.Content = wire.Data{Value: json.RawMessage(buf[start:len(buf):len(buf)])}
	}
}
