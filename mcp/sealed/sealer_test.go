package sealed

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

var sealedRE = regexp.MustCompile(`^rs1\.[A-Za-z0-9_-]+$`)

func TestSealOpenRoundTrip(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	v := f.seal(t, g)
	if !sealedRE.MatchString(v) {
		t.Fatalf("sealed value %q does not match %s", v, sealedRE)
	}
	got, err := f.s.Open(context.Background(), v, expectFor(g))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	want := Claims{Grant: g, ID: got.ID, ExpiresAt: t0.Add(DefaultTTL)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	id, err := base64.RawURLEncoding.DecodeString(got.ID)
	if err != nil || len(id) != 16 || len(got.ID) != 22 {
		t.Errorf("ID %q is not 128 bits in unpadded base64url (err %v)", got.ID, err)
	}
	if f.ledger.count() != 1 || f.ledger.calls[0].id != got.ID || !f.ledger.calls[0].expiresAt.Equal(got.ExpiresAt) {
		t.Errorf("ledger calls %+v, want one with the claims' id and expiry", f.ledger.calls)
	}
}

func TestSealIsRandomized(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	ids := map[string]bool{}
	values := map[string]bool{}
	for range 50 {
		v := f.seal(t, g)
		c, err := f.s.Open(context.Background(), v, expectFor(g))
		if err != nil {
			t.Fatal(err)
		}
		values[v] = true
		ids[c.ID] = true
	}
	if len(values) != 50 || len(ids) != 50 {
		t.Errorf("50 seals of one grant gave %d distinct values and %d distinct ids", len(values), len(ids))
	}
}

func TestSealedSize(t *testing.T) {
	f := newFixture(t, keyA)
	// A realistic grant: minted ids, two interrupts.
	run, _ := isolation.NewID("tenant-with-a-longish-name")
	i1, _ := isolation.NewID("tenant-with-a-longish-name")
	i2, _ := isolation.NewID("tenant-with-a-longish-name")
	g := Grant{RunID: run, InterruptIDs: []string{i1, i2}, Round: 3, RequestDigest: mustDigest(t, "t", `{}`)}
	v := f.seal(t, g)
	if len(v) >= 600 {
		t.Errorf("typical sealed value is %d characters, want < 600", len(v))
	}
	t.Logf("typical sealed value: %d characters", len(v))
}

func TestOpenTamperEveryCharacter(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	v := f.seal(t, g)
	alphabet := b64Alphabet + ".=+/ \n"
	tried := 0
	for i := 0; i < len(v); i++ {
		for j := 0; j < len(alphabet); j++ {
			if alphabet[j] == v[i] {
				continue
			}
			mutated := v[:i] + alphabet[j:j+1] + v[i+1:]
			_, err := f.s.Open(context.Background(), mutated, expectFor(g))
			if !errors.Is(err, ErrTampered) {
				t.Fatalf("position %d set to %q: err %v, want ErrTampered", i, alphabet[j], err)
			}
			tried++
		}
	}
	if f.ledger.count() != 0 {
		t.Errorf("tampered values reached the ledger %d times", f.ledger.count())
	}
	if _, err := f.s.Open(context.Background(), v, expectFor(g)); err != nil {
		t.Errorf("original after %d tampered attempts: %v", tried, err)
	}
}

func TestOpenTamperEveryBit(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	v := f.seal(t, g)
	raw, err := b64.DecodeString(strings.TrimPrefix(v, Prefix))
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for bit := range 8 {
			m := bytes.Clone(raw)
			m[i] ^= 1 << bit
			_, err := f.s.Open(context.Background(), Prefix+b64.EncodeToString(m), expectFor(g))
			if !errors.Is(err, ErrTampered) {
				t.Fatalf("byte %d bit %d flipped: err %v, want ErrTampered", i, bit, err)
			}
		}
	}
	if f.ledger.count() != 0 {
		t.Errorf("tampered values reached the ledger %d times", f.ledger.count())
	}
}

