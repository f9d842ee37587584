package sealedtest_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/mcp/sealed/sealedtest"
)

// mapLedger is a ledger over a map, each field breaking one guarantee
// when set.
type mapLedger struct {
	mu   sync.Mutex
	seen map[string]time.Time // key → when consumed
	// key maps an id (and its expiry) to what is stored; nil: the id.
	key func(id string, exp time.Time) string
	// gap: the read and the write are two steps.
	gap bool
	// forgetAfter: ids are forgotten this long after their Consume,
	// whatever their expiry.
	forgetAfter time.Duration
	// expiredFresh: an id already expired is answered fresh, unrecorded.
	expiredFresh bool
}

func newMapLedger() *mapLedger { return &mapLedger{seen: map[string]time.Time{}} }

func (l *mapLedger) Consume(ctx context.Context, id string, exp time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if l.expiredFresh && exp.Before(time.Now()) {
		return true, nil
	}
	k := id
	if l.key != nil {
		k = l.key(id, exp)
	}
	l.mu.Lock()
	at, ok := l.seen[k]
	if ok && l.forgetAfter > 0 && time.Since(at) > l.forgetAfter {
		ok = false
	}
	if l.gap {
		l.mu.Unlock()
		time.Sleep(time.Millisecond) // the window of a read-then-write
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	if ok {
		return false, nil
	}
	l.seen[k] = time.Now()
	return true, nil
}

type brokenCase struct {
	name, check, want string
	// alsoFails are the other checks the break trips; mayFail those it
	// trips only when a race goes its way. Every other check must pass.
	alsoFails, mayFail []string
	h                  sealedtest.Harness
}

func ledgerOf(l func() *mapLedger) sealedtest.Harness {
	return sealedtest.Harness{NewLedger: func(testing.TB) sealed.Ledger { return l() }}
}

func brokenCases() []brokenCase {
	return []brokenCase{
		{
			name: "a replay with another expiry is fresh", check: "ledger-single-use", want: "expiry moved by 1h0m0s",
			h: ledgerOf(func() *mapLedger {
				l := newMapLedger()
				l.key = func(id string, exp time.Time) string { return id + "|" + exp.String() }
				return l
			}),
		},
		{
			name: "read, then write", check: "ledger-single-use-concurrent", want: "concurrent Consumes of one id were fresh",
			mayFail: []string{"sealer-single-use"},
			h:       ledgerOf(func() *mapLedger { l := newMapLedger(); l.gap = true; return l }),
		},
		{
			name: "ids compared without case", check: "ledger-ids-independent", want: "differ only in case",
			h: ledgerOf(func() *mapLedger {
				l := newMapLedger()
				l.key = func(id string, _ time.Time) string { return strings.ToLower(id) }
				return l
			}),
		},
		{
			name: "ids forgotten after 200ms", check: "ledger-kept-until-expiry", want: "forgot it too early",
			h: ledgerOf(func() *mapLedger { l := newMapLedger(); l.forgetAfter = 200 * time.Millisecond; return l }),
		},
		{
			name: "an expired id is fresh and not recorded", check: "ledger-expired-id-single-use", want: "fresh twice",
			h: ledgerOf(func() *mapLedger { l := newMapLedger(); l.expiredFresh = true; return l }),
		},
		{
			name: "each replica keeps its own ledger", check: "sealer-single-use", want: "on replica 0",
			alsoFails: []string{"ledger-single-use", "ledger-single-use-concurrent", "ledger-kept-until-expiry", "ledger-expired-id-single-use"},
			h: sealedtest.Harness{
				NewLedger: func(testing.TB) sealed.Ledger { return newMapLedger() },
				Replica:   func(testing.TB, sealed.Ledger) sealed.Ledger { return newMapLedger() },
			},
		},
	}
}

// TestBrokenLedgers proves that every check fails against a ledger
// breaking its guarantee, for the stated reason, while the other checks
// still pass.
func TestBrokenLedgers(t *testing.T) {
	t.Parallel()
	caught := map[string]bool{}
	for _, bc := range brokenCases() {
		caught[bc.check] = true
	}
	for _, c := range sealedtest.Checks() {
		if !caught[c.Name] {
			t.Errorf("no broken ledger proves check %q can fail", c.Name)
		}
	}
	for _, bc := range brokenCases() {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range sealedtest.Checks() {
				ctx, cancel := context.WithTimeout(t.Context(), sealedtest.DefaultTimeout)
				err := c.Run(ctx, t, bc.h)
				cancel()
				switch {
				case c.Name == bc.check:
					if err == nil {
						t.Errorf("%s passed against a ledger where %s", c.Name, bc.name)
					} else if !strings.Contains(err.Error(), bc.want) {
						t.Errorf("%s failed for another reason than expected:\n got: %v\nwant: …%s…", c.Name, err, bc.want)
					}
				case slices.Contains(bc.mayFail, c.Name):
				case slices.Contains(bc.alsoFails, c.Name):
					if err == nil {
						t.Errorf("%s was expected to fail too, but passed", c.Name)
					}
				default:
					if err != nil {
						t.Errorf("%s should be unaffected by this break, but failed: %v", c.Name, err)
					}
				}
			}
		})
	}
}
