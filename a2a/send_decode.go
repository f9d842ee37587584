package a2a

// SendMessage params decoded by hand. Decoding a SendMessageRequest
// through encoding/json's reflection took a tenth of the CPU a blocking
// SendMessage of a noop task cost the server, and 33 of its 117
// allocations; the request is the same few members every time (A2A 1.0.1
// §3.1.1; the SendMessageRequest, Message and Part of a2a.proto), so they
// are read here in one pass over the bytes, into the same a2a-go value
// encoding/json would make.
//
// The decoder reads what clients send, and only that. Anything whose
// decoding it would have to second-guess — a member name spelled in
// another case or written with escapes, a repeated member (encoding/json
// merges a repeated object into the first), a value of the wrong type, a
// null in an array, an integer encoding/json refuses, a part that is not
// exactly one of text, raw, url and data, nesting deeper than
// maxSendDepth — makes it give up, and the params are decoded the general
// way (body.go), which also words every refusal. FuzzSendMessageDecode
// holds the two ways to one value.

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// maxSendDepth bounds the nesting the decoder follows in metadata, whose
// values it decodes recursively; deeper metadata takes the general way.
const maxSendDepth = 64

// decodeSendMessage decodes params, a JSON object (valid JSON: the binding
// checks the body first), into req, zero on entry. It reports false, with
// req zero again and params untouched, when it gave up.
func decodeSendMessage(params []byte, req *wire.SendMessageRequest) bool {
	d := sendDecoder{Scanner: jsonbytes.Scanner{Data: params}}
	if !d.request(req) {
		*req = wire.SendMessageRequest{}
		return false
	}
	d.Space()
	if d.Pos != len(d.Data) {
		*req = wire.SendMessageRequest{}
		return false
	}
	return true
}

// sendDecoder reads a SendMessageRequest in place. Every method reads one
// value at Pos (after whitespace) and reports whether it could.
type sendDecoder struct {
	jsonbytes.Scanner
}

// object reads an object of shape sh, handing each known member to field
// by its name, as sh.names() spells it, with Pos at its value. Unknown
// members are skipped, as encoding/json skips them.
func (d *sendDecoder) object(sh shape, field func(name string) bool) bool {
	if !d.open('{') {
		return false
	}
	if d.closes('}') {
		return true
	}
	var seen uint16
	for {
		d.Space()
		raw, escaped, err := d.String()
		if err != nil || escaped {
			return false
		}
		if d.Space(); !d.closes(':') {
			return false
		}
		i, name := sh.index(raw)
		switch {
		case i >= 0:
			if seen&(1<<i) != 0 {
				return false
			}
			seen |= 1 << i
			if !field(name) {
				return false
			}
		case sh.folds(raw):
			// The member-case refusal is the general way's to word.
			return false
		default:
			if d.Skip() != nil {
				return false
			}
		}
		if done, err := d.Separator('}'); err != nil || done {
			return err == nil
		}
	}
}

// open consumes the opening byte of a container.
func (d *sendDecoder) open(c byte) bool {
	d.Space()
	if d.Pos < len(d.Data) && d.Data[d.Pos] == c {
		d.Pos++
		return true
	}
	return false
}

// closes consumes c when it is next, after whitespace.
func (d *sendDecoder) closes(c byte) bool {
	d.Space()
	if d.Pos < len(d.Data) && d.Data[d.Pos] == c {
		d.Pos++
		return true
	}
	return false
}

// null consumes a null. encoding/json leaves a string, a number or a
// bool alone on null and sets a pointer, a map or a slice to nil: on a
// fresh request, the zero value either way.
func (d *sendDecoder) null() bool {
	d.Space()
	if d.Pos+4 <= len(d.Data) && string(d.Data[d.Pos:d.Pos+4]) == "null" {
		d.Pos += 4
		return true
	}
	return false
}

// peek is the byte at Pos after whitespace; 0 at the end.
func (d *sendDecoder) peek() byte {
	d.Space()
	if d.Pos < len(d.Data) {
		return d.Data[d.Pos]
	}
	return 0
}

// str reads a string (not null) as encoding/json decodes one.
func (d *sendDecoder) str() (string, bool) {
	d.Space()
	raw, _, err := d.String()
	if err != nil {
		return "", false
	}
	return jsonbytes.DecodeString(raw)
}

// text reads a string member into dst; null leaves it empty.
func text[T ~string](d *sendDecoder, dst *T) bool {
	if d.null() {
		return true
	}
	s, ok := d.str()
	*dst = T(s)
	return ok
}

// texts reads an array of strings into dst: null leaves it nil, [] is an
// empty slice, as encoding/json makes it.
func texts[T ~string](d *sendDecoder, dst *[]T) bool {
	if d.null() {
		return true
	}
	if !d.open('[') {
		return false
	}
	out := []T{}
	if !d.closes(']') {
		for {
			s, ok := d.str()
			if !ok {
				return false
			}
			out = append(out, T(s))
			if done, err := d.Separator(']'); err != nil {
				return false
			} else if done {
				break
			}
		}
	}
	*dst = out
	return true
}

