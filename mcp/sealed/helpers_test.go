package sealed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Test secrets: fixed so golden values stay valid. Never real keys.
var (
	keyA = []byte("test-secret-A-0123456789abcdef-0123456789")
	keyB = []byte("test-secret-B-0123456789abcdef-0123456789")
	keyC = []byte("test-secret-C-0123456789abcdef-0123456789")
)

// t0 is the fixed "now" of most tests.
var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

const (
	runID = "acme/RUNAAAAAAAAAAAAAAAAAAAAAAA"
	intr1 = "acme/INTAAAAAAAAAAAAAAAAAAAAAAA"
	intr2 = "acme/INTBBBBBBBBBBBBBBBBBBBBBBB"
)

var alice = interop.Subject{Tenant: "acme", Workspace: "ws1", Principal: "alice", Authenticated: true}

// fakeClock is a settable clock safe for concurrent reads.
type fakeClock struct{ ns atomic.Int64 }

func newClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.Set(t)
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// detReader is a deterministic byte stream (SHA-256 in counter mode over a
// seed) standing in for crypto/rand where a test needs golden output.
type detReader struct {
	seed string
	ctr  uint64
	buf  []byte
}

func (r *detReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.buf) == 0 {
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], r.ctr)
			r.ctr++
			sum := sha256.Sum256(append([]byte(r.seed), b[:]...))
			r.buf = sum[:]
		}
		c := copy(p[n:], r.buf)
		r.buf = r.buf[c:]
		n += c
	}
	return n, nil
}

// recordingLedger wraps a ledger and counts the calls that reach it.
type recordingLedger struct {
	inner Ledger
	mu    sync.Mutex
	calls []ledgerCall
}

type ledgerCall struct {
	id        string
	expiresAt time.Time
}

func (r *recordingLedger) Consume(ctx context.Context, id string, expiresAt time.Time) (bool, error) {
	r.mu.Lock()
	r.calls = append(r.calls, ledgerCall{id, expiresAt})
	r.mu.Unlock()
	return r.inner.Consume(ctx, id, expiresAt)
}

func (r *recordingLedger) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// fixture is a Sealer on a fake clock with a recording memory ledger.
type fixture struct {
	s      *Sealer
	clock  *fakeClock
	ledger *recordingLedger
}

func newFixture(t testing.TB, key []byte, previous ...[]byte) *fixture {
	t.Helper()
	clock := newClock(t0)
	ledger := &recordingLedger{inner: NewMemoryLedger(MemoryLedgerConfig{Now: clock.Now})}
	s, err := NewSealer(Config{Key: key, PreviousKeys: previous, Ledger: ledger, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, clock: clock, ledger: ledger}
}

func mustDigest(t testing.TB, tool, args string) [32]byte {
	t.Helper()
	d, err := RequestDigest(tool, []byte(args))
	if err != nil {
		t.Fatalf("RequestDigest(%q, %q): %v", tool, args, err)
	}
	return d
}

// testGrant is a typical two-interrupt round.
func testGrant(t testing.TB) Grant {
	return Grant{
		RunID:         runID,
		InterruptIDs:  []string{intr1, intr2},
		Round:         1,
		RequestDigest: mustDigest(t, "deploy", `{"env":"prod","replicas":3}`),
	}
}

func (f *fixture) seal(t testing.TB, g Grant) string {
	t.Helper()
	v, err := f.s.Seal(alice, g)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func expectFor(g Grant) Expectation {
	return Expectation{Subject: alice, RequestDigest: g.RequestDigest}
}

// b64Alphabet is the unpadded base64url alphabet, in encoding order.
const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func isB64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(b64Alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}
