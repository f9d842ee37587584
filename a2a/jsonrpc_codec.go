package a2a

// JSON-RPC response bytes: the envelope is the shared codec's
// (internal/jsonrpc), the error data A2A's own.

import "github.com/wopinterop/wopinterop/internal/jsonrpc"

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
	dst = jsonrpc.AppendErrorStart(dst, id, jsonrpc.NullID, e.Code, e.Message, true)
	switch {
	case e.Field != "" && e.Code == codeInvalidParams:
		dst = append(dst, `,"data":[`...)
		dst = append(appendBadRequest(dst, e.Field, e.Message), ']')
	case e.Reason != "":
		dst = append(dst, `,"data":[`...)
		dst = append(appendErrorInfo(dst, e), ']')
	}
	return jsonrpc.AppendErrorEnd(dst)
}

// appendRPCResult writes a success response around the encoded result into
// b.out, wrapped as its row says.
func appendRPCResult(b *buffers, id []byte, kind resultKind, value any) error {
	out := &b.out
	out.Grow(len(`{"jsonrpc":"2.0","id":,"result":`) + len(id))
	out.Write(jsonrpc.AppendResultStart(out.AvailableBuffer(), id))
	if kind == resultEmpty {
		out.WriteString(`{}}`)
		return nil
	}
	if kind == resultInTask {
		out.WriteString(`{"task":`)
	}
	if err := encodeResult(b, value); err != nil {
		return err
	}
	if kind == resultInTask {
		out.WriteByte('}')
	}
	out.WriteByte('}')
	return nil
}
