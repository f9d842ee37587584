package a2a

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// A caller the resolver forbids, or cannot judge, is one refused
// exchange like a caller without a credential: one negotiation.decided
// {refused, unauthenticated}, for no tenant, before the 403 or the 500 —
// on both bindings (OpenWOP interop.md §The audit event; internal/admit).
func TestNegotiationRecordOfForbiddenAndFaultyResolvers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		rest   int
		rpc    int
		rpcErr int
	}{
		{"forbidden", fmt.Errorf("host policy: %w", interop.ErrForbidden), 403, 403, codeForbidden},
		{"resolver fault", errors.New("directory down"), 500, 200, codeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec *sinkRecorder
			e := newRESTEnv(t, func(c *testConfig) {
				rec = &sinkRecorder{EventSink: c.Store.(interop.EventSink)}
				c.Auditor = negotiate.NewAuditor(rec, negotiate.AuditorOptions{Synchronous: true})
				c.Subjects = interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
					return interop.Subject{}, tc.err
				})
			})
			want := recordedPayload{Protocol: "a2a", Outcome: "refused", Requested: "1.0", Reason: "unauthenticated", Floor: "1.0"}
			mark := rec.mark()
			res := e.do(t, restCall{method: http.MethodGet, path: "/tasks", key: "key-acme"})
			got, tenant := oneRecord(t, rec, mark)
			want.At, want.PeerDigest = got.At, got.PeerDigest
			if res.status != tc.rest || got != want || tenant != "" {
				t.Errorf("HTTP+JSON: HTTP %d, record %+v for %q; want %d, %+v for none", res.status, got, tenant, tc.rest, want)
			}
			mark = rec.mark()
			rpc := e.rawRPC(t, t.Context(), "key-acme", "1.0", rpcBody(1, methodListTasks, nil))
			got, tenant = oneRecord(t, rec, mark)
			want.At, want.PeerDigest = got.At, got.PeerDigest
			if rpc.status != tc.rpc || got != want || tenant != "" {
				t.Errorf("JSON-RPC: HTTP %d, record %+v for %q; want %d, %+v for none", rpc.status, got, tenant, tc.rpc, want)
			}
			wantBody := string(appendRPCError(nil, nil, edgeCode(tc.rpcErr)))
			if string(rpc.body) != wantBody {
				t.Errorf("JSON-RPC body %s, want %s", rpc.body, wantBody)
			}
		})
	}
}

// edgeCode is the refusal of the admission step with that code.
func edgeCode(code int) *Error {
	if code == codeForbidden {
		return forbidden()
	}
	return internalError()
}

// failingSink refuses every record.
type failingSink struct{ interop.EventSink }

func (failingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	return errors.New("audit trail down")
}

// A decision the Auditor cannot record fails the request as an internal
// error, whatever it decided — an accepted request and the refusal of a
// caller without a credential alike (internal/admit; negotiate
// AuditorOptions.Synchronous). Nothing runs.
func TestAuditFailureFailsTheRequest(t *testing.T) {
	e := newRESTEnv(t, func(c *testConfig) {
		c.Auditor = negotiate.NewAuditor(failingSink{c.Store.(interop.EventSink)}, negotiate.AuditorOptions{Synchronous: true})
	})
	const restInternal = `{"error":{"code":500,"status":"INTERNAL","message":"internal error","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`
	const rpcInternal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`
	for _, key := range []string{"key-acme", ""} {
		res := e.do(t, restCall{method: http.MethodPost, path: "/message:send", key: key, body: restSendBody("m-audit", "hi")})
		if res.status != 500 || string(res.body) != restInternal {
			t.Errorf("HTTP+JSON with key %q: HTTP %d %s", key, res.status, res.body)
		}
		rpc := e.rawRPC(t, t.Context(), key, "1.0", rpcBody(1, methodListTasks, nil))
		if rpc.status != 200 || string(rpc.body) != rpcInternal {
			t.Errorf("JSON-RPC with key %q: HTTP %d %s", key, rpc.status, rpc.body)
		}
	}
	page, err := e.store.ListRuns(t.Context(), restKeys["key-acme"], interop.ListRunsQuery{})
	if err != nil || len(page.Runs) != 0 {
		t.Errorf("runs after refused requests: %d (%v)", len(page.Runs), err)
	}
}