func TestOpenTamperForms(t *testing.T) {
	f := newFixture(t, keyA, keyB)
	g := testGrant(t)
	v := f.seal(t, g)
	body := strings.TrimPrefix(v, Prefix)
	raw, _ := b64.DecodeString(body)
	reencode := func(edit func([]byte) []byte) string {
		return Prefix + b64.EncodeToString(edit(bytes.Clone(raw)))
	}
	keyBID, _ := deriveKey(keyB)
	other := newFixture(t, keyC).seal(t, g) // another host's secret

	cases := map[string]string{
		"empty":                      "",
		"prefix only":                Prefix,
		"version 2":                  "rs2." + body,
		"version 0":                  "rs0." + body,
		"upper-case prefix":          "RS1." + body,
		"no dot":                     "rs1" + body,
		"no prefix":                  body,
		"doubled prefix":             Prefix + v,
		"padded":                     v + "=",
		"padded twice":               v + "==",
		"extended by one char":       v + "A",
		"extended by four chars":     v + "AAAA",
		"suffix -TAMPERED":           v + "-TAMPERED",
		"trailing newline":           v + "\n",
		"embedded CRLF":              v[:20] + "\r\n" + v[20:],
		"leading space":              " " + v,
		"standard alphabet":          Prefix + base64.RawStdEncoding.EncodeToString(raw),
		"padded standard":            Prefix + base64.StdEncoding.EncodeToString(raw),
		"garbage":                    Prefix + "!!!!$$$$",
		"garbage equals":             Prefix + "====",
		"one char body":              Prefix + "A",
		"header only":                reencode(func(b []byte) []byte { return b[:headerLen] }),
		"header and tag length only": reencode(func(b []byte) []byte { return b[:headerLen+tagLen] }),
		"zero key id":                reencode(func(b []byte) []byte { copy(b, []byte{0, 0, 0, 0}); return b }),
		"previous key's id":          reencode(func(b []byte) []byte { copy(b, keyBID.id[:]); return b }),
		"zero nonce":                 reencode(func(b []byte) []byte { clear(b[kidLen:headerLen]); return b }),
		"tag dropped":                reencode(func(b []byte) []byte { return b[:len(b)-tagLen] }),
		"byte appended":              reencode(func(b []byte) []byte { return append(b, 0) }),
		"byte prepended":             reencode(func(b []byte) []byte { return append([]byte{0}, b...) }),
		"another host's secret":      other,
		"oversized":                  Prefix + strings.Repeat("A", MaxSealedLen),
	}
	for n := 0; n < len(v); n++ {
		cases[fmt.Sprintf("truncated to %d", n)] = v[:n]
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := f.s.Open(context.Background(), in, expectFor(g))
			if err != ErrTampered { // the one value, not merely something wrapping it
				t.Fatalf("err %v, want ErrTampered", err)
			}
			if !errors.Is(err, ErrInvalidState) {
				t.Error("ErrTampered does not wrap ErrInvalidState")
			}
			if diff := cmp.Diff(Claims{}, c); diff != "" {
				t.Errorf("refusal returned claims:\n%s", diff)
			}
		})
	}
	if f.ledger.count() != 0 {
		t.Errorf("tampered values reached the ledger %d times", f.ledger.count())
	}
	if _, err := f.s.Open(context.Background(), v, expectFor(g)); err != nil {
		t.Errorf("original after tamper attempts: %v", err)
	}
}

// TestOpenRefusalsDoNotConsume: each refusal has its own error, reaches no
// ledger, and leaves the genuine state usable.
func TestOpenRefusalsDoNotConsume(t *testing.T) {
	g := testGrant(t)
	other := func(mod func(*interop.Subject)) Expectation {
		e := expectFor(g)
		mod(&e.Subject)
		return e
	}
	cases := []struct {
		name    string
		expect  Expectation
		advance time.Duration
		want    error
	}{
		{"other principal", other(func(s *interop.Subject) { s.Principal = "mallory" }), 0, ErrForeign},
		{"other tenant", other(func(s *interop.Subject) { s.Tenant = "evil" }), 0, ErrForeign},
		{"other workspace", other(func(s *interop.Subject) { s.Workspace = "ws2" }), 0, ErrForeign},
		{"no workspace", other(func(s *interop.Subject) { s.Workspace = "" }), 0, ErrForeign},
		{"same names, anonymous", other(func(s *interop.Subject) { s.Authenticated = false }), 0, ErrForeign},
		{"anonymous zero subject", Expectation{RequestDigest: g.RequestDigest}, 0, ErrForeign},
		{"other arguments", Expectation{Subject: alice, RequestDigest: mustDigest(t, "deploy", `{"env":"dev","replicas":3}`)}, 0, ErrMismatch},
		{"other tool", Expectation{Subject: alice, RequestDigest: mustDigest(t, "deploy2", `{"env":"prod","replicas":3}`)}, 0, ErrMismatch},
		{"zero digest", Expectation{Subject: alice}, 0, ErrMismatch},
		{"expired at the TTL", expectFor(g), DefaultTTL, ErrExpired},
		{"expired long ago", expectFor(g), 24 * time.Hour, ErrExpired},
		{"expired and foreign", other(func(s *interop.Subject) { s.Principal = "mallory" }), DefaultTTL, ErrExpired},
		{"foreign and other arguments", Expectation{Subject: interop.Subject{Tenant: "evil"}}, 0, ErrForeign},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, keyA)
			v := f.seal(t, g)
			f.clock.Advance(tc.advance)
			c, err := f.s.Open(context.Background(), v, tc.expect)
			if err != tc.want {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if !errors.Is(err, ErrInvalidState) {
				t.Errorf("%v does not wrap ErrInvalidState", err)
			}
			if diff := cmp.Diff(Claims{}, c); diff != "" {
				t.Errorf("refusal returned claims:\n%s", diff)
			}
			if n := f.ledger.count(); n != 0 {
				t.Errorf("refused state reached the ledger %d times", n)
			}
			f.clock.Set(t0)
			if _, err := f.s.Open(context.Background(), v, expectFor(g)); err != nil {
				t.Errorf("genuine retry after the refusal: %v", err)
			}
		})
	}
}