func (d *sendDecoder) request(req *wire.SendMessageRequest) bool {
	return d.object(shapeSendMessageRequest, func(name string) bool {
		switch name {
		case "tenant":
			return text(d, &req.Tenant)
		case "configuration":
			return d.config(&req.Config)
		case "message":
			return d.message(&req.Message)
		case "metadata":
			return d.metadata(&req.Metadata)
		}
		return false
	})
}

func (d *sendDecoder) config(dst **wire.SendMessageConfig) bool {
	if d.null() {
		return true
	}
	cfg := new(wire.SendMessageConfig)
	*dst = cfg
	return d.object(shapeSendMessageConfig, func(name string) bool {
		switch name {
		case "acceptedOutputModes":
			return texts(d, &cfg.AcceptedOutputModes)
		case "returnImmediately":
			return d.boolean(&cfg.ReturnImmediately)
		case "historyLength":
			return d.integer(&cfg.HistoryLength)
		case "taskPushNotificationConfig":
			return d.pushConfig(&cfg.PushConfig)
		}
		return false
	})
}

// boolean reads true, false or null (which leaves dst alone).
func (d *sendDecoder) boolean(dst *bool) bool {
	if d.null() {
		return true
	}
	switch string(d.Literal()) {
	case "true":
		*dst = true
		return true
	case "false":
		*dst = false
		return true
	}
	return false
}

// integer reads an int as encoding/json does: an integer literal (no
// fraction, no exponent) within range; null leaves dst nil.
func (d *sendDecoder) integer(dst **int) bool {
	if d.null() {
		return true
	}
	lit := d.Literal()
	if !jsonbytes.IsNumber(lit) {
		return false
	}
	n, err := strconv.ParseInt(string(lit), 10, 64)
	if err != nil || int64(int(n)) != n {
		return false
	}
	v := int(n)
	*dst = &v
	return true
}

func (d *sendDecoder) pushConfig(dst **wire.PushConfig) bool {
	if d.null() {
		return true
	}
	pc := new(wire.PushConfig)
	*dst = pc
	return d.object(shapePushConfig, func(name string) bool {
		switch name {
		case "tenant":
			return text(d, &pc.Tenant)
		case "taskId":
			return text(d, &pc.TaskID)
		case "id":
			return text(d, &pc.ID)
		case "authentication":
			return d.pushAuth(&pc.Auth)
		case "token":
			return text(d, &pc.Token)
		case "url":
			return text(d, &pc.URL)
		}
		return false
	})
}

func (d *sendDecoder) pushAuth(dst **wire.PushAuthInfo) bool {
	if d.null() {
		return true
	}
	auth := new(wire.PushAuthInfo)
	*dst = auth
	return d.object(shapePushAuth, func(name string) bool {
		switch name {
		case "credentials":
			return text(d, &auth.Credentials)
		case "scheme":
			return text(d, &auth.Scheme)
		}
		return false
	})
}

func (d *sendDecoder) message(dst **wire.Message) bool {
	if d.null() {
		return true
	}
	m := new(wire.Message)
	*dst = m
	return d.object(shapeMessage, func(name string) bool {
		switch name {
		case "messageId":
			return text(d, &m.ID)
		case "contextId":
			return text(d, &m.ContextID)
		case "extensions":
			return texts(d, &m.Extensions)
		case "metadata":
			return d.metadata(&m.Metadata)
		case "parts":
			return d.parts(&m.Parts)
		case "referenceTaskIds":
			return texts(d, &m.ReferenceTasks)
		case "role":
			return d.role(&m.Role)
		case "taskId":
			return text(d, &m.TaskID)
		}
		return false
	})
}

// role reads a MessageRole as its UnmarshalJSON does: ROLE_UNSPECIFIED is
// the empty role. The two roles a message may have are the package's
// constants, so reading them allocates nothing.
func (d *sendDecoder) role(dst *wire.MessageRole) bool {
	if d.null() {
		return true
	}
	d.Space()
	raw, escaped, err := d.String()
	switch {
	case err != nil:
		return false
	case !escaped && string(raw) == string(wire.MessageRoleUser):
		*dst = wire.MessageRoleUser
		return true
	case !escaped && string(raw) == string(wire.MessageRoleAgent):
		*dst = wire.MessageRoleAgent
		return true
	}
	s, ok := jsonbytes.DecodeString(raw)
	if s != "ROLE_UNSPECIFIED" {
		*dst = wire.MessageRole(s)
	}
	return ok
}

// maxStackParts is how many parts a message may have before reading them
// costs more than the two allocations their slices take.
const maxStackParts = 4

