package a2a

// The one encoding of an error's details, shared by both bindings: a
// google.rpc.ErrorInfo (OpenWOP RFC 0211 §A, §B; its type URL is a2a-go's,
// errordetails.ErrorInfoType) and a google.rpc.BadRequest naming the
// offending field. JSON-RPC carries one of them as error.data[0]
// (jsonrpc_codec.go), HTTP+JSON both in google.rpc.Status details
// (status.go).
//
// The members are written in a fixed order — @type, reason, domain,
// metadata with its keys sorted — never a timestamp, so an error's bytes
// are the same on every request. errordetails.Typed would sort reason
// after domain; peers read either, but clients and caches that compare
// bytes see one form.

import (
	"maps"
	"slices"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// badRequestType is the type URL of google.rpc.BadRequest, which a2a-go's
// errordetails does not name.
const badRequestType = "type.googleapis.com/google.rpc.BadRequest"

// appendErrorInfo appends e's google.rpc.ErrorInfo:
//
//	{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":…,"domain":"a2a-protocol.org","metadata":{…}?}
func appendErrorInfo(dst []byte, e *Error) []byte {
	dst = append(dst, `{"@type":"`+errordetails.ErrorInfoType+`","reason":`...)
	dst = appendJSONString(dst, e.Reason)
	dst = append(dst, `,"domain":"`+wire.ProtocolDomain+`"`...)
	if len(e.Metadata) > 0 {
		dst = append(dst, `,"metadata":{`...)
		for i, k := range slices.Sorted(maps.Keys(e.Metadata)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSONString(dst, e.Metadata[k])
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendBadRequest appends a google.rpc.BadRequest with one field
// violation:
//
//	{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":…,"description":…}]}
func appendBadRequest(dst []byte, field, description string) []byte {
	dst = append(dst, `{"@type":"`+badRequestType+`","fieldViolations":[{"field":`...)
	dst = appendJSONString(dst, field)
	dst = append(dst, `,"description":`...)
	dst = appendJSONString(dst, description)
	return append(dst, `}]}`...)
}

// appendJSONString appends s as a JSON string exactly as encoding/json
// (json.Marshal, HTML escaping included) writes it: every string of A2A's
// hand-written bytes, so that they match what a2a-go encodes.
func appendJSONString(dst []byte, s string) []byte { return jsonbytes.AppendString(dst, s, true) }
