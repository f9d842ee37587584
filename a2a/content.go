package a2a

// Content types (A2A 1.0 §3.1.1 SendMessage errors: ContentTypeNotSupported
// "a Media Type provided in the request's message parts is not supported by
// the agent"; OpenWOP interop map a2a.errors -32005, decided at request
// time). A message is judged against the workflow it starts or continues,
// before anything is written:
//
//   - every part's media type must be one the workflow accepts
//     (Workflow.InputModes, else the card's defaultInputModes);
//   - a non-empty configuration.acceptedOutputModes must admit at least one
//     media type the workflow produces (Workflow.OutputModes, else the
//     card's defaultOutputModes). An empty list admits everything.
//
// A part without a mediaType is typed by what it holds, as A2A 1.0 Part
// describes its members: text is text/plain, data (a JSON value) is
// application/json, and raw bytes or a url of unstated type are
// application/octet-stream (RFC 9110 §8.3: content whose type is not given
// may be treated as application/octet-stream). A skill that takes files
// says so with application/octet-stream, a type/* range or */* among its
// input modes.
//
// Media types compare on their essence, type/subtype, case-insensitively
// (RFC 9110 §8.3.1); parameters (text/plain; charset=utf-8) are ignored. A
// range matches what it covers: */* everything, type/* every subtype of
// type, on either side. A mediaType that does not parse as type/subtype is
// accepted by nothing.

import (
	"strconv"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// mediaRange is a media type or range, essence only, lower case.
type mediaRange struct {
	typ, sub string
}

// Media types of parts that name none.
var (
	mediaText   = mediaRange{"text", "plain"}
	mediaJSON   = mediaRange{"application", "json"}
	mediaOctets = mediaRange{"application", "octet-stream"}
)

// parseMediaRange reads "type/subtype" with optional parameters; "*" as
// the type needs "*" as the subtype.
func parseMediaRange(s string) (mediaRange, bool) {
	essence, _, _ := strings.Cut(s, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(essence), "/")
	if !ok || !isToken(typ) || !isToken(sub) || typ == "*" && sub != "*" {
		return mediaRange{}, false
	}
	return mediaRange{strings.ToLower(typ), strings.ToLower(sub)}, true
}

// isToken reports whether s is a non-empty RFC 9110 §5.6.2 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// covers reports whether the two ranges share a media type.
func (a mediaRange) covers(b mediaRange) bool {
	return (a.typ == "*" || b.typ == "*" || a.typ == b.typ) &&
		(a.sub == "*" || b.sub == "*" || a.sub == b.sub)
}

func anyCovers(modes []mediaRange, m mediaRange) bool {
	for _, x := range modes {
		if x.covers(m) {
			return true
		}
	}
	return false
}

// parseModes parses configured modes; an entry that does not parse is
// left out (it matches nothing).
func parseModes(modes []string) []mediaRange {
	out := make([]mediaRange, 0, len(modes))
	for _, m := range modes {
		if r, ok := parseMediaRange(m); ok {
			out = append(out, r)
		}
	}
	return out
}

// partMediaType is the media type of p: its mediaType, else the one its
// member implies. ok is false for a mediaType that does not parse.
func partMediaType(p *wire.Part) (mediaRange, bool) {
	if p.MediaType != "" {
		return parseMediaRange(p.MediaType)
	}
	switch p.Content.(type) {
	case wire.Text:
		return mediaText, true
	case wire.Data:
		return mediaJSON, true
	}
	return mediaOctets, true
}

// checkContent refuses, with -32005, a message holding a part the workflow
// does not accept or asking for output the workflow cannot produce.
func (s *Server) checkContent(w *workflowInfo, in *inbound) error {
	for i, p := range in.msg.Parts {
		m, ok := partMediaType(p)
		if !ok || !anyCovers(w.inputs, m) {
			return s.errs.contentType("the skill does not accept the media type of message.parts[" + strconv.Itoa(i) + "]")
		}
	}
	if len(in.accepted) == 0 {
		return nil
	}
	for _, a := range in.accepted {
		if r, ok := parseMediaRange(a); ok && anyCovers(w.outputs, r) {
			return nil
		}
	}
	return s.errs.contentType("the skill produces none of the media types in configuration.acceptedOutputModes")
}
