package sealed_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// A tools/call suspends on an interrupt: the mount seals a requestState for
// the input_required answer, and the retry opens it exactly once.
func Example() {
	// In a host this comes from configuration, identical on every replica.
	secret := []byte("example-only-secret-0123456789abcdef")
	s, err := sealed.NewSealer(sealed.Config{Key: secret})
	if err != nil {
		panic(err)
	}
	caller := interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true}

	// Round 1: the run suspended; bind the state to this call.
	digest, err := sealed.RequestDigest("deploy", []byte(`{"env": "prod", "replicas": 3}`))
	if err != nil {
		panic(err)
	}
	state, err := s.Seal(caller, sealed.Grant{
		RunID:         "acme/R0000000000000000000000001",
		InterruptIDs:  []string{"acme/I0000000000000000000000001"},
		Round:         1,
		RequestDigest: digest,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("prefix:", strings.SplitAfter(state, ".")[0])

	// The retry repeats the call (key order and spacing may differ).
	retry, _ := sealed.RequestDigest("deploy", []byte(`{"replicas":3,"env":"prod"}`))
	claims, err := s.Open(context.Background(), state, sealed.Expectation{Subject: caller, RequestDigest: retry})
	if err != nil {
		panic(err)
	}
	fmt.Println("resume", claims.RunID, "round", claims.Round, "interrupts", claims.InterruptIDs)

	// A second retry with the same state is refused, like every other
	// invalid state, with one sentinel the mount turns into -32602.
	_, err = s.Open(context.Background(), state, sealed.Expectation{Subject: caller, RequestDigest: retry})
	fmt.Println(errors.Is(err, sealed.ErrInvalidState), errors.Is(err, sealed.ErrReplayed))

	// Someone else presenting a fresh state gets the same answer.
	other, _ := s.Seal(caller, sealed.Grant{
		RunID: "acme/R0000000000000000000000001", InterruptIDs: []string{"acme/I0000000000000000000000001"},
		Round: 2, RequestDigest: digest,
	})
	mallory := interop.Subject{Tenant: "acme", Principal: "mallory", Authenticated: true}
	_, err = s.Open(context.Background(), other, sealed.Expectation{Subject: mallory, RequestDigest: retry})
	fmt.Println(errors.Is(err, sealed.ErrInvalidState), errors.Is(err, sealed.ErrForeign))
	// Output:
	// prefix: rs1.
	// resume acme/R0000000000000000000000001 round 1 interrupts [acme/I0000000000000000000000001]
	// true true
	// true true
}

// RequestDigest treats arguments as JSON values: key order, whitespace and
// string escapes do not matter, number spelling does.
func ExampleRequestDigest() {
	d := func(args string) string {
		sum, err := sealed.RequestDigest("search", []byte(args))
		if err != nil {
			return "error: " + strings.TrimPrefix(err.Error(), "sealed: ")
		}
		return fmt.Sprintf("%x", sum[:4])
	}
	fmt.Println(d(`{"q":"A","n":1}`))
	fmt.Println(d(`{ "n": 1, "q": "\u0041" }`))
	fmt.Println(d(`{"q":"A","n":1.0}`))
	fmt.Println(d(`{"q":"A","q":"B"}`))
	// Output:
	// c7c26ad3
	// c7c26ad3
	// a3b0fbc0
	// error: arguments are not canonicalisable JSON: duplicate object member name
}
