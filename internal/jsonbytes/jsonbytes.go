// Package jsonbytes reads and writes JSON in place over byte slices, for
// the protocol surfaces' hot paths: a [Scanner] that walks a value without
// decoding it (no allocation, no recursion), [Valid], json.Valid's answer
// in one loop, and [AppendString], a string encoder that writes exactly
// what encoding/json writes. The JSON-RPC
// codec (internal/jsonrpc) and a2a's member-case walk are built on them.
//
// Input is assumed to be valid JSON (callers check it with [Valid]
// first); on anything else the scanner reports [ErrMalformed] rather than
// guessing, which only fuzz targets reach.
package jsonbytes

import (
	"errors"
	"unicode/utf8"
)

// ErrMalformed reports input that is not JSON.
var ErrMalformed = errors.New("jsonbytes: malformed JSON")

// Scanner reads JSON tokens from Data starting at Pos.
type Scanner struct {
	Data []byte
	Pos  int
}

// Space skips JSON whitespace (RFC 8259 §2).
func (s *Scanner) Space() {
	for s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ' ', '\t', '\n', '\r':
			s.Pos++
		default:
			return
		}
	}
}

// String reads a string token and returns its raw contents (between the
// quotes) and whether they hold escapes.
func (s *Scanner) String() ([]byte, bool, error) {
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '"' {
		return nil, false, ErrMalformed
	}
	start := s.Pos + 1
	escaped := false
	for i := start; i < len(s.Data); i++ {
		switch c := s.Data[i]; {
		case c == '\\':
			escaped = true
			i++ // the escaped byte never ends the string
		case c == '"':
			s.Pos = i + 1
			return s.Data[start:i], escaped, nil
		case c < 0x20:
			return nil, false, ErrMalformed
		}
	}
	return nil, false, ErrMalformed
}

