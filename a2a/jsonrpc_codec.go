package a2a

// JSON-RPC response bytes. The envelope is written by hand so that a
// result is encoded once, in place, and an error needs no encoder at all.

import "strconv"

// appendRPCError is the one function that turns an error into JSON-RPC
// wire bytes, for single responses, batch elements and stream frames alike
// (OpenWOP RFC 0211 §A, §D; interop map, a2a.fields):
//
//	{"jsonrpc":"2.0","id":<id|null>,"error":{"code":<code>,"message":<message>,"data":[<detail>]}}
//
// The detail is exactly one google.rpc.ErrorInfo, or, for -32602 naming a
// field, one google.rpc.BadRequest with that field violation
// (errordetail.go). An error without reason or field has no data. The
// message is the *Error's fixed text, never an error chain.
func appendRPCError(dst []byte, id []byte, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, e.Message)
	switch {
	case e.Field != "" && e.Code == codeInvalidParams:
		dst = append(dst, `,"data":[`...)
		dst = append(appendBadRequest(dst, e.Field, e.Message), ']')
	case e.Reason != "":
		dst = append(dst, `,"data":[`...)
		dst = append(appendErrorInfo(dst, e), ']')
	}
	return append(dst, `}}`...)
}

// appendRPCResult writes a success response around the encoded result into
// b.out, wrapped as its row says.
func appendRPCResult(b *buffers, id []byte, kind resultKind, value any) error {
	out := &b.out
	out.WriteString(`{"jsonrpc":"2.0","id":`)
	out.Write(id)
	out.WriteString(`,"result":`)
	if kind == resultEmpty {
		out.WriteString(`{}}`)
		return nil
	}
	if kind == resultInTask {
		out.WriteString(`{"task":`)
	}
	if err := b.enc.Encode(value); err != nil {
		return err
	}
	out.Truncate(out.Len() - 1) // Encode's newline
	if kind == resultInTask {
		out.WriteByte('}')
	}
	out.WriteByte('}')
	return nil
}
