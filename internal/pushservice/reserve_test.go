package pushservice

import (
	"context"
	"errors"
	"testing"

	"github.com/wopinterop/wopinterop/push"
)

func withMaxPerTask(n int) envOption {
	return func(c *envConfig) { c.opts.MaxConfigsPerTask = n }
}

// TestReserveHoldsASlot: a reservation on an existing task holds one of
// its slots until it is committed or released; a spec that replaces a
// config of the task needs none.
func TestReserveHoldsASlot(t *testing.T) {
	e := newPushEnv(t, withMaxPerTask(2))
	e.resolver.set("hooks.partner.net", "93.184.216.34")
	ctx := context.Background()
	run := e.suspended(t, e.alice, 1)
	e.register(t, e.alice, run, Spec{ID: "one", URL: "https://hooks.partner.net/1"})

	held, err := e.svc.Reserve(ctx, run.ID, Spec{ID: "two", URL: "https://hooks.partner.net/2", Token: secretToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Reserve(ctx, run.ID, Spec{ID: "three", URL: "https://hooks.partner.net/3"}); !errors.Is(err, push.ErrTooManyConfigs) {
		t.Fatalf("a third config while the second is reserved: %v, want ErrTooManyConfigs", err)
	}
	replace, err := e.svc.Reserve(ctx, run.ID, Spec{ID: "one", URL: "https://hooks.partner.net/1b"})
	if err != nil {
		t.Fatalf("a replacement needs no slot: %v", err)
	}
	replace.Release(ctx)

	held.Release(ctx)
	if e.vault.Len() != 0 {
		t.Fatal("a released reservation keeps its secret")
	}
	again, err := e.svc.Reserve(ctx, run.ID, Spec{ID: "three", URL: "https://hooks.partner.net/3", Token: secretToken})
	if err != nil {
		t.Fatalf("the released slot is not free: %v", err)
	}
	cfg, err := again.Commit(ctx, e.alice, &run)
	if err != nil || cfg.ID != "three" {
		t.Fatalf("Commit: %+v, %v", cfg, err)
	}
	if e.vault.Len() != 1 {
		t.Fatalf("the committed config's secret: %d in the vault, want 1", e.vault.Len())
	}
	again.Release(ctx) // after Commit: nothing
	if e.vault.Len() != 1 {
		t.Fatal("Release after Commit discarded the committed secret")
	}
	if _, err := again.Commit(ctx, e.alice, &run); err == nil {
		t.Fatal("a reservation committed twice")
	}
	list, _ := e.svc.List(ctx, run.ID)
	if len(list) != 2 {
		t.Fatalf("%d configs, want 2", len(list))
	}
}

// TestReserveRefusesBeforeAnythingIsStored: everything that can refuse a
// registration refuses the reservation — a bad spec, the guard, a vault
// that cannot seal, a config store that cannot answer, a closed service —
// and a new task ("") reserves no slot.
func TestReserveRefusesBeforeAnythingIsStored(t *testing.T) {
	ctx := context.Background()
	t.Run("spec and guard", func(t *testing.T) {
		e := newPushEnv(t)
		if _, err := e.svc.Reserve(ctx, "", Spec{URL: "https://hooks.partner.net/", Scheme: "Bad Scheme"}); err == nil {
			t.Fatal("a bad scheme was reserved")
		}
		var fe *FieldError
		if _, err := e.svc.Reserve(ctx, "", Spec{URL: "http://169.254.169.254/"}); !errors.As(err, &fe) || fe.Field != "url" {
			t.Fatalf("a metadata URL: %v", err)
		}
	})
	t.Run("vault", func(t *testing.T) {
		e := newPushEnv(t, func(c *envConfig) { c.opts.Vault = sealFails{} })
		e.resolver.set("hooks.partner.net", "93.184.216.34")
		if _, err := e.svc.Reserve(ctx, "", Spec{URL: "https://hooks.partner.net/", Token: secretToken}); err == nil {
			t.Fatal("reserved with a vault that cannot seal")
		}
	})
	t.Run("config store", func(t *testing.T) {
		e := newPushEnv(t, func(c *envConfig) { c.opts.Configs = listFails{push.NewMemoryConfigs()} })
		e.resolver.set("hooks.partner.net", "93.184.216.34")
		if _, err := e.svc.Reserve(ctx, "", Spec{URL: "https://hooks.partner.net/"}); err == nil {
			t.Fatal("reserved a new task's config with a config store that is down")
		}
	})
	t.Run("closed", func(t *testing.T) {
		e := newPushEnv(t)
		_ = e.svc.Close(ctx)
		if _, err := e.svc.Reserve(ctx, "", Spec{URL: "https://hooks.partner.net/"}); !errors.Is(err, ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
	})
}

type sealFails struct{ *push.MemoryVault }

func (sealFails) Seal(context.Context, push.Secret) (string, error) {
	return "", errors.New("sealed shut")
}

type listFails struct{ *push.MemoryConfigs }

func (listFails) List(context.Context, string) ([]push.Record, error) { return nil, errors.New("down") }
