package sealedtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/mcp/sealed/sealedtest"
)

func memHarness() sealedtest.Harness {
	return sealedtest.Harness{
		NewLedger: func(testing.TB) sealed.Ledger { return sealed.NewMemoryLedger(sealed.MemoryLedgerConfig{}) },
	}
}

// TestMemoryLedgerConforms: the in-memory default passes every check,
// also through a replica handle (itself: one process).
func TestMemoryLedgerConforms(t *testing.T) {
	t.Parallel()
	sealedtest.RunConformance(t, memHarness())
	h := memHarness()
	opened := 0
	h.Replica = func(_ testing.TB, l sealed.Ledger) sealed.Ledger { opened++; return l }
	sealedtest.RunConformance(t, h)
	if opened != len(sealedtest.Checks()) {
		t.Errorf("the replica was opened %d times, want once per check", opened)
	}
}

func TestChecksAreNamedUniquely(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range sealedtest.Checks() {
		if c.Name == "" || c.Guarantee == "" || seen[c.Name] {
			t.Errorf("check %q has no name or guarantee, or repeats", c.Name)
		}
		seen[c.Name] = true
	}
}

func TestHarnessValidate(t *testing.T) {
	for name, h := range map[string]sealedtest.Harness{
		"no NewLedger":     {},
		"negative Timeout": {NewLedger: memHarness().NewLedger, Timeout: -1},
	} {
		if err := h.Validate(); !errors.Is(err, sealedtest.ErrInvalidHarness) {
			t.Errorf("%s: Validate = %v, want ErrInvalidHarness", name, err)
		}
		if err := sealedtest.Checks()[0].Run(t.Context(), t, h); !errors.Is(err, sealedtest.ErrInvalidHarness) {
			t.Errorf("%s: Check.Run = %v, want ErrInvalidHarness", name, err)
		}
	}
}

func TestHandMadeCheckIsRefused(t *testing.T) {
	err := sealedtest.Check{Name: "mine"}.Run(context.Background(), t, memHarness())
	if err == nil || !strings.Contains(err.Error(), `check "mine" was not obtained from Checks`) {
		t.Errorf("Run of a hand-made Check = %v, want a refusal naming it", err)
	}
}