func TestOpenExpiryBoundary(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	v1, v2 := f.seal(t, g), f.seal(t, g)
	f.clock.Set(t0.Add(DefaultTTL - time.Millisecond))
	if _, err := f.s.Open(context.Background(), v1, expectFor(g)); err != nil {
		t.Errorf("1 ms before expiry: %v", err)
	}
	f.clock.Set(t0.Add(DefaultTTL))
	if _, err := f.s.Open(context.Background(), v2, expectFor(g)); err != ErrExpired {
		t.Errorf("at expiry: err %v, want ErrExpired", err)
	}
}

func TestOpenCustomTTL(t *testing.T) {
	clock := newClock(t0)
	s, err := NewSealer(Config{Key: keyA, TTL: 90 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if s.TTL() != 90*time.Second {
		t.Errorf("TTL() = %s", s.TTL())
	}
	g := testGrant(t)
	v, _ := s.Seal(alice, g)
	clock.Advance(90 * time.Second)
	if _, err := s.Open(context.Background(), v, expectFor(g)); err != ErrExpired {
		t.Errorf("after a 90 s TTL: err %v, want ErrExpired", err)
	}
	clock.Set(t0)
	c, err := s.Open(context.Background(), v, expectFor(g))
	if err != nil || !c.ExpiresAt.Equal(t0.Add(90*time.Second)) {
		t.Errorf("claims %+v, err %v; want ExpiresAt %s", c, err, t0.Add(90*time.Second))
	}
}

func TestOpenReplay(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	v := f.seal(t, g)
	if _, err := f.s.Open(context.Background(), v, expectFor(g)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c, err := f.s.Open(context.Background(), v, expectFor(g))
		if err != ErrReplayed {
			t.Fatalf("use %d: err %v, want ErrReplayed", i+2, err)
		}
		if diff := cmp.Diff(Claims{}, c); diff != "" {
			t.Errorf("replay returned claims:\n%s", diff)
		}
	}
	// A second state for the same round is independent of the first.
	if _, err := f.s.Open(context.Background(), f.seal(t, g), expectFor(g)); err != nil {
		t.Errorf("fresh state after a replay: %v", err)
	}
}

func TestOpenConcurrentReplay(t *testing.T) {
	const n = 64
	f := newFixture(t, keyA)
	g := testGrant(t)
	v := f.seal(t, g)
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = f.s.Open(context.Background(), v, expectFor(g))
		})
	}
	close(start)
	wg.Wait()
	ok, replayed := 0, 0
	for _, err := range errs {
		switch err {
		case nil:
			ok++
		case ErrReplayed:
			replayed++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 || replayed != n-1 {
		t.Errorf("%d successes and %d replays of %d concurrent Opens, want 1 and %d", ok, replayed, n, n-1)
	}
}

// Two replicas sharing one ledger: a state opened on one is replayed on
// the other.
func TestOpenAcrossReplicasSharingALedger(t *testing.T) {
	clock := newClock(t0)
	ledger := NewMemoryLedger(MemoryLedgerConfig{Now: clock.Now})
	r1, err1 := NewSealer(Config{Key: keyA, Ledger: ledger, Now: clock.Now})
	r2, err2 := NewSealer(Config{Key: keyA, Ledger: ledger, Now: clock.Now})
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	g := testGrant(t)
	v, _ := r1.Seal(alice, g)
	if _, err := r2.Open(context.Background(), v, expectFor(g)); err != nil {
		t.Fatalf("open on the other replica: %v", err)
	}
	if _, err := r1.Open(context.Background(), v, expectFor(g)); err != ErrReplayed {
		t.Errorf("replay on the sealing replica: err %v, want ErrReplayed", err)
	}
}

func TestOpenLedgerFailure(t *testing.T) {
	f := newFixture(t, keyA)
	boom := errors.New("database unavailable")
	failing, err := NewSealer(Config{Key: keyA, Now: f.clock.Now, Ledger: LedgerFunc(func(context.Context, string, time.Time) (bool, error) {
		return false, boom
	})})
	if err != nil {
		t.Fatal(err)
	}
	g := testGrant(t)
	v := f.seal(t, g)
	c, err := failing.Open(context.Background(), v, expectFor(g))
	if !errors.Is(err, boom) || errors.Is(err, ErrInvalidState) {
		t.Fatalf("err %v, want the ledger's error and not ErrInvalidState", err)
	}
	if diff := cmp.Diff(Claims{}, c); diff != "" {
		t.Errorf("failure returned claims:\n%s", diff)
	}
	if _, err := f.s.Open(context.Background(), v, expectFor(g)); err != nil {
		t.Errorf("state after a ledger failure: %v", err)
	}
}

func TestOpenCancelledContext(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	v := f.seal(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.s.Open(ctx, v, expectFor(g)); !errors.Is(err, context.Canceled) || errors.Is(err, ErrInvalidState) {
		t.Fatalf("err %v, want context.Canceled and not ErrInvalidState", err)
	}
	if _, err := f.s.Open(context.Background(), v, expectFor(g)); err != nil {
		t.Errorf("state after a cancelled Open: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	g := testGrant(t)
	old := newFixture(t, keyA)            // before the rotation
	rotating := newFixture(t, keyB, keyA) // new current, old previous
	rotated := newFixture(t, keyB)        // old key dropped

	vOld := old.seal(t, g)
	if _, err := rotating.s.Open(context.Background(), vOld, expectFor(g)); err != nil {
		t.Errorf("old state with the old key as previous: %v", err)
	}
	if _, err := rotated.s.Open(context.Background(), old.seal(t, g), expectFor(g)); err != ErrTampered {
		t.Errorf("old state once the old key is dropped: err %v, want ErrTampered", err)
	}

	vNew := rotating.seal(t, g)
	if _, err := old.s.Open(context.Background(), vNew, expectFor(g)); err != ErrTampered {
		t.Errorf("state sealed after the rotation opened with the old key only: err %v, want ErrTampered", err)
	}
	if _, err := rotated.s.Open(context.Background(), vNew, expectFor(g)); err != nil {
		t.Errorf("state sealed after the rotation, new key only: %v", err)
	}
}

// The key id in the header names the current key, so Open tries the right
// key first.
func TestKeyIDHeader(t *testing.T) {
	ka, _ := deriveKey(keyA)
	kb, _ := deriveKey(keyB)
	if ka.id == kb.id {
		t.Fatal("test keys share a key id")
	}
	for _, tc := range []struct {
		name string
		f    *fixture
		want [kidLen]byte
	}{
		{"A only", newFixture(t, keyA), ka.id},
		{"B current, A previous", newFixture(t, keyB, keyA), kb.id},
		{"A current, B previous", newFixture(t, keyA, keyB), ka.id},
	} {
		raw, err := b64.DecodeString(strings.TrimPrefix(tc.f.seal(t, testGrant(t)), Prefix))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw[:kidLen], tc.want[:]) {
			t.Errorf("%s: key id %x, want %x", tc.name, raw[:kidLen], tc.want)
		}
	}
}

func TestNewSealerRefusals(t *testing.T) {
	short := []byte("0123456789abcdef0123456789abcde") // 31 bytes
	cases := []struct {
		name    string
		cfg     Config
		want    error
		message string
	}{
		{"no key", Config{}, ErrKeyTooShort, "the current key has 0"},
		{"short key", Config{Key: short}, ErrKeyTooShort, "the current key has 31"},
		{"short previous", Config{Key: keyA, PreviousKeys: [][]byte{keyB, short}}, ErrKeyTooShort, "previous key 1 has 31"},
		{"negative TTL", Config{Key: keyA, TTL: -time.Second}, nil, "negative TTL"},
		{"key id collision", Config{
			Key:          []byte("kid-collision-test-secret-0000050051"),
			PreviousKeys: [][]byte{[]byte("kid-collision-test-secret-0000076208")},
		}, nil, "derive the same key id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSealer(tc.cfg)
			if err == nil || s != nil {
				t.Fatalf("NewSealer = %v, %v; want an error", s, err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("err %q does not say %q", err, tc.message)
			}
			if strings.Contains(err.Error(), "0123456789abcde") || strings.Contains(err.Error(), "collision-test-secret") {
				t.Errorf("err %q contains key bytes", err)
			}
		})
	}
}

// The collision fixture really collides; otherwise the refusal above
// would prove nothing.
func TestKeyIDCollisionFixture(t *testing.T) {
	k1, _ := deriveKey([]byte("kid-collision-test-secret-0000050051"))
	k2, _ := deriveKey([]byte("kid-collision-test-secret-0000076208"))
	if k1.id != k2.id {
		t.Fatalf("fixture secrets have ids %x and %x", k1.id, k2.id)
	}
}

func TestNewSealerDuplicateKey(t *testing.T) {
	f := newFixture(t, keyA, keyA, keyB, keyB)
	if len(f.s.keys) != 2 {
		t.Errorf("%d keys kept, want 2 (duplicates dropped)", len(f.s.keys))
	}
	g := testGrant(t)
	if _, err := f.s.Open(context.Background(), newFixture(t, keyB).seal(t, g), expectFor(g)); err != nil {
		t.Errorf("previous key listed twice: %v", err)
	}
}

func TestSealRefusesInvalidGrant(t *testing.T) {
	f := newFixture(t, keyA)
	base := testGrant(t)
	with := func(mod func(*Grant)) Grant {
		g := base
		g.InterruptIDs = append([]string(nil), base.InterruptIDs...)
		mod(&g)
		return g
	}
	cases := map[string]Grant{
		"empty run id":          with(func(g *Grant) { g.RunID = "" }),
		"bare run id":           with(func(g *Grant) { g.RunID = "RUNAAAAAAAAAAAAAAAAAAAAAAA" }),
		"projected run id":      with(func(g *Grant) { g.RunID = isolation.Project(runID) }),
		"no interrupt":          with(func(g *Grant) { g.InterruptIDs = nil }),
		"malformed interrupt":   with(func(g *Grant) { g.InterruptIDs[1] = "node-7" }),
		"duplicate interrupt":   with(func(g *Grant) { g.InterruptIDs[1] = g.InterruptIDs[0] }),
		"round 0":               with(func(g *Grant) { g.Round = 0 }),
		"negative round":        with(func(g *Grant) { g.Round = -1 }),
		"round above MaxRound":  with(func(g *Grant) { g.Round = MaxRound + 1 }),
		"too large for a value": with(func(g *Grant) { g.InterruptIDs = manyInterrupts(40) }),
	}
	for name, g := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := f.s.Seal(alice, g)
			if !errors.Is(err, ErrInvalidGrant) || v != "" {
				t.Fatalf("Seal = %q, %v; want ErrInvalidGrant", v, err)
			}
		})
	}
	if _, err := f.s.Seal(alice, with(func(g *Grant) { g.Round = MaxRound })); err != nil {
		t.Errorf("round MaxRound: %v", err)
	}
}

