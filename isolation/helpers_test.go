package isolation

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files under testdata/ from the current output.
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// The grammars of RULES R76 and R34, written out independently of the
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
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
