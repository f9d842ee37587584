package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestSkipOnlyWhenAbsentAndNotRequired(t *testing.T) {
	broken := errors.New("pgtest: initdb: permission denied")
	tests := []struct {
		err      error
		required bool
		want     bool
	}{
		{ErrNoBinaries, false, true},
		{ErrNoBinaries, true, false},
		{broken, false, false},
		{broken, true, false},
	}
	for _, tt := range tests {
		if got := skip(tt.err, tt.required); got != tt.want {
			t.Errorf("skip(%v, required=%v) = %v, want %v", tt.err, tt.required, got, tt.want)
		}
	}
}

// TestFindBinariesFallsBackToDebianLayout: with nothing on PATH, the
// binaries are found in /usr/lib/postgresql/*/bin, or reported absent.
func TestFindBinariesFallsBackToDebianLayout(t *testing.T) {
	t.Setenv("PATH", "")
	dir, err := findBinaries()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	switch {
	case len(dirs) == 0 && !errors.Is(err, ErrNoBinaries):
		t.Fatalf("findBinaries without PATH or Debian layout = %q, %v; want ErrNoBinaries", dir, err)
	case len(dirs) > 0 && (err != nil || !strings.HasPrefix(dir, "/usr/lib/postgresql/")):
		t.Fatalf("findBinaries without PATH = %q, %v; want a /usr/lib/postgresql/*/bin directory", dir, err)
	}
}

// TestEachTestGetsAFreshDatabase: databases are separate, and dropped when
// their test ends.
func TestEachTestGetsAFreshDatabase(t *testing.T) {
	var name string
	t.Run("first", func(t *testing.T) {
		pool := NewPool(t)
		ctx := context.Background()
		if _, err := pool.Exec(ctx, `CREATE TABLE mine (x int)`); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
			t.Fatal(err)
		}
		other := NewPool(t)
		var found bool
		if err := other.QueryRow(ctx, `SELECT to_regclass('mine') IS NOT NULL`).Scan(&found); err != nil || found {
			t.Fatalf("a second database sees the first's table (found=%v, %v)", found, err)
		}
	})
	if t.Failed() || name == "" {
		return
	}
	pool := NewPool(t)
	var exists bool
	if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || exists {
		t.Fatalf("database %s of a finished test still exists (%v)", name, err)
	}
}