func manyInterrupts(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("tenant-%03d/%0100d", i, i)
	}
	return ids
}

// The largest grant that seals still fits MaxSealedLen and opens; one
// interrupt more is refused.
func TestSealSizeLimit(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	var last string
	for n := 1; ; n++ {
		g.InterruptIDs = manyInterrupts(n)
		v, err := f.s.Seal(alice, g)
		if err != nil {
			if !errors.Is(err, ErrInvalidGrant) || n < 2 {
				t.Fatalf("%d interrupts: %v", n, err)
			}
			g.InterruptIDs = manyInterrupts(n - 1)
			break
		}
		last = v
	}
	if len(last) > MaxSealedLen || len(last) < MaxSealedLen-200 {
		t.Errorf("largest sealed value has %d characters, want close to and at most %d", len(last), MaxSealedLen)
	}
	c, err := f.s.Open(context.Background(), last, expectFor(g))
	if err != nil || len(c.InterruptIDs) != len(g.InterruptIDs) {
		t.Errorf("largest value: %d interrupts, err %v", len(c.InterruptIDs), err)
	}
}

func TestErrorsWrapInvalidStateAndDiffer(t *testing.T) {
	all := []error{ErrTampered, ErrExpired, ErrForeign, ErrMismatch, ErrReplayed}
	for i, err := range all {
		if !errors.Is(err, ErrInvalidState) {
			t.Errorf("%v does not wrap ErrInvalidState", err)
		}
		for j, other := range all {
			if i != j && errors.Is(err, other) {
				t.Errorf("%v matches %v", err, other)
			}
		}
	}
	for _, err := range []error{ErrKeyTooShort, ErrInvalidGrant, ErrArguments, ErrLedgerFull} {
		if errors.Is(err, ErrInvalidState) {
			t.Errorf("%v wraps ErrInvalidState; it is not a client's state problem", err)
		}
	}
}

