package sealedtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// Check is one named guarantee of the Ledger contract.
type Check struct {
	// Name is stable and usable as a subtest name.
	Name string
	// Guarantee says in one line what a ledger must do to pass.
	Guarantee string

	run func(ctx context.Context, l [2]sealed.Ledger) error
}

// Run builds the ledger through h — registering its cleanup with t —
// runs the check and returns the first violation found, or nil. It
// returns an error wrapping [ErrInvalidHarness] when h is invalid. ctx
// bounds the check; ledger calls receive it.
func (c Check) Run(ctx context.Context, t testing.TB, h Harness) error {
	if err := h.Validate(); err != nil {
		return err
	}
	if c.run == nil {
		return fmt.Errorf("sealedtest: check %q was not obtained from Checks", c.Name)
	}
	var l [2]sealed.Ledger
	l[0] = h.NewLedger(t)
	l[1] = l[0]
	if h.Replica != nil {
		l[1] = h.Replica(t, l[0])
	}
	return c.run(ctx, l)
}

// Checks returns every check of the kit in a fixed order. Each call
// returns a new slice.
func Checks() []Check {
	return []Check{
		{Name: "ledger-single-use", run: checkSingleUse,
			Guarantee: "the first Consume of an id is fresh, every later one — on any replica, with any expiry — is not"},
		{Name: "ledger-single-use-concurrent", run: checkConcurrent,
			Guarantee: "of concurrent Consumes of one id from every replica exactly one is fresh"},
		{Name: "ledger-ids-independent", run: checkIndependent,
			Guarantee: "ids are compared exactly (byte for byte, case included): consuming one leaves every other fresh"},
		{Name: "ledger-kept-until-expiry", run: checkKept,
			Guarantee: "an id is kept at least until its expiresAt: a replay before then is not fresh"},
		{Name: "ledger-expired-id-single-use", run: checkExpired,
			Guarantee: "an id whose expiresAt has passed may be refused at once, but is never fresh twice"},
		{Name: "sealer-single-use", run: checkSealer,
			Guarantee: "a requestState sealed on one replica opens once on any replica sharing the key and the ledger; a second Open anywhere is ErrReplayed"},
	}
}

// RunConformance runs every check as a subtest of t, each on a fresh
// ledger from h.NewLedger and bounded by h.Timeout.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), h.timeout())
			defer cancel()
			if err := c.Run(ctx, t, h); err != nil {
				t.Errorf("%s (%s): %v", c.Name, c.Guarantee, err)
			}
		})
	}
}
