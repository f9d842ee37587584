package sealed

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func BenchmarkSeal(b *testing.B) {
	f := newFixture(b, keyA)
	g := testGrant(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.s.Seal(alice, g); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSealHostGrant(b *testing.B) {
	f := newFixture(b, keyA)
	g := hostGrantFor(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.s.Seal(alice, g); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOperationDigest(b *testing.B) {
	args := []byte(`{"arg1":"hello","arg2":"world"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OperationDigest("prompts/get", "test_prompt_with_arguments", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenVerify is Open without ledger cost: integrity, decoding and
// the binding checks.
func BenchmarkOpenVerify(b *testing.B) {
	clock := newClock(t0)
	always := LedgerFunc(func(context.Context, string, time.Time) (bool, error) { return true, nil })
	s, err := NewSealer(Config{Key: keyA, Ledger: always, Now: clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	g := testGrant(b)
	v, _ := s.Seal(alice, g)
	expect := expectFor(g)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Open(context.Background(), v, expect); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenMemoryLedger is the full Open with the in-memory ledger:
// every iteration opens a distinct state. States are sealed in batches
// outside the timer, and the clock moves one TTL per batch so the ledger
// prunes as it would in service.
func BenchmarkOpenMemoryLedger(b *testing.B) {
	const batch = 4096
	f := newFixture(b, keyA)
	f.s.ledger = NewMemoryLedger(MemoryLedgerConfig{Now: f.clock.Now})
	g := testGrant(b)
	expect := expectFor(g)
	states := make([]string, 0, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(states) == 0 {
			b.StopTimer()
			f.clock.Advance(DefaultTTL + 2*DefaultRetentionSlack)
			for range batch {
				states = append(states, f.seal(b, g))
			}
			b.StartTimer()
		}
		v := states[len(states)-1]
		states = states[:len(states)-1]
		if _, err := f.s.Open(context.Background(), v, expect); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenTampered is the cost of refusing garbage that passes the
// cheap syntax checks and fails the tag.
func BenchmarkOpenTampered(b *testing.B) {
	f := newFixture(b, keyA)
	g := testGrant(b)
	v := f.seal(b, g)
	v = v[:len(v)-2] + "AA"
	expect := expectFor(g)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.s.Open(context.Background(), v, expect); err != ErrTampered {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryLedgerConsume(b *testing.B) {
	clock := newClock(t0)
	l := NewMemoryLedger(MemoryLedgerConfig{Now: clock.Now})
	ids := make([]string, 1<<16)
	for i := range ids {
		ids[i] = fmt.Sprintf("%022d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(ids) == 0 && i > 0 {
			clock.Advance(time.Hour) // the previous round of ids is prunable
		}
		if _, err := l.Consume(context.Background(), ids[i%len(ids)], clock.Now().Add(time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRequestDigest(b *testing.B) {
	for _, tc := range []struct{ name, args string }{
		{"small", `{"env":"prod","replicas":3}`},
		{"nested", `{"title":"Quarterly report","amount":125.50,"currency":"EUR","approvers":["alice","bob"],"meta":{"source":"mcp","tags":["finance","q3"],"nested":{"a":1,"b":[true,false,null]}}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			args := []byte(tc.args)
			b.ReportAllocs()
			b.SetBytes(int64(len(args)))
			for b.Loop() {
				if _, err := RequestDigest("deploy", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
