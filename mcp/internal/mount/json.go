package mount

import (
	"bytes"
	"encoding/json"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// Marshal encodes v as compact JSON without HTML escaping: results carry
// workflow and host text, which escaping < and & would only obscure.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := b.Bytes()
	return out[:len(out)-1], nil // Encode appends a newline
}

// AppendString appends s as a JSON string, unescaped as Marshal leaves it.
func AppendString(dst []byte, s string) []byte { return jsonbytes.AppendString(dst, s, false) }
