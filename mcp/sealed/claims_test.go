package sealed

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/golden"
)

func goldenClaims(t testing.TB) sealedClaims {
	c := sealedClaims{
		expiresAt: t0.Add(DefaultTTL).UnixMilli(),
		principal: principalDigest(alice),
		grant:     testGrant(t),
	}
	for i := range c.id {
		c.id[i] = byte(i)
	}
	return c
}

// TestClaimsEncodingGolden pins the plaintext layout documented beside
// appendClaims.
func TestClaimsEncodingGolden(t *testing.T) {
	c := goldenClaims(t)
	enc := appendClaims(nil, &c)
	if len(enc) != claimsLen(&c) {
		t.Errorf("claimsLen = %d, encoding has %d bytes", claimsLen(&c), len(enc))
	}
	// Spot-check the layout by hand so the golden file is not the only
	// witness.
	if !bytes.Equal(enc[:16], []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) {
		t.Errorf("id field %x", enc[:16])
	}
	if hex.EncodeToString(enc[16:24]) != "0000019fa8a1bdc0" { // 2026-07-28T12:10:00Z in ms
		t.Errorf("expiry field %x", enc[16:24])
	}
	tail := enc[fixedClaimsLen:]
	wantTail := append([]byte{1, byte(len(runID))}, runID...)
	wantTail = append(wantTail, 2, byte(len(intr1)))
	wantTail = append(wantTail, intr1...)
	wantTail = append(wantTail, byte(len(intr2)))
	wantTail = append(wantTail, intr2...)
	if !bytes.Equal(tail, wantTail) {
		t.Errorf("variable part %q, want %q", tail, wantTail)
	}
	var dump strings.Builder
	for b := enc; len(b) > 0; b = b[min(32, len(b)):] {
		dump.WriteString(hex.EncodeToString(b[:min(32, len(b))]) + "\n")
	}
	golden.Check(t, "claims.golden", []byte(dump.String()))

	var got sealedClaims
	if err := decodeClaims(enc, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got, cmp.AllowUnexported(sealedClaims{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestDecodeClaimsRefuses(t *testing.T) {
	c := goldenClaims(t)
	enc := appendClaims(nil, &c)
	// Offsets into the variable part.
	roundAt := fixedClaimsLen
	runLenAt := roundAt + 1
	countAt := runLenAt + 1 + len(runID)
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(enc)) }
	cases := map[string][]byte{
		"empty":             nil,
		"fixed part only":   enc[:fixedClaimsLen],
		"truncated by one":  enc[:len(enc)-1],
		"trailing byte":     append(bytes.Clone(enc), 0),
		"round 0":           edit(func(b []byte) []byte { b[roundAt] = 0; return b }),
		"non-minimal round": edit(func(b []byte) []byte { return append(append(b[:roundAt:roundAt], 0x81, 0x00), enc[roundAt+1:]...) }),
		"round above MaxRound": edit(func(b []byte) []byte {
			return append(append(b[:roundAt:roundAt], 0x80, 0x80, 0x04), enc[roundAt+1:]...)
		}),
		"run length too long":    edit(func(b []byte) []byte { b[runLenAt] = 0x7f; return b }),
		"no interrupts":          edit(func(b []byte) []byte { return append(b[:countAt], 0) }),
		"count above the rest":   edit(func(b []byte) []byte { b[countAt] = 0x7f; return b }),
		"huge count":             edit(func(b []byte) []byte { return append(b[:countAt], 0xff, 0xff, 0xff, 0xff, 0x0f) }),
		"overlong varint":        edit(func(b []byte) []byte { return append(b[:countAt], bytes.Repeat([]byte{0xff}, 11)...) }),
		"count one, two present": edit(func(b []byte) []byte { b[countAt] = 1; return b }),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			var got sealedClaims
			if err := decodeClaims(in, &got); !errors.Is(err, errClaimsEncoding) {
				t.Errorf("err %v, want errClaimsEncoding", err)
			}
		})
	}
}
