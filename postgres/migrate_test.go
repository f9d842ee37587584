package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

func TestMigrateAppliesOnceAndIsIdempotent(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := testCtx(t)
	all, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := Migrate(ctx, pool)
	if err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	if len(applied) != len(all) || applied[0] != 1 {
		t.Fatalf("first Migrate applied %v, want 1..%d", applied, len(all))
	}
	again, err := Migrate(ctx, pool)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Migrate = %v, %v; want nothing applied", again, err)
	}
	var recorded int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+migrationsTable).Scan(&recorded); err != nil || recorded != len(all) {
		t.Fatalf("%s holds %d rows (%v), want %d", migrationsTable, recorded, err, len(all))
	}
}

// TestMigrateConcurrently: replicas starting together apply each migration
// exactly once, and none fails.
func TestMigrateConcurrently(t *testing.T) {
	pool := pgtest.NewPool(t)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied []int
	)
	for range 8 {
		wg.Go(func() {
			got, err := Migrate(context.Background(), pool)
			if err != nil {
				t.Errorf("concurrent Migrate: %v", err)
			}
			mu.Lock()
			applied = append(applied, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(applied)
	all, _ := Migrations()
	want := make([]int, len(all))
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(applied, want) {
		t.Fatalf("8 concurrent Migrate calls applied %v together, want each of %v once", applied, want)
	}
}

func TestMigrateRefusesAnEditedMigration(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := testCtx(t)
	if _, err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	all, _ := Migrations()
	edited := slices.Clone(all)
	edited[0].Checksum = strings.Repeat("0", 64)
	if _, err := migrate(ctx, pool, edited); !errors.Is(err, ErrMigrationChanged) || !strings.Contains(err.Error(), all[0].Name) {
		t.Fatalf("migrate with an edited first migration = %v, want ErrMigrationChanged naming %s", err, all[0].Name)
	}
}

func TestNewRefusesASchemaBehind(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := testCtx(t)
	if _, err := New(ctx, pool); !errors.Is(err, ErrSchemaBehind) {
		t.Fatalf("New on an empty database = %v, want ErrSchemaBehind", err)
	}
	all, _ := Migrations()
	if _, err := migrate(ctx, pool, all[:1]); err != nil {
		t.Fatal(err)
	}
	_, err := New(ctx, pool)
	if !errors.Is(err, ErrSchemaBehind) || !strings.Contains(err.Error(), "1 of") {
		t.Fatalf("New with one migration applied = %v, want ErrSchemaBehind saying how far", err)
	}
}

func TestMigrationFilesAreNumberedWithoutGaps(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"bad name", fstest.MapFS{"m/0001_ok.sql": {}, "m/2_bad.sql": {}}, "is not named NNNN_name.sql"},
		{"gap", fstest.MapFS{"m/0001_a.sql": {}, "m/0003_c.sql": {}}, "want 2"},
		{"does not start at 1", fstest.MapFS{"m/0002_b.sql": {}}, "want 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := loadMigrations(tt.files, "m"); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("loadMigrations = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	ms, err := Migrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("embedded migrations: %v, %d", err, len(ms))
	}
}
