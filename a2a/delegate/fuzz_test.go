package delegate

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/wopinterop/wopinterop/internal/sseread"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/version"
)

// FuzzDecodeResponse: whatever a peer answers, the decoder returns a
// result, a *PeerError or an *InvalidResponseError — never a panic, never
// another error — and a PeerError keeps nothing but a reason token and
// well-formed versions; a result that decodes is a complete event or task.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"wop-1","result":` + completedTask + `}`,
		`{"jsonrpc":"2.0","id":"wop-1","result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"},{"data":{"a":[1,{"b":null}]}}]}}}`,
		`{"jsonrpc":"2.0","id":"wop-1","result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[]}}}}}`,
		`{"jsonrpc":"2.0","id":"wop-1","result":{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"url":"https://x"}]}}}}`,
		`{"jsonrpc":"2.0","id":"wop-1","error":{"code":-32001,"message":"x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32009,"message":"x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","metadata":{"supportedVersions":"1.0,1.1","n":3}}]}}`,
		`{"jsonrpc":"2.0","id":"wop-1","error":{"code":-32000,"message":"x","data":{"reason":"TASK_NOT_CANCELABLE"}}}`,
		`{"jsonrpc":"2.0","id":"wop-1","result":{"task":{"ID":"t","contextId":"c","status":{"state":"x"}}}}`,
		`{"jsonrpc":"2.0","id":"wop-1","result":{"kind":"task"}}`,
		`{"jsonrpc":"2.0","id":"wop-1"}`,
		`[`, `null`, `{"jsonrpc":"2.0","id":"wop-1","result":{"message":{"meſsageId":"m"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, status := range []int{200, 401, 503} {
			raw, err := readResponse(status, body, "wop-1")
			checkDecodeError(t, err)
			if err != nil || raw == nil {
				continue
			}
			if ev, err := decodeEvent(raw, streamEvent); err == nil {
				if ev == nil || checkEvent(ev) != "" {
					t.Fatalf("decodeEvent passed an incomplete event: %s", raw)
				}
			} else {
				checkDecodeError(t, err)
			}
			if task, err := decodeTask(raw); err == nil {
				if checkTask(task) != "" {
					t.Fatalf("decodeTask passed an incomplete task: %s", raw)
				}
			} else {
				checkDecodeError(t, err)
			}
		}
	})
}

func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	var pe *PeerError
	var ie *InvalidResponseError
	switch {
	case err == nil:
	case errors.As(err, &pe):
		if pe.Reason != "" && !validReason(pe.Reason) {
			t.Fatalf("kept reason %q", pe.Reason)
		}
		for _, v := range pe.SupportedVersions {
			if n, ok := version.A2A(v); !ok || n != v {
				t.Fatalf("kept version %q", v)
			}
		}
		if len(pe.SupportedVersions) > 0 && pe.Unwrap() != wire.ErrVersionNotSupported {
			t.Fatal("supported versions kept for another error")
		}
	case errors.As(err, &ie):
		if !errors.Is(err, wire.ErrInvalidAgentResponse) {
			t.Fatal("an invalid response that is not -32006")
		}
	default:
		t.Fatalf("unexpected error type %T: %v", err, err)
	}
}

// FuzzDecodeCard: a card either decodes whole — a name, skills with
// unique ids, interfaces with a URL, a binding and a version, or the one
// version of a 0.3 card — or is refused with a problem.
func FuzzDecodeCard(f *testing.F) {
	for _, s := range []string{
		`{"name":"x","skills":[{"id":"a","name":"A","description":"d","tags":[]}],"supportedInterfaces":[{"url":"https://a.example/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"t"}],"capabilities":{"streaming":true},"signatures":[{"protected":"e30","signature":"c2ln"}]}`,
		`{"name":"x","protocolVersion":"0.3.0","url":"https://a.example","skills":[],"securitySchemes":{"b":{"type":"http"}}}`,
		`{"name":"x","Skills":[]}`, `{"name":"x","skills":[{"id":"a"},{"id":"a"}],"supportedInterfaces":[]}`, `{}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		card, legacy, problem := decodeCard(raw)
		if problem != "" {
			if card != nil {
				t.Fatal("a refused card was returned")
			}
			return
		}
		if card == nil || card.Name == "" || card.Skills == nil {
			t.Fatalf("an incomplete card passed: %s", raw)
		}
		if legacy != "" {
			return
		}
		if len(card.SupportedInterfaces) == 0 {
			t.Fatalf("a card without interfaces passed: %s", raw)
		}
		for _, i := range card.SupportedInterfaces {
			if i == nil || i.URL == "" || i.ProtocolBinding == "" || i.ProtocolVersion == "" {
				t.Fatalf("an incomplete interface passed: %s", raw)
			}
		}
	})
}

// FuzzSSEData: no event the reader yields is longer than the limit, and a
// stream is either read to its end or stopped by the limit.
func FuzzSSEData(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: b\r\ndata: c\r\n\r\n: comment\n\nevent: x\nid: 1\nretry: 5\ndata\n\n"), uint16(64))
	f.Add([]byte("data: "+string(bytes.Repeat([]byte("z"), 300))+"\n\n"), uint16(100))
	f.Add([]byte("data: unterminated"), uint16(10))
	f.Fuzz(func(t *testing.T, body []byte, limit uint16) {
		for data, err := range sseread.Data(bytes.NewReader(body), int64(limit)) {
			if err != nil {
				if !errors.Is(err, egress.ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if int64(len(data)) > int64(limit) {
				t.Fatalf("an event of %d bytes passed a limit of %d", len(data), limit)
			}
		}
	})
}

// FuzzRESTError: whatever an HTTP+JSON error answer holds, it is read as
// a *PeerError of its HTTP status or of a reason it names — never a
// panic — keeping a reason token and well-formed versions only.
func FuzzRESTError(f *testing.F) {
	for _, s := range []string{
		`{"error":{"code":404,"status":"NOT_FOUND","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`,
		`{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","metadata":{"supportedVersions":"1.0, 2.0","n":1}}]}}`,
		`{"error":{"code":400,"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}}`,
		`{"type":"about:blank","title":"x","status":403}`, `<html>`, `{"error":"x"}`, `{"error":{"details":{"reason":"UNAUTHENTICATED"}}}`,
	} {
		f.Add([]byte(s), uint16(400), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, status uint16, asJSON bool) {
		mt := "application/problem+json"
		if asJSON {
			mt = "application/json"
		}
		resp := &http.Response{StatusCode: 400 + int(status)%200, Body: io.NopCloser(bytes.NewReader(body))}
		e := readRESTError(resp, mt, 1<<10)
		if e == nil || e.HTTPStatus != resp.StatusCode || e.Unwrap() == nil {
			t.Fatalf("%+v for %d %s", e, resp.StatusCode, body)
		}
		checkDecodeError(t, e)
	})
}
