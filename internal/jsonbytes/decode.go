package jsonbytes

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeString returns the contents of a JSON string (raw, between the
// quotes, as [Scanner.String] returns them) decoded exactly as
// encoding/json decodes a string: escapes resolved, invalid UTF-8 and
// unpaired surrogate escapes replaced with U+FFFD (RFC 8259 §7, §8.2 leave
// both to the reader; encoding/json's choice is the one kept). ok is false
// for contents no JSON string has: a bad escape, a bare quote or control
// character. Contents that need no decoding cost one allocation, the
// string's.
func DecodeString(raw []byte) (s string, ok bool) {
	i := 0
	for i < len(raw) {
		c := raw[i]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	if i == len(raw) {
		return string(raw), true
	}
	b, ok := appendDecoded(make([]byte, 0, len(raw)+2*utf8.UTFMax), raw[:i], raw[i:])
	if !ok {
		return "", false
	}
	return string(b), true
}

// appendDecoded appends done, contents that need no decoding, then rest
// decoded, to dst: the loop of encoding/json's unquoteBytes, less the
// escape \' that its scanner refuses before (RFC 8259 §7 has no such
// escape).
func appendDecoded(dst, done, rest []byte) ([]byte, bool) {
	dst = append(dst, done...)
	for r := 0; r < len(rest); {
		switch c := rest[r]; {
		case c == '\\':
			r++
			if r >= len(rest) {
				return nil, false
			}
			switch e := rest[r]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
				r++
			case 'b':
				dst = append(dst, '\b')
				r++
			case 'f':
				dst = append(dst, '\f')
				r++
			case 'n':
				dst = append(dst, '\n')
				r++
			case 'r':
				dst = append(dst, '\r')
				r++
			case 't':
				dst = append(dst, '\t')
				r++
			case 'u':
				r--
				rr := hex4(rest[r:])
				if rr < 0 {
					return nil, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if pair := utf16.DecodeRune(rr, hex4(rest[r:])); pair != unicode.ReplacementChar {
						r += 6
						dst = utf8.AppendRune(dst, pair)
						break
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
			default:
				return nil, false
			}
		case c == '"', c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			// Invalid UTF-8 becomes U+FFFD, byte by byte.
			rr, size := utf8.DecodeRune(rest[r:])
			r += size
			dst = utf8.AppendRune(dst, rr)
		}
	}
	return dst, true
}

// hex4 reads the escape \uXXXX at the start of s; -1 when s does not
// start with one.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// IsNumber reports whether lit is a JSON number (RFC 8259 §6).
func IsNumber(lit []byte) bool {
	i := 0
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	switch {
	case i >= len(lit):
		return false
	case lit[i] == '0':
		i++
	case '1' <= lit[i] && lit[i] <= '9':
		i = digits(lit, i)
	default:
		return false
	}
	if i < len(lit) && lit[i] == '.' {
		j := digits(lit, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		j := digits(lit, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(lit)
}

func digits(s []byte, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// Literal passes over a number, true, false or null at Pos and returns
// it; nil when no literal starts there. Only its end is found: the caller
// checks what it holds.
func (s *Scanner) Literal() []byte {
	start := s.Pos
	if !s.literal() {
		s.Pos = start
		return nil
	}
	return s.Data[start:s.Pos]
}
