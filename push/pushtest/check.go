package pushtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/wopinterop/wopinterop/push"
)

// Interface names the driver interface a check is about.
type Interface string

// The interfaces the kit checks.
const (
	ConfigStore Interface = "ConfigStore"
	Vault       Interface = "Vault"
	Outbox      Interface = "Outbox"
)

// Check is one named guarantee of a driver interface.
type Check struct {
	// Name is stable and usable as a subtest name.
	Name string
	// Of is the interface the check is about.
	Of Interface
	// Guarantee says in one line what a store must do to pass.
	Guarantee string

	run func(ctx context.Context, k *kit) error
}

// Run builds the stores the check needs through h — registering their
// cleanup with t — runs the check and returns the first violation found,
// or nil. It returns an error wrapping [ErrMissingStore] when h builds no
// store of c.Of, and one wrapping [ErrInvalidHarness] when h is invalid.
// ctx bounds the check: every wait of the kit's own gives up when ctx is
// done and reports what did not happen; store calls receive ctx.
func (c Check) Run(ctx context.Context, t testing.TB, h Harness) error {
	if err := h.Validate(); err != nil {
		return err
	}
	if !h.Builds(c.Of) {
		return fmt.Errorf("%w: %s checks a %s", ErrMissingStore, c.Name, c.Of)
	}
	if c.run == nil {
		return fmt.Errorf("pushtest: check %q was not obtained from Checks", c.Name)
	}
	k := &kit{}
	switch c.Of {
	case ConfigStore:
		k.configs[0] = h.NewConfigs(t)
		k.configs[1] = k.configs[0]
		if h.ConfigsReplica != nil {
			k.configs[1] = h.ConfigsReplica(t, k.configs[0])
		}
	case Vault:
		k.vault[0] = h.NewVault(t)
		k.vault[1] = k.vault[0]
		if h.VaultReplica != nil {
			k.vault[1] = h.VaultReplica(t, k.vault[0])
		}
	case Outbox:
		k.outbox[0] = h.NewOutbox(t)
		k.outbox[1] = k.outbox[0]
		if h.OutboxReplica != nil {
			k.outbox[1] = h.OutboxReplica(t, k.outbox[0])
		}
	}
	return c.run(ctx, k)
}

// kit is what one check works with: two handles on one store (the same
// handle twice when the harness opens no replica).
type kit struct {
	configs [2]push.ConfigStore
	vault   [2]push.Vault
	outbox  [2]push.Outbox
}

// Checks returns every check of the kit in a fixed order: the ConfigStore
// checks, then the Vault's, then the Outbox's. Each call returns a new
// slice.
func Checks() []Check {
	var out []Check
	out = append(out, ConfigStoreChecks()...)
	out = append(out, VaultChecks()...)
	return append(out, OutboxChecks()...)
}

// ConfigStoreChecks returns the checks of a [push.ConfigStore].
func ConfigStoreChecks() []Check {
	return []Check{
		{Name: "configs-put-get-list", Of: ConfigStore, run: checkConfigsPutGetList,
			Guarantee: "Put stores every field of a record; Get and List return it as stored, List in registration order and only the task's own"},
		{Name: "configs-unknown-is-not-found", Of: ConfigStore, run: checkConfigsUnknown,
			Guarantee: "Get of an id the task does not hold is ErrConfigNotFound (an interop.ErrNotFound), also when another task holds it; Delete, Finish and Advance of what is absent succeed and change nothing"},
		{Name: "configs-replace-keeps-order", Of: ConfigStore, run: checkConfigsReplace,
			Guarantee: "Put of a held id replaces the record in its place, returns the old one, and is allowed on a task at its limit"},
		{Name: "configs-limit", Of: ConfigStore, run: checkConfigsLimit,
			Guarantee: "adding a record to a task holding max is ErrTooManyConfigs and stores nothing; other tasks and a deletion's freed slot are unaffected; max < 1 is no limit"},
		{Name: "configs-limit-under-concurrency", Of: ConfigStore, run: checkConfigsLimitConcurrent,
			Guarantee: "of concurrent Puts of distinct ids on one task, from every replica, exactly max succeed and the task holds exactly those"},
		{Name: "configs-delete", Of: ConfigStore, run: checkConfigsDelete,
			Guarantee: "Delete returns the removed record with its SecretRef, Get no longer finds it, the others keep their order, a repeat reports nothing deleted"},
		{Name: "configs-finish", Of: ConfigStore, run: checkConfigsFinish,
			Guarantee: "Finish marks the record done and clears its SecretRef only while it still holds the given secretRef; a replacement keeps its own"},
		{Name: "configs-advance", Of: ConfigStore, run: checkConfigsAdvance,
			Guarantee: "Advance raises every watermark of the task that is lower than seq, never lowers one, and leaves other tasks alone"},
		{Name: "configs-live", Of: ConfigStore, run: checkConfigsLive,
			Guarantee: "Live returns every record not done, of every task, and no done one"},
		{Name: "configs-copies", Of: ConfigStore, run: checkConfigsCopies,
			Guarantee: "a record given to Put or returned by Get, List or Live shares nothing with the store: changing it changes nothing stored"},
	}
}

