package cardsig

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// signaturesMember is the card member that holds the signatures and that
// the signed payload leaves out (A2A 1.0 §8.4.1, rule 3).
const signaturesMember = "signatures"

// Canonicalize returns the payload an agent card's signatures sign: the
// card's JSON, as received, without its signatures member and without the
// members A2A 1.0 §8.4.1 omits as default values, in RFC 8785 (JCS) form.
//
// Default values are omitted as the reference SDKs (a2a-python, a2a-js)
// omit them: an empty string, an empty array, an empty object and null
// are dropped wherever they occur, after their own contents are (so a
// list whose elements are all empty goes too), and so is false in the two
// members of the A2A schema that are plain proto3 booleans:
// capabilities.extensions[].required and
// securitySchemes.*.oauth2SecurityScheme.flows.authorizationCode.pkceRequired.
// Every other member is kept as received, one this package does not know
// included, so the signature covers it.
//
// It fails when card is not a single JSON object in UTF-8 without
// duplicate member names (RFC 8785 §3.1).
func Canonicalize(card []byte) ([]byte, error) {
	obj, err := decodeCard(card)
	if err != nil {
		return nil, err
	}
	return payloadOf(obj)
}

// decodeCard parses a card strictly. jcs parses it first because it
// refuses what encoding/json would let through silently — a duplicate
// member (the last would win), invalid UTF-8 (replaced with U+FFFD) —
// and either would let the signed bytes and the card a client reads
// differ. The canonical text it returns is then decoded with numbers
// kept as written.
func decodeCard(card []byte) (map[string]any, error) {
	strict, err := jcs.Transform(card)
	if err != nil {
		return nil, &Error{Reason: ReasonMalformedCard, Index: -1, Detail: "not canonicalizable JSON (RFC 8785)", Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(strict))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &Error{Reason: ReasonMalformedCard, Index: -1, Err: err}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, cardError(ReasonMalformedCard, "a card is a JSON object, not %s", kindOf(v))
	}
	return obj, nil
}

// payloadOf is the canonical payload of a decoded card. It does not
// change obj.
func payloadOf(obj map[string]any) ([]byte, error) {
	body := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != signaturesMember {
			body[k] = v
		}
	}
	cleaned, keep := omitDefaults(body, atCard)
	if !keep {
		cleaned = map[string]any{}
	}
	raw, err := json.Marshal(cleaned)
	if err != nil {
		return nil, fmt.Errorf("cardsig: encode the payload: %w", err)
	}
	// json.Marshal escapes <, > and & and writes numbers as received;
	// jcs writes both as RFC 8785 §3.2.2 says.
	return jcs.Transform(raw)
}

// omitDefaults returns v, found at p in the card, without its default
// values, and whether v itself is one (then it is to be dropped).
// Containers are rebuilt, never changed in place.
func omitDefaults(v any, p place) (any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, false
	case string:
		return t, t != ""
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if c, keep := omitDefaults(e, p.element()); keep {
				out = append(out, c)
			}
		}
		return out, len(out) > 0
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e == false && p.plainBoolean(k) {
				continue
			}
			if c, keep := omitDefaults(e, p.member(k)); keep {
				out[k] = c
			}
		}
		return out, len(out) > 0
	default: // bool, json.Number
		return t, true
	}
}

// place is where a value sits in a card, as far as default omission
// needs to know: the path to the two booleans of the A2A 1.0 card schema
// without field presence (proto3 bool, not optional), whose default,
// false, is omitted (A2A 1.0 §8.4.1, rule 1).
type place uint8

const (
	elsewhere place = iota
	atCard
	atCapabilities
	atExtensions // capabilities.extensions
	atExtension  // capabilities.extensions[]
	atSchemes    // securitySchemes
	atScheme     // securitySchemes.*
	atOAuth2     // securitySchemes.*.oauth2SecurityScheme
	atFlows      // securitySchemes.*.oauth2SecurityScheme.flows
	atAuthCode   // securitySchemes.*.oauth2SecurityScheme.flows.authorizationCode
)

// member is the place of member k of an object at p.
func (p place) member(k string) place {
	switch {
	case p == atCard && k == "capabilities":
		return atCapabilities
	case p == atCapabilities && k == "extensions":
		return atExtensions
	case p == atCard && k == "securitySchemes":
		return atSchemes
	case p == atSchemes:
		return atScheme
	case p == atScheme && k == "oauth2SecurityScheme":
		return atOAuth2
	case p == atOAuth2 && k == "flows":
		return atFlows
	case p == atFlows && k == "authorizationCode":
		return atAuthCode
	}
	return elsewhere
}

// element is the place of an element of an array at p.
func (p place) element() place {
	if p == atExtensions {
		return atExtension
	}
	return elsewhere
}

// plainBoolean reports whether member k of an object at p is one of the
// two booleans without field presence: AgentExtension.required and
// AuthorizationCodeOAuthFlow.pkceRequired.
func (p place) plainBoolean(k string) bool {
	return p == atExtension && k == "required" || p == atAuthCode && k == "pkceRequired"
}

// kindOf names a decoded JSON value's kind for an error.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
