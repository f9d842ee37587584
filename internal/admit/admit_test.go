package admit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// sink keeps the records it is handed, or refuses them all.
type sink struct {
	tenants []string
	records []map[string]any
	fail    error
}

func (s *sink) AppendRunEvent(context.Context, string, interop.RunEvent) error { return nil }

func (s *sink) PublishHostEvent(_ context.Context, tenant string, ev interop.HostEvent) error {
	if s.fail != nil {
		return s.fail
	}
	var rec map[string]any
	if err := json.Unmarshal(ev.Payload, &rec); err != nil {
		return err
	}
	s.tenants = append(s.tenants, tenant)
	s.records = append(s.records, rec)
	return nil
}

func gate(t *testing.T, resolve func(*http.Request) (interop.Subject, error), anonymous bool) (*Gate, *sink) {
	t.Helper()
	p, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	return &Gate{
		Subjects:       interop.SubjectResolverFunc(resolve),
		Policy:         p,
		Auditor:        negotiate.NewAuditor(s, negotiate.AuditorOptions{Synchronous: true}),
		AllowAnonymous: anonymous,
	}, s
}

var acme = interop.Subject{Tenant: "acme", Workspace: "ws", Principal: "user:a", Authenticated: true}

func TestAuthenticate(t *testing.T) {
	fault := errors.New("directory down")
	for _, tc := range []struct {
		name      string
		sub       interop.Subject
		err       error
		anonymous bool
		want      error // nil: admitted
	}{
		{"authenticated", acme, nil, false, nil},
		{"anonymous admitted", interop.Subject{Tenant: "pub"}, nil, true, nil},
		{"anonymous refused", interop.Subject{Tenant: "pub"}, nil, false, interop.ErrUnauthenticated},
		{"no credential", interop.Subject{}, interop.ErrUnauthenticated, true, interop.ErrUnauthenticated},
		{"forbidden", acme, interop.ErrForbidden, true, interop.ErrForbidden},
		{"fault", acme, fault, true, fault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, s := gate(t, func(*http.Request) (interop.Subject, error) { return tc.sub, tc.err }, tc.anonymous)
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			sub, err := g.Authenticate(r, "9.9")
			if tc.want == nil {
				if err != nil || !reflect.DeepEqual(sub, tc.sub) || len(s.records) != 0 {
					t.Fatalf("admitted %+v, %v, %d records", sub, err, len(s.records))
				}
				return
			}
			if !errors.Is(err, tc.want) || !reflect.DeepEqual(sub, interop.Subject{}) {
				t.Fatalf("refused %+v with %v, want %v", sub, err, tc.want)
			}
			// One refused exchange, for no tenant, naming what was requested.
			if len(s.records) != 1 || s.tenants[0] != "" || s.records[0]["outcome"] != "refused" || s.records[0]["reason"] != "unauthenticated" || s.records[0]["requested"] != "9.9" {
				t.Fatalf("records %v for tenants %q", s.records, s.tenants)
			}
		})
	}
}

func TestNegotiate(t *testing.T) {
	g, s := gate(t, nil, false)
	d, err := g.Negotiate(t.Context(), "1.0", negotiate.Peer{Authenticated: true}, ScopeOf(acme))
	if err != nil || !d.Accepted() || len(s.records) != 1 || s.tenants[0] != "acme" || s.records[0]["outcome"] != "accepted" {
		t.Fatalf("accepted: %+v %v, records %v for %q", d, err, s.records, s.tenants)
	}
	d, err = g.Negotiate(t.Context(), "0.3", negotiate.Peer{Authenticated: true}, ScopeOf(acme))
	if err != nil || d.Accepted() || len(s.records) != 2 || s.records[1]["outcome"] != "refused" {
		t.Fatalf("refused: %+v %v, records %v", d, err, s.records)
	}
}

// The one audit-failure policy: a record that fails is an *AuditError,
// ahead of whatever the decision was.
func TestAuditFailure(t *testing.T) {
	down := errors.New("audit trail down")
	for _, resolveErr := range []error{nil, interop.ErrUnauthenticated, interop.ErrForbidden} {
		g, s := gate(t, func(*http.Request) (interop.Subject, error) { return acme, resolveErr }, false)
		s.fail = down
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		_, err := g.Authenticate(r, "1.0")
		if resolveErr == nil {
			if err != nil {
				t.Fatalf("an admitted caller is not recorded yet: %v", err)
			}
			_, err = g.Negotiate(t.Context(), "1.0", negotiate.Peer{Authenticated: true}, ScopeOf(acme))
		}
		if !IsAuditFailure(err) || !errors.Is(err, down) || (resolveErr != nil && errors.Is(err, resolveErr)) {
			t.Errorf("resolver %v: %v, want only the audit failure", resolveErr, err)
		}
	}
}
