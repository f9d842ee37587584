// Package golden is the one golden-file helper of the module's tests, and
// owns the one switch that refreshes golden files:
//
//	go test ./negotiate/ -run TestRecordsGolden -update
//
// [Check] compares bytes with a package's own testdata/<name>; [CheckShared]
// with <module>/testdata/<name>, for a golden file several packages' tests
// read (read it elsewhere with internal/fixture). Under -update both first
// rewrite the file from what the test produced, which is how golden files
// are created and refreshed; review the diff before committing it.
//
// A test binary gets -update by importing this package, so a package that
// adopts it drops its own update flag or environment switch (defining
// "update" twice panics when the test binary starts). Normalise volatile
// bytes (timestamps, random ids) before calling Check, as before.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/fixture"
)

// update is the one -update flag of every test binary that compares golden
// files. A flag is global by nature; this is the only one the helpers keep.
var update = flag.Bool("update", false, "rewrite golden files from the current output")

// Updating reports whether the test binary runs with -update, for a test
// that must do more than rewrite one file when refreshing.
func Updating() bool { return *update }

// Check compares got with testdata/name of the package under test (name is
// slash-separated and may name a subdirectory). With -update it first
// rewrites the file from got.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	compare(t, filepath.Join("testdata", filepath.FromSlash(name)), got)
}

// CheckShared is Check for a golden file under the module's top-level
// testdata/, which other packages' tests read through internal/fixture.
func CheckShared(t testing.TB, name string, got []byte) {
	t.Helper()
	compare(t, fixture.Path(t, name), got)
}

func compare(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file %s (run with -update to create it): %v", path, err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
