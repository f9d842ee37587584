package sealedtest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// newID returns a fresh id shaped like a requestState id: 128 random
// bits, base64url without padding (22 characters).
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// consume calls Consume and wraps a failure.
func consume(ctx context.Context, l sealed.Ledger, id string, exp time.Time) (bool, error) {
	fresh, err := l.Consume(ctx, id, exp)
	if err != nil {
		return false, fmt.Errorf("Consume(%s): %w", id, err)
	}
	return fresh, nil
}

func checkSingleUse(ctx context.Context, l [2]sealed.Ledger) error {
	id, exp := newID(), time.Now().Add(10*time.Minute)
	fresh, err := consume(ctx, l[0], id, exp)
	if err != nil {
		return err
	}
	if !fresh {
		return errors.New("the first Consume of a new id was not fresh")
	}
	for i, again := range []struct {
		l   sealed.Ledger
		exp time.Time
	}{{l[0], exp}, {l[1], exp}, {l[1], exp.Add(time.Hour)}, {l[0], exp.Add(-time.Minute)}} {
		fresh, err := consume(ctx, again.l, id, again.exp)
		if err != nil {
			return err
		}
		if fresh {
			return fmt.Errorf("replay %d of a consumed id (expiry moved by %v) was fresh", i+1, again.exp.Sub(exp))
		}
	}
	return nil
}

func checkConcurrent(ctx context.Context, l [2]sealed.Ledger) error {
	const callers, rounds = 32, 10
	for range rounds {
		id, exp := newID(), time.Now().Add(10*time.Minute)
		fresh := make([]bool, callers)
		errs := make([]error, callers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				<-start
				fresh[i], errs[i] = consume(ctx, l[i%2], id, exp)
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		n := 0
		for _, f := range fresh {
			if f {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%d of %d concurrent Consumes of one id were fresh, want exactly 1", n, callers)
		}
	}
	return nil
}

func checkIndependent(ctx context.Context, l [2]sealed.Ledger) error {
	exp := time.Now().Add(10 * time.Minute)
	base := newID()
	for !strings.ContainsAny(base, "abcdefghijklmnopqrstuvwxyz") {
		base = newID()
	}
	ids := []string{base, strings.ToUpper(base), base[:21] + string(base[21]^1)}
	for range 50 {
		ids = append(ids, newID())
	}
	for i, id := range ids {
		fresh, err := consume(ctx, l[i%2], id, exp)
		if err != nil {
			return err
		}
		if !fresh {
			return fmt.Errorf("the new id %q was not fresh after consuming %q (ids differ only in case or one character)", id, ids[:i])
		}
	}
	return nil
}

func checkKept(ctx context.Context, l [2]sealed.Ledger) error {
	id, exp := newID(), time.Now().Add(10*time.Second)
	if fresh, err := consume(ctx, l[0], id, exp); err != nil || !fresh {
		return fmt.Errorf("the first Consume: fresh %t, %v", fresh, err)
	}
	for _, wait := range []time.Duration{300 * time.Millisecond, 300 * time.Millisecond} {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		fresh, err := consume(ctx, l[1], id, exp)
		if err != nil {
			return err
		}
		if fresh {
			return fmt.Errorf("a replay %v before the id's expiry was fresh: the ledger forgot it too early", time.Until(exp).Round(time.Millisecond))
		}
	}
	return nil
}

func checkExpired(ctx context.Context, l [2]sealed.Ledger) error {
	for _, ago := range []time.Duration{time.Second, time.Hour} {
		id, exp := newID(), time.Now().Add(-ago)
		first, err := consume(ctx, l[0], id, exp)
		if err != nil {
			return err
		}
		second, err := consume(ctx, l[1], id, exp)
		if err != nil {
			return err
		}
		if first && second {
			return fmt.Errorf("an id that expired %v ago was fresh twice", ago)
		}
	}
	return nil
}

func checkSealer(ctx context.Context, l [2]sealed.Ledger) error {
	key := make([]byte, sealed.MinKeyLen)
	_, _ = rand.Read(key)
	var replicas [2]*sealed.Sealer
	for i := range replicas {
		s, err := sealed.NewSealer(sealed.Config{Key: key, Ledger: l[i]})
		if err != nil {
			return fmt.Errorf("NewSealer: %w", err)
		}
		replicas[i] = s
	}
	caller := interop.Subject{Tenant: "sealedtest", Principal: "alice", Authenticated: true}
	digest, err := sealed.RequestDigest("approve", []byte(`{"n":1}`))
	if err != nil {
		return err
	}
	grant := sealed.Grant{
		RunID: "sealedtest/R" + newID()[:21], InterruptIDs: []string{"sealedtest/I" + newID()[:21]},
		Round: 1, RequestDigest: digest,
	}
	expect := sealed.Expectation{Subject: caller, RequestDigest: digest}
	state, err := replicas[0].Seal(caller, grant)
	if err != nil {
		return fmt.Errorf("Seal: %w", err)
	}
	if _, err := replicas[1].Open(ctx, state, expect); err != nil {
		return fmt.Errorf("Open on the other replica: %w", err)
	}
	for i, s := range replicas {
		if _, err := s.Open(ctx, state, expect); !errors.Is(err, sealed.ErrReplayed) {
			return fmt.Errorf("a second Open on replica %d = %v, want ErrReplayed", i, err)
		}
	}
	// Two retries racing on two replicas: one wins.
	state, err = replicas[1].Seal(caller, grant)
	if err != nil {
		return fmt.Errorf("Seal: %w", err)
	}
	var errs [2]error
	var wg sync.WaitGroup
	for i, s := range replicas {
		wg.Go(func() { _, errs[i] = s.Open(ctx, state, expect) })
	}
	wg.Wait()
	ok, replayed := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, sealed.ErrReplayed):
			replayed++
		default:
			return fmt.Errorf("concurrent Open: %w", err)
		}
	}
	if ok != 1 || replayed != 1 {
		return fmt.Errorf("of two concurrent Opens on two replicas %d succeeded and %d were replays, want one each", ok, replayed)
	}
	return nil
}
