package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// failingSink refuses every record.
type failingSink struct{ interop.EventSink }

func (failingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	return errors.New("audit trail down")
}

// A decision the Auditor cannot record fails the request with 500 -32603,
// whatever it decided: an accepted request, and the refusals of the
// authentication step alike (internal/admit; negotiate
// AuditorOptions.Synchronous). Nothing runs.
func TestAuditFailureFailsTheRequest(t *testing.T) {
	e := newEnv(t, func(c *testConfig) {
		c.Auditor = negotiate.NewAuditor(failingSink{c.Store.(interop.EventSink)}, negotiate.AuditorOptions{Synchronous: true})
	})
	for _, tc := range []struct {
		name string
		q    rpc
		want string
	}{
		{"no credential", rpc{method: "tools/list", hdr: map[string]string{"Authorization": ""}}, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}`},
		{"forbidden credential", rpc{method: "tools/list", as: "forbidden"}, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}`},
		{"accepted", rpc{method: "tools/list"}, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, tc.q.request())
			if rec.Code != http.StatusInternalServerError || rec.Body.String() != tc.want {
				t.Errorf("HTTP %d %s, want 500 %s", rec.Code, rec.Body, tc.want)
			}
			if rec.Header().Get("WWW-Authenticate") != "" {
				t.Errorf("a server error carries WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}
