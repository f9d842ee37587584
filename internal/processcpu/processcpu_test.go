//go:build unix

package processcpu

import (
	"testing"
	"time"
)

// Used grows with work done on any goroutine, and not with sleeping.
func TestUsedCountsWork(t *testing.T) {
	start := Used()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for spin := time.Now(); time.Since(spin) < 50*time.Millisecond; {
		}
	}()
	<-done
	busy := Used() - start
	if busy < 25*time.Millisecond {
		t.Fatalf("50ms of spinning on another goroutine counted %v", busy)
	}
	idle := Used()
	time.Sleep(50 * time.Millisecond)
	if slept := Used() - idle; slept > 25*time.Millisecond {
		t.Fatalf("50ms asleep counted %v", slept)
	}
}
