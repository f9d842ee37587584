package mount

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// Params are the members of a request's params object, read in place. A
// params object is small and each member is read once or twice, so a
// lookup scans the raw object (which aliases the request body) instead of
// every request splitting it into a map.
type Params struct {
	// raw is a valid JSON object, or nil when the request has no params.
	raw []byte
}

// ParamsOf is the params object raw: a valid JSON object (the envelope
// decoder checked it), or nil for none.
func ParamsOf(raw []byte) Params { return Params{raw: raw} }

// Get returns the value of the member called name, as json.Unmarshal into
// a map[string]json.RawMessage would have it: names unquoted (invalid
// UTF-8 read as U+FFFD), the last of duplicated names kept.
func (p Params) Get(name string) (json.RawMessage, bool) {
	if p.raw == nil {
		return nil, false
	}
	var v json.RawMessage
	sc := jsonbytes.Scanner{Data: p.raw}
	_ = sc.Members(func(n []byte, escaped bool, value []byte) error {
		if MemberIs(n, escaped, name) {
			v = value
		}
		return nil
	})
	return v, v != nil
}

// GetAll sets vals[i] to what Get(names[i]) returns (nil when absent),
// reading the object once: a caller that needs several members does not
// pay a scan for each. The names are distinct.
func (p Params) GetAll(vals []json.RawMessage, names ...string) {
	clear(vals)
	if p.raw == nil {
		return
	}
	sc := jsonbytes.Scanner{Data: p.raw}
	_ = sc.Members(func(n []byte, escaped bool, value []byte) error {
		for i, name := range names {
			if MemberIs(n, escaped, name) {
				vals[i] = value
				break
			}
		}
		return nil
	})
}

// MemberIs reports whether a raw member name (its contents between the
// quotes, and whether they hold escapes), unquoted as encoding/json
// unquotes it, is want; a plain name is compared without a copy.
func MemberIs(name []byte, escaped bool, want string) bool {
	if !escaped && utf8.Valid(name) {
		return string(name) == want
	}
	key, err := jsonbytes.Unquote(name, true)
	return err == nil && key == want
}
