package isolation

import (
	"regexp"
	"testing"

	goldenfile "github.com/wopinterop/wopinterop/internal/golden"
)

// The grammars of OpenWOP identity.md §5 and RFC 0202 §B, written out independently of the
// hand-rolled validators so each checks the other.
var (
	boundRE   = regexp.MustCompile(`^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$`)
	opaqueRE  = regexp.MustCompile(`^[A-Za-z0-9._~-]{16,128}$`)
	tenantRE  = regexp.MustCompile(`^(anon:)?[A-Za-z0-9._~-]{1,128}$`)
	routingRE = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,128}$`)
	// projectedRE is what Project may emit: no '/', '~' only as an escape
	// with two uppercase hex digits.
	projectedRE = regexp.MustCompile(`^(?:[A-Za-z0-9._-]|~[0-9A-F]{2})*$`)
)

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got)
}
