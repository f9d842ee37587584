package a2a

// The JSON-RPC envelope, read in place by the same walker as the
// member-case check (strict.go): "jsonrpc" must be the string "2.0", "id"
// a string, number or null (absent: a notification), "method" a string,
// "params" an object (absent or null: {}). Envelope member names are
// case-sensitive; unknown members are ignored; a duplicated member counts
// once, the last one, as encoding/json would read it.

import (
	"bytes"
	"encoding/json"
	"strings"
)

// envelope is what a request object says, before it is judged.
type envelope struct {
	version, method, params, id []byte
	// versionEsc and methodEsc: the string holds escapes.
	versionEsc, methodEsc bool
	hasVersion, hasMethod bool
	hasID                 bool
	// caseErr: an envelope member is spelled in another case.
	caseErr bool
}

// parseEnvelope reads one request object (raw is valid JSON starting with
// '{'). On a refusal the returned request still carries the id when it was
// readable, so the error can echo it.
func parseEnvelope(raw []byte) (rpcRequest, *Error) {
	var env envelope
	if err := env.read(raw); err != nil {
		return rpcRequest{}, parseError()
	}
	return env.judge()
}

// read reads the members of the object raw.
func (env *envelope) read(raw []byte) error {
	w := walker{data: raw, pos: 1}
	w.space()
	if w.pos < len(raw) && raw[w.pos] == '}' {
		return nil
	}
	for {
		w.space()
		key, keyEsc, err := w.str()
		if err != nil {
			return err
		}
		w.space()
		w.pos++ // ':'
		w.space()
		start := w.pos
		if err := w.skip(); err != nil {
			return err
		}
		name := string(key)
		if keyEsc {
			if name, err = keyName(key, true); err != nil {
				return err
			}
		}
		env.member(name, raw[start:w.pos])
		w.space()
		if w.pos >= len(raw) || raw[w.pos] != ',' {
			return nil
		}
		w.pos++
	}
}

// member records one member; a later one of the same name replaces it.
func (env *envelope) member(name string, val []byte) {
	switch name {
	case "jsonrpc":
		env.hasVersion = true
		env.version, env.versionEsc = stringContents(val)
	case "id":
		env.hasID, env.id = true, val
	case "method":
		env.hasMethod = true
		env.method, env.methodEsc = stringContents(val)
	case "params":
		env.params = val
	default:
		if envelopeFold(name) {
			env.caseErr = true
		}
	}
}

// judge turns what the object said into a request, or its refusal.
func (env *envelope) judge() (rpcRequest, *Error) {
	var q rpcRequest
	if env.hasID {
		if !validID(env.id) {
			return q, invalidRequest("id must be a string, a number or null")
		}
		q.id = env.id
	}
	params := env.params
	switch {
	case env.caseErr:
		return q, invalidRequest("member names are case-sensitive")
	case !env.hasVersion || !stringIs(env.version, env.versionEsc, "2.0"):
		return q, invalidRequest("jsonrpc must be \"2.0\"")
	case !env.hasMethod || env.method == nil:
		return q, invalidRequest("method must be a string")
	case params != nil && params[0] != '{' && !bytes.Equal(params, []byte("null")):
		return q, invalidRequest("params must be an object")
	}
	if params != nil && params[0] == '{' {
		q.params = params
	}
	q.op = knownMethod(env.method, env.methodEsc)
	return q, nil
}

// stringContents returns the raw contents of a JSON string value and
// whether they hold escapes; nil for a value of another type.
func stringContents(val []byte) ([]byte, bool) {
	if val[0] != '"' {
		return nil, false
	}
	return val[1 : len(val)-1], bytes.IndexByte(val, '\\') >= 0
}

// envelopeFold reports an envelope member spelled in another case,
// folding as encoding/json does.
func envelopeFold(name string) bool {
	for _, n := range [...]string{"jsonrpc", "id", "method", "params"} {
		if n != name && strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// stringIs reports whether the raw contents of a JSON string equal want.
func stringIs(raw []byte, escaped bool, want string) bool {
	if raw == nil {
		return false
	}
	if !escaped {
		return string(raw) == want
	}
	s, err := keyName(raw, true)
	return err == nil && s == want
}

// knownMethod returns the row of a method name without allocating; nil for
// an unknown name. A name written with escapes is decoded first.
func knownMethod(raw []byte, escaped bool) *operation {
	if escaped {
		name, err := keyName(raw, true)
		if err != nil {
			return nil
		}
		return lookupMethod([]byte(name))
	}
	return lookupMethod(raw)
}

// validID reports whether raw is a JSON-RPC id: a string, a number or null.
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == '-', '0' <= c && c <= '9':
		return json.Valid(raw)
	}
	return bytes.Equal(raw, []byte("null"))
}