// No refusal names a claim: not the run, the interrupts, the id or the
// principal.
func TestErrorsCarryNoClaims(t *testing.T) {
	f := newFixture(t, keyA)
	g := testGrant(t)
	secrets := []string{runID, intr1, intr2, "acme", "alice", "ws1", "RUNA", "INTA"}
	var errs []error
	collect := func(_ Claims, err error) { errs = append(errs, err) }
	v := f.seal(t, g)
	collect(f.s.Open(context.Background(), v+"x", expectFor(g)))
	collect(f.s.Open(context.Background(), v, Expectation{Subject: interop.Subject{Tenant: "x"}, RequestDigest: g.RequestDigest}))
	collect(f.s.Open(context.Background(), v, Expectation{Subject: alice}))
	f.clock.Advance(time.Hour)
	collect(f.s.Open(context.Background(), v, expectFor(g)))
	f.clock.Set(t0)
	collect(f.s.Open(context.Background(), v, expectFor(g)))
	collect(f.s.Open(context.Background(), v, expectFor(g)))
	if len(errs) != 6 || errs[4] != nil {
		t.Fatalf("errors %v", errs)
	}
	errs = append(errs[:4], errs[5])
	for _, err := range errs {
		if err == nil {
			t.Fatal("missing refusal")
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error %q contains %q", err, s)
			}
		}
	}
}

