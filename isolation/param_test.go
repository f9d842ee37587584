package isolation

import (
	"errors"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

func TestResolveParam(t *testing.T) {
	acme := interop.Subject{Tenant: "acme", Principal: "u1", Authenticated: true}
	anon := interop.Subject{Tenant: "anon:visitor"}
	noTenant := interop.Subject{}
	tests := []struct {
		name    string
		s       interop.Subject
		raw     string
		bare    BarePolicy
		want    string
		wantErr error // checked with errors.Is; nil means success
		notErr  []error
	}{
		// Bound ids in every form resolve as ParseID does, whatever the
		// policy; the tenant check belongs to the gate.
		{name: "projected", s: acme, raw: "acme~2F" + op, bare: RefuseBare, want: "acme/" + op},
		{name: "percent", s: acme, raw: "acme%2F" + op, bare: BindBare, want: "acme/" + op},
		{name: "bound", s: acme, raw: "acme/" + op, bare: RefuseBare, want: "acme/" + op},
		{name: "foreign bound is left to the gate", s: acme, raw: "other~2F" + op, bare: BindBare, want: "other/" + op},

		// Bare ids during the overlap bind to the caller's tenant only (OpenWOP
		// identity.md §5).
		{name: "bare bound to caller", s: acme, raw: op, bare: BindBare, want: "acme/" + op},
		{name: "bare bound to anon caller", s: anon, raw: op, bare: BindBare, want: "anon:visitor/" + op},
		{name: "bare percent-encoded", s: acme, raw: "%72-9f3cAB12cd34EF56", bare: BindBare, want: "acme/" + op},
		{name: "bare legacy tilde stays literal", s: acme, raw: "ab~cd" + op, bare: BindBare, want: "acme/ab~cd" + op},
		{name: "bare legacy tilde that looks like an escape", s: acme, raw: "ab~41" + op, bare: BindBare, want: "acme/ab~41" + op},
		{name: "bare dots", s: acme, raw: dots, bare: BindBare, want: "acme/" + dots},
		{name: "bare 128", s: acme, raw: op128, bare: BindBare, want: "acme/" + op128},

		// After the overlap a bare id is a validation error, not a tenant
		// mismatch and not not-found (OpenWOP identity.md §5).
		{name: "bare refused", s: acme, raw: op, bare: RefuseBare, wantErr: ErrBareID,
			notErr: []error{interop.ErrNotFound, ErrTenantMismatch}},
		{name: "bare refused is malformed", s: acme, raw: op, bare: RefuseBare, wantErr: ErrMalformedID},
		{name: "bare refused for tenantless caller", s: noTenant, raw: op, bare: RefuseBare, wantErr: ErrBareID},

		// A caller without a tenant has nothing a bare id could name.
		{name: "bare for tenantless caller", s: noTenant, raw: op, bare: BindBare, wantErr: ErrNotFound,
			notErr: []error{ErrMalformedID}},

		// Neither bound nor a valid bare segment: malformed, never bare.
		{name: "bare too short", s: acme, raw: op15, bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "bare too long", s: acme, raw: op129, bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "broken projected id is not re-bound", s: acme, raw: "acme~2F" + op15, bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "broken percent id is not re-bound", s: acme, raw: "acme%2F" + op15, bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "trailing slash is not re-bound", s: acme, raw: op + "/", bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "traversal", s: acme, raw: "..%2F..", bare: BindBare, wantErr: ErrMalformedID},
		{name: "bad percent escape", s: acme, raw: op + "%zz", bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "space", s: acme, raw: op + "%20", bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "unicode", s: acme, raw: op + "é", bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "empty", s: acme, raw: "", bare: BindBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
		{name: "empty refused", s: acme, raw: "", bare: RefuseBare, wantErr: ErrMalformedID, notErr: []error{ErrBareID}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveParam(tc.s, tc.raw, tc.bare)
			if tc.wantErr == nil {
				if err != nil || got != tc.want {
					t.Fatalf("ResolveParam(%q) = %q, %v; want %q", tc.raw, got, err, tc.want)
				}
				if !ValidBound(got) {
					t.Fatalf("resolved %q is not a bound id", got)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || got != "" {
				t.Fatalf("ResolveParam(%q) = %q, %v; want %v", tc.raw, got, err, tc.wantErr)
			}
			for _, not := range tc.notErr {
				if errors.Is(err, not) {
					t.Fatalf("ResolveParam(%q) error %v must not be %v", tc.raw, err, not)
				}
			}
		})
	}
}

func TestNewIDFor(t *testing.T) {
	s := interop.Subject{Tenant: "acme", Principal: "u1", Authenticated: true}
	id, err := newIDFor(s)
	if err != nil || TenantOf(id) != "acme" || MatchTenant(s, id) != nil {
		t.Fatalf("newIDFor = %q, %v", id, err)
	}
	if id, err := newIDFor(interop.Subject{}); !errors.Is(err, ErrMalformedID) || id != "" {
		t.Fatalf("newIDFor(no tenant) = %q, %v; want ErrMalformedID", id, err)
	}
}
