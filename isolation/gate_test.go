package isolation

import (
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

func TestMatchTenant(t *testing.T) {
	acme := interop.Subject{Tenant: "acme"}
	if err := MatchTenant(acme, "acme/"+op); err != nil {
		t.Errorf("own id: %v", err)
	}
	if err := MatchTenant(acme, "other/"+op); err != ErrTenantMismatch {
		t.Errorf("foreign id: %v, want ErrTenantMismatch", err)
	}
	if err := MatchTenant(interop.Subject{}, "acme/"+op); err != ErrTenantMismatch {
		t.Errorf("no tenant: %v, want ErrTenantMismatch", err)
	}
	if err := MatchTenant(acme, "acme~2F"+op); err != ErrMalformedID {
		t.Errorf("unparsed id: %v, want ErrMalformedID", err)
	}
}