func TestConfigAndSealerDoNotPrintKeys(t *testing.T) {
	cfg := Config{Key: keyA, PreviousKeys: [][]byte{keyB}, TTL: time.Minute}
	s, err := NewSealer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", cfg, "sealer", s)
	outputs := []string{
		fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", &cfg),
		fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), logged.String(),
	}
	for _, out := range outputs {
		if strings.Contains(out, "test-secret") || strings.Contains(out, fmt.Sprint(keyA[:8])) {
			t.Errorf("output %q contains key material", out)
		}
	}
	if !strings.Contains(outputs[0], "previousKeys: 1") || !strings.Contains(outputs[4], "keys: 2") || !strings.Contains(outputs[7], "sealer.keys=2") {
		t.Errorf("descriptions %q, %q and %q lost their useful parts", outputs[0], outputs[4], outputs[7])
	}
	if strings.Contains(outputs[6], "0x") {
		t.Errorf("%%#v of the Sealer %q walks into its internals", outputs[6])
	}
}

// TestGoldenSealed pins the wire format: with a fixed key, clock and
// random stream Seal produces the committed value, and the committed value
// opens to the committed claims. A format change must change Prefix.
func TestGoldenSealed(t *testing.T) {
	f := newFixture(t, keyA)
	f.s.random = &detReader{seed: "golden"}
	g := testGrant(t)
	v := f.seal(t, g)
	golden.Check(t, "sealed.golden", []byte(v+"\n"))

	committed, err := os.ReadFile("testdata/sealed.golden")
	if err != nil {
		t.Fatal(err)
	}
	c, err := newFixture(t, keyA).s.Open(context.Background(), strings.TrimSuffix(string(committed), "\n"), expectFor(g))
	if err != nil {
		t.Fatal(err)
	}
	want := Claims{Grant: g, ID: "LDadBQUSnX0FfgELWfBIDQ", ExpiresAt: t0.Add(DefaultTTL)}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("golden claims (-want +got):\n%s", diff)
	}
}

func TestSealRandomSourceFailure(t *testing.T) {
	f := newFixture(t, keyA)
	f.s.random = bytes.NewReader(make([]byte, 5)) // runs dry
	v, err := f.s.Seal(alice, testGrant(t))
	if err == nil || v != "" {
		t.Fatalf("Seal = %q, %v; want a random-source error", v, err)
	}
}