// VaultChecks returns the checks of a [push.Vault].
func VaultChecks() []Check {
	return []Check{
		{Name: "vault-round-trip", Of: Vault, run: checkVaultRoundTrip,
			Guarantee: "Open returns exactly the secret sealed, through every replica: credentials and token, empty, 4096 characters, any UTF-8"},
		{Name: "vault-unknown-ref", Of: Vault, run: checkVaultUnknown,
			Guarantee: "Open of a ref never sealed, the empty ref, or a discarded ref is ErrSecretNotFound"},
		{Name: "vault-discard", Of: Vault, run: checkVaultDiscard,
			Guarantee: "Discard forgets its ref on every replica and no other; discarding again or an unknown ref succeeds"},
		{Name: "vault-refs-unguessable", Of: Vault, run: checkVaultRefs,
			Guarantee: "every Seal returns a new ref of at least 16 characters, carrying nothing of the secret, whose neighbours (a character or a number one up or down) open nothing"},
		{Name: "vault-concurrent", Of: Vault, run: checkVaultConcurrent,
			Guarantee: "concurrent Seal, Open and Discard from every replica lose no secret and mix none up"},
	}
}

// OutboxChecks returns the checks of a [push.Outbox].
func OutboxChecks() []Check {
	return []Check{
		{Name: "outbox-put-lease-remove", Of: Outbox, run: checkOutboxPutLeaseRemove,
			Guarantee: "Lease returns a delivery as Put, every field (a nil Body nil), and none after Remove; max < 1 leases nothing"},
		{Name: "outbox-put-is-idempotent", Of: Outbox, run: checkOutboxPutIdempotent,
			Guarantee: "Put of an id the outbox holds changes nothing: not the body, not its place in the lane, not its lease"},
		{Name: "outbox-lane-order", Of: Outbox, run: checkOutboxLaneOrder,
			Guarantee: "only a lane's head (its oldest delivery) is leased, heads oldest first, so every (task, config) is drained in Put order whichever owner leases"},
		{Name: "outbox-no-double-lease", Of: Outbox, run: checkOutboxNoDoubleLease,
			Guarantee: "owners leasing and removing concurrently, from every replica, get each delivery once, never two of one lane at a time, each lane in Put order"},
		{Name: "outbox-expiry-takeover", Of: Outbox, run: checkOutboxTakeover,
			Guarantee: "a live lease is not leased again; once it expires another owner leases the delivery, and the first owner's Renew reports it lost and its Release does nothing"},
		{Name: "outbox-renew", Of: Outbox, run: checkOutboxRenew,
			Guarantee: "Renew keeps a lease live past its ttl for as long as it is renewed, and reports ids the owner does not hold as lost"},
		{Name: "outbox-release", Of: Outbox, run: checkOutboxRelease,
			Guarantee: "Release gives a lease back at once, keeping the delivery the lane's head; a Release by an owner that does not hold it does nothing"},
		{Name: "outbox-crash-at-least-once", Of: Outbox, run: checkOutboxCrash,
			Guarantee: "the deliveries of an owner that never renews nor removes are all taken over after expiry, each lane in Put order, none lost"},
		{Name: "outbox-remove-idempotent", Of: Outbox, run: checkOutboxRemove,
			Guarantee: "Remove of an unknown or removed id succeeds; Remove of a queued delivery or another owner's leased head forgets it and keeps the lane's order"},
	}
}

// RunConformance runs every check whose interface h builds as a subtest
// of t, each on fresh stores and bounded by h.Timeout; the checks of the
// other interfaces are skipped. To check one interface, set only its New
// function.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		t.Run(c.Name, func(t *testing.T) {
			if !h.Builds(c.Of) {
				t.Skipf("harness builds no %s", c.Of)
			}
			ctx, cancel := context.WithTimeout(t.Context(), h.timeout())
			defer cancel()
			if err := c.Run(ctx, t, h); err != nil {
				t.Errorf("%s (%s): %v", c.Name, c.Guarantee, err)
			}
		})
	}
}