// Skip passes over one value of any type without recursion: nesting is
// tracked with a counter, strings with String.
func (s *Scanner) Skip() error {
	depth := 0
	for {
		s.Space()
		if s.Pos >= len(s.Data) {
			return ErrMalformed
		}
		switch c := s.Data[s.Pos]; c {
		case '{', '[':
			depth++
			s.Pos++
			continue
		case '}', ']':
			if depth == 0 {
				return ErrMalformed
			}
			depth--
			s.Pos++
		case '"':
			if _, _, err := s.String(); err != nil {
				return err
			}
		case ',', ':':
			if depth == 0 {
				return ErrMalformed
			}
			s.Pos++
			continue
		default:
			if !s.literal() {
				return ErrMalformed
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// literal passes over a number, true, false or null. Its exact grammar is
// encoding/json's to check; the scanner only needs its end.
func (s *Scanner) literal() bool {
	start := s.Pos
	for s.Pos < len(s.Data) {
		c := s.Data[s.Pos]
		if c == ',' || c == '}' || c == ']' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '{' || c == '[' {
			break
		}
		if c >= utf8.RuneSelf {
			return false
		}
		s.Pos++
	}
	return s.Pos > start
}

// Separator consumes what follows an array element or object member: a
// ',' (more to come) or the closing byte (done).
func (s *Scanner) Separator(closing byte) (done bool, err error) {
	s.Space()
	if s.Pos >= len(s.Data) {
		return false, ErrMalformed
	}
	switch s.Data[s.Pos] {
	case ',':
		s.Pos++
		return false, nil
	case closing:
		s.Pos++
		return true, nil
	}
	return false, ErrMalformed
}

// Members calls member with each member of the object at Pos (raw name
// contents, whether the name holds escapes, the raw value) and leaves Pos
// after the object. Duplicates are reported in order, so a caller that
// keeps the last one reads as encoding/json does.
func (s *Scanner) Members(member func(name []byte, escaped bool, value []byte) error) error {
	s.Space()
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '{' {
		return ErrMalformed
	}
	s.Pos++
	s.Space()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == '}' {
		s.Pos++
		return nil
	}
	for {
		s.Space()
		name, escaped, err := s.String()
		if err != nil {
			return err
		}
		s.Space()
		if s.Pos >= len(s.Data) || s.Data[s.Pos] != ':' {
			return ErrMalformed
		}
		s.Pos++
		s.Space()
		start := s.Pos
		if err := s.Skip(); err != nil {
			return err
		}
		if err := member(name, escaped, s.Data[start:s.Pos]); err != nil {
			return err
		}
		if done, err := s.Separator('}'); done || err != nil {
			return err
		}
	}
}

// Elements returns the raw elements of the array at Pos, or errTooMany
// as soon as it finds more than max of them, and leaves Pos after the
// array.
func (s *Scanner) Elements(max int, tooMany error) ([][]byte, error) {
	s.Space()
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '[' {
		return nil, ErrMalformed
	}
	s.Pos++
	s.Space()
	if s.Pos < len(s.Data) && s.Data[s.Pos] == ']' {
		s.Pos++
		return nil, nil
	}
	var elems [][]byte
	for {
		if len(elems) == max {
			return nil, tooMany
		}
		s.Space()
		start := s.Pos
		if err := s.Skip(); err != nil {
			return nil, err
		}
		elems = append(elems, s.Data[start:s.Pos])
		if done, err := s.Separator(']'); done || err != nil {
			return elems, err
		}
	}
}

// Unquote returns a JSON string's raw contents as encoding/json reads
// them. Without escapes that is the raw bytes (invalid UTF-8 included);
// with escapes they are decoded, which allocates.
func Unquote(raw []byte, escaped bool) (string, error) {
	if !escaped {
		return string(raw), nil
	}
	s, ok := DecodeString(raw)
	if !ok {
		return "", ErrMalformed
	}
	return s, nil
}

// StringContents returns the raw contents of val when it is a JSON string
// and whether they hold escapes; nil for a value of another type.
func StringContents(val []byte) ([]byte, bool) {
	if len(val) < 2 || val[0] != '"' {
		return nil, false
	}
	c := val[1 : len(val)-1]
	for _, b := range c {
		if b == '\\' {
			return c, true
		}
	}
	return c, false
}

// StringIs reports whether the raw contents of a JSON string equal want.
func StringIs(raw []byte, escaped bool, want string) bool {
	if raw == nil {
		return false
	}
	if !escaped {
		return string(raw) == want
	}
	s, err := Unquote(raw, true)
	return err == nil && s == want
}

// TrimSpace trims JSON whitespace around a value.
func TrimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// AppendString appends s as a JSON string exactly as encoding/json
// encodes it: quote, backslash and control characters escaped, U+2028
// and U+2029 escaped, invalid UTF-8 replaced with U+FFFD, and — when
// escapeHTML, as json.Marshal does; without it, as an Encoder with
// SetEscapeHTML(false) does — '<', '>' and '&' escaped.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	// The usual string needs no escape: copy its longest plain prefix at
	// once rather than byte by byte.
	plain := 0
	for plain < len(s) && plainASCII(s[plain], escapeHTML) {
		plain++
	}
	dst = append(dst, s[:plain]...)
	for i := plain; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			dst = appendASCII(dst, c, escapeHTML)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// plainASCII reports whether c is ASCII that encoding/json writes as it is.
func plainASCII(c byte, escapeHTML bool) bool {
	return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && !(escapeHTML && (c == '<' || c == '>' || c == '&'))
}

// appendASCII appends one ASCII byte of a JSON string, escaped as
// encoding/json escapes it.
func appendASCII(dst []byte, c byte, escapeHTML bool) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(dst, '\\', c)
	case c == '\n':
		return append(dst, '\\', 'n')
	case c == '\r':
		return append(dst, '\\', 'r')
	case c == '\t':
		return append(dst, '\\', 't')
	case c == '\b':
		return append(dst, '\\', 'b')
	case c == '\f':
		return append(dst, '\\', 'f')
	case c < 0x20 || escapeHTML && (c == '<' || c == '>' || c == '&'):
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(dst, c)
}
