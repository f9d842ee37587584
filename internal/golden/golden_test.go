package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

type fatal struct{}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatal{})
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// run calls f with a recorder and returns what it recorded.
func run(t *testing.T, f func(tb testing.TB)) []string {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(fatal); !ok {
					panic(p)
				}
			}
		}()
		f(r)
	}()
	return r.failures
}

// module makes a throwaway module with a package directory and moves the
// test into that package directory.
func module(t *testing.T) (root, pkg string) {
	root = t.TempDir()
	pkg = filepath.Join(root, "pkg")
	if err := os.MkdirAll(filepath.Join(pkg, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	return root, pkg
}

func setUpdate(t *testing.T, v bool) {
	old := *update
	*update = v
	t.Cleanup(func() { *update = old })
}

func TestCheck(t *testing.T) {
	_, pkg := module(t)
	if err := os.WriteFile(filepath.Join(pkg, "testdata", "a.golden"), []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := run(t, func(tb testing.TB) { Check(tb, "a.golden", []byte("same\n")) }); len(f) != 0 {
		t.Fatalf("equal bytes failed: %v", f)
	}
	f := run(t, func(tb testing.TB) { Check(tb, "a.golden", []byte("other\n")) })
	if len(f) != 1 || !strings.Contains(f[0], "mismatch") || !strings.Contains(f[0], "other") {
		t.Fatalf("different bytes: %v", f)
	}
	f = run(t, func(tb testing.TB) { Check(tb, "missing.golden", []byte("x")) })
	if len(f) != 1 || !strings.Contains(f[0], "-update") {
		t.Fatalf("missing file: %v", f)
	}
}

func TestUpdateRewritesThenCompares(t *testing.T) {
	root, pkg := module(t)
	setUpdate(t, true)
	if !Updating() {
		t.Fatal("Updating() = false under -update")
	}
	if f := run(t, func(tb testing.TB) {
		Check(tb, "sub/new.golden", []byte("fresh"))
		CheckShared(tb, "shared/one.json", []byte(`{"a":1}`))
	}); len(f) != 0 {
		t.Fatalf("update failed: %v", f)
	}
	for path, want := range map[string]string{
		filepath.Join(pkg, "testdata", "sub", "new.golden"):   "fresh",
		filepath.Join(root, "testdata", "shared", "one.json"): `{"a":1}`,
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	setUpdate(t, false)
	f := run(t, func(tb testing.TB) { CheckShared(tb, "shared/one.json", []byte(`{"a":2}`)) })
	if len(f) != 1 || !strings.Contains(f[0], filepath.Join(root, "testdata", "shared", "one.json")) {
		t.Fatalf("shared mismatch: %v", f)
	}
}
