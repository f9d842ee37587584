package cardsig_test

import (
	"testing"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// BenchmarkVerify verifies a typical card (the fixture: two interfaces,
// an extension, OAuth, one skill; about 1.2 KB) signed with each common
// algorithm: what an admission pays per card fetched.
func BenchmarkVerify(b *testing.B) {
	card := fixtureCard(b)
	for _, s := range []*cardsig.Signer{edSigner(b), ecSigner(b)} {
		body := signed(b, s, card)
		v := verifierOf(b, s)
		b.Run(s.Algorithm(), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCanonicalize is the part of Verify (and Sign) that is not
// cryptography.
func BenchmarkCanonicalize(b *testing.B) {
	card := fixtureCard(b)
	b.SetBytes(int64(len(card)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cardsig.Canonicalize(card); err != nil {
			b.Fatal(err)
		}
	}
}
