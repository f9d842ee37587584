package jsonbytes

// maxDepth is encoding/json's nesting limit: json.Valid refuses a value
// nested deeper than this.
const maxDepth = 10000

// Valid reports whether data is one JSON value (RFC 8259), with optional
// surrounding whitespace, exactly as json.Valid does — invalid UTF-8
// inside strings accepted, nesting beyond encoding/json's limit refused —
// but in one loop over the bytes rather than a state function per byte.
// FuzzValid holds it to json.Valid.
func Valid(data []byte) bool {
	var inObject [maxDepth/64 + 1]uint64 // per open container: is it an object
	depth := 0
	i := space(data, 0)
	for {
		// A value starts at i.
		if i >= len(data) {
			return false
		}
		ok := true
		switch c := data[i]; c {
		case '{', '[':
			if depth == maxDepth {
				return false
			}
			if c == '{' {
				inObject[depth/64] |= 1 << (depth % 64)
			} else {
				inObject[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			i = space(data, i+1)
			closing := byte(']')
			if c == '{' {
				closing = '}'
			}
			if i < len(data) && data[i] == closing {
				i++
				depth--
				break
			}
			if c == '{' {
				if i, ok = member(data, i); !ok {
					return false
				}
			}
			continue // the first element or member value
		case '"':
			i, ok = stringEnd(data, i)
		case 't':
			i, ok = word(data, i, "true")
		case 'f':
			i, ok = word(data, i, "false")
		case 'n':
			i, ok = word(data, i, "null")
		default:
			i, ok = number(data, i)
		}
		if !ok {
			return false
		}
		// After a value: separators and closings until the next value.
		for {
			i = space(data, i)
			if depth == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			object := inObject[(depth-1)/64]&(1<<((depth-1)%64)) != 0
			c := data[i]
			if c == ',' {
				i = space(data, i+1)
				if object {
					if i, ok = member(data, i); !ok {
						return false
					}
				}
				break
			}
			if object && c == '}' || !object && c == ']' {
				i++
				depth--
				continue
			}
			return false
		}
	}
}

// space returns the index of the first non-whitespace byte from i.
func space(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// member passes over an object member's name and colon, returning where
// its value starts.
func member(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := stringEnd(data, i)
	if !ok {
		return i, false
	}
	i = space(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return space(data, i+1), true
}

// stringEnd passes over the string starting at data[i] == '"'.
func stringEnd(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(data) {
				return i, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return i, false
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// word passes over the literal w at data[i].
func word(data []byte, i int, w string) (int, bool) {
	if len(data)-i < len(w) || string(data[i:i+len(w)]) != w {
		return i, false
	}
	return i + len(w), true
}

// number passes over a number (RFC 8259 §6): -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func number(data []byte, i int) (int, bool) {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return i, false
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return i, false
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return i, false
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	return i, true
}

// AppendCompact appends src with the whitespace between its tokens left
// out, as json.Compact does, and reports false (appending nothing) when
// src is not one valid JSON value. It is what json.Marshal makes of a
// json.RawMessage when HTML escaping is off. FuzzAppendCompact holds it
// to json.Compact.
func AppendCompact(dst, src []byte) ([]byte, bool) {
	if !Valid(src) {
		return dst, false
	}
	start, inString := 0, false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && isSpace(c):
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...), true
}
