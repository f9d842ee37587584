package pushtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/push"
	"github.com/wopinterop/wopinterop/push/pushtest"
)

// memHarness runs the kit on the in-memory defaults.
func memHarness() pushtest.Harness {
	return pushtest.Harness{
		NewConfigs: func(testing.TB) push.ConfigStore { return push.NewMemoryConfigs() },
		NewVault:   func(testing.TB) push.Vault { return push.NewMemoryVault() },
		NewOutbox:  func(testing.TB) push.Outbox { return push.NewMemoryOutbox() },
	}
}

// TestMemoryStoresConform: the in-memory defaults pass every check.
func TestMemoryStoresConform(t *testing.T) {
	t.Parallel()
	pushtest.RunConformance(t, memHarness())
}

// TestReplicaHandles: the checks use the second handle a harness opens;
// a memory store's second handle is itself.
func TestReplicaHandles(t *testing.T) {
	t.Parallel()
	h := memHarness()
	opened := map[string]int{}
	h.ConfigsReplica = func(_ testing.TB, c push.ConfigStore) push.ConfigStore { opened["configs"]++; return c }
	h.VaultReplica = func(_ testing.TB, v push.Vault) push.Vault { opened["vault"]++; return v }
	h.OutboxReplica = func(_ testing.TB, o push.Outbox) push.Outbox { opened["outbox"]++; return o }
	pushtest.RunConformance(t, h)
	want := map[string]int{
		"configs": len(pushtest.ConfigStoreChecks()),
		"vault":   len(pushtest.VaultChecks()),
		"outbox":  len(pushtest.OutboxChecks()),
	}
	for k, n := range want {
		if opened[k] != n {
			t.Errorf("%s replica opened %d times, want once per check (%d)", k, opened[k], n)
		}
	}
}

func TestChecksAreNamedUniquely(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range pushtest.Checks() {
		if c.Name == "" || c.Guarantee == "" || c.Of == "" {
			t.Errorf("check %q has no name, interface or guarantee", c.Name)
		}
		if seen[c.Name] {
			t.Errorf("check name %q repeats", c.Name)
		}
		seen[c.Name] = true
	}
	n := len(pushtest.ConfigStoreChecks()) + len(pushtest.VaultChecks()) + len(pushtest.OutboxChecks())
	if n != len(pushtest.Checks()) {
		t.Errorf("the per-interface lists hold %d checks, Checks %d", n, len(pushtest.Checks()))
	}
}

func TestHarnessValidate(t *testing.T) {
	valid := memHarness()
	if err := valid.Validate(); err != nil {
		t.Fatalf("valid harness: %v", err)
	}
	tests := []struct {
		name   string
		modify func(*pushtest.Harness)
	}{
		{"no store", func(h *pushtest.Harness) { *h = pushtest.Harness{} }},
		{"configs replica alone", func(h *pushtest.Harness) {
			h.NewConfigs = nil
			h.ConfigsReplica = func(_ testing.TB, c push.ConfigStore) push.ConfigStore { return c }
		}},
		{"vault replica alone", func(h *pushtest.Harness) {
			h.NewVault = nil
			h.VaultReplica = func(_ testing.TB, v push.Vault) push.Vault { return v }
		}},
		{"outbox replica alone", func(h *pushtest.Harness) {
			h.NewOutbox = nil
			h.OutboxReplica = func(_ testing.TB, o push.Outbox) push.Outbox { return o }
		}},
		{"negative timeout", func(h *pushtest.Harness) { h.Timeout = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := valid
			tt.modify(&h)
			if err := h.Validate(); !errors.Is(err, pushtest.ErrInvalidHarness) {
				t.Errorf("Validate = %v, want ErrInvalidHarness", err)
			}
			if err := pushtest.Checks()[0].Run(t.Context(), t, h); !errors.Is(err, pushtest.ErrInvalidHarness) {
				t.Errorf("Check.Run = %v, want ErrInvalidHarness", err)
			}
		})
	}
}

// TestOneInterface: a harness with only an outbox runs the outbox checks
// and refuses the others with ErrMissingStore.
func TestOneInterface(t *testing.T) {
	t.Parallel()
	h := pushtest.Harness{NewOutbox: func(testing.TB) push.Outbox { return push.NewMemoryOutbox() }}
	for _, c := range pushtest.Checks() {
		err := c.Run(t.Context(), t, h)
		switch {
		case c.Of == pushtest.Outbox && err != nil:
			t.Errorf("%s: %v", c.Name, err)
		case c.Of != pushtest.Outbox && !errors.Is(err, pushtest.ErrMissingStore):
			t.Errorf("%s without a %s = %v, want ErrMissingStore", c.Name, c.Of, err)
		}
	}
}

func TestHandMadeCheckIsRefused(t *testing.T) {
	err := pushtest.Check{Name: "mine", Of: pushtest.Vault}.Run(context.Background(), t, memHarness())
	if err == nil || !strings.Contains(err.Error(), `check "mine" was not obtained from Checks`) {
		t.Errorf("Run of a hand-made Check = %v, want a refusal naming it", err)
	}
}