// parts reads Message.parts: null leaves them nil, [] is empty; the parts
// share one backing array.
func (d *sendDecoder) parts(dst *wire.ContentParts) bool {
	if d.null() {
		return true
	}
	if !d.open('[') {
		return false
	}
	var stack [maxStackParts]wire.Part
	read := stack[:0]
	if !d.closes(']') {
		for {
			var p wire.Part
			if !d.part(&p) {
				return false
			}
			read = append(read, p)
			if done, err := d.Separator(']'); err != nil {
				return false
			} else if done {
				break
			}
		}
	}
	backing := make([]wire.Part, len(read))
	copy(backing, read)
	parts := make(wire.ContentParts, len(read))
	for i := range backing {
		parts[i] = &backing[i]
	}
	*dst = parts
	return true
}

// part reads one Part as its UnmarshalJSON does: exactly one of text,
// raw, data and a non-empty url is its content; a null member is absent.
// A data value is kept as the bytes the peer sent (data.go).
func (d *sendDecoder) part(p *wire.Part) bool {
	if d.peek() != '{' {
		return false // null too: a nil part is the general way's
	}
	contents := 0
	ok := d.object(shapePart, func(name string) bool {
		switch name {
		case "text":
			if d.null() {
				return true
			}
			s, ok := d.str()
			p.Content = wire.Text(s)
			contents++
			return ok
		case "raw":
			if d.null() {
				return true
			}
			b, ok := d.base64()
			p.Content = wire.Raw(b)
			contents++
			return ok
		case "data":
			if d.null() {
				return true
			}
			d.Space()
			start := d.Pos
			if d.Skip() != nil {
				return false
			}
			p.Content = wire.Data{Value: json.RawMessage(append([]byte(nil), d.Data[start:d.Pos]...))}
			contents++
			return true
		case "url":
			var u wire.URL
			if !text(d, &u) {
				return false
			}
			if u != "" {
				p.Content = u
				contents++
			}
			return true
		case "filename":
			return text(d, &p.Filename)
		case "mediaType":
			return text(d, &p.MediaType)
		case "metadata":
			return d.metadata(&p.Metadata)
		}
		return false
	})
	return ok && contents == 1
}

// base64 reads a []byte as encoding/json does: a string in standard
// base64.
func (d *sendDecoder) base64() ([]byte, bool) {
	s, ok := d.str()
	if !ok {
		return nil, false
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, []byte(s))
	return b[:n], err == nil
}

// metadata reads a map[string]any: null leaves it nil; a repeated key
// keeps its last value, as encoding/json does.
func (d *sendDecoder) metadata(dst *map[string]any) bool {
	if d.null() {
		return true
	}
	if d.peek() != '{' {
		return false
	}
	m, ok := d.anyObject(0)
	*dst = m
	return ok
}

// anyValue reads any value as encoding/json decodes into an any:
// map[string]any, []any, string, float64, bool or nil.
func (d *sendDecoder) anyValue(depth int) (any, bool) {
	switch d.peek() {
	case '{':
		m, ok := d.anyObject(depth + 1)
		return m, ok
	case '[':
		return d.anyArray(depth + 1)
	case '"':
		return d.str()
	}
	switch lit := d.Literal(); string(lit) {
	case "null":
		return nil, true
	case "true":
		return true, true
	case "false":
		return false, true
	default:
		if !jsonbytes.IsNumber(lit) {
			return nil, false
		}
		f, err := strconv.ParseFloat(string(lit), 64)
		return f, err == nil
	}
}

func (d *sendDecoder) anyObject(depth int) (map[string]any, bool) {
	if depth > maxSendDepth || !d.open('{') {
		return nil, false
	}
	m := make(map[string]any)
	if d.closes('}') {
		return m, true
	}
	for {
		key, ok := d.str()
		if !ok {
			return nil, false
		}
		if d.Space(); !d.closes(':') {
			return nil, false
		}
		v, ok := d.anyValue(depth)
		if !ok {
			return nil, false
		}
		m[key] = v
		if done, err := d.Separator('}'); err != nil {
			return nil, false
		} else if done {
			return m, true
		}
	}
}

func (d *sendDecoder) anyArray(depth int) ([]any, bool) {
	if depth > maxSendDepth || !d.open('[') {
		return nil, false
	}
	out := make([]any, 0)
	if d.closes(']') {
		return out, true
	}
	for {
		v, ok := d.anyValue(depth)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if done, err := d.Separator(']'); err != nil {
			return nil, false
		} else if done {
			return out, true
		}
	}
}

// index is the position among sh.names() of the member raw names exactly,
// and that name; -1 when it names none.
func (sh shape) index(raw []byte) (int, string) {
	rest := sh.names()
	for i := 0; rest != ""; i++ {
		var n string
		n, rest, _ = strings.Cut(rest, ",")
		if n == string(raw) {
			return i, n
		}
	}
	return -1, ""
}

// folds reports whether raw spells one of sh's members in another case.
func (sh shape) folds(raw []byte) bool {
	_, ok := sh.foldMatch(string(raw))
	return ok
}
