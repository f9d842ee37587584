package postgres

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationsTable records the applied migrations. It is named for this
// module, not "schema_migrations", so that it never collides with the
// host's own migration tool in the same schema.
const migrationsTable = "wopinterop_schema_migrations"

// migrateLockKey is the transaction-level advisory lock Migrate holds, so
// that replicas starting together apply each migration exactly once
// (PostgreSQL §Advisory Locks). The value is arbitrary but fixed, and no
// other lock of this module uses it.
const migrateLockKey int64 = 0x1f3c_5a2e_7b90_44d1

// ErrMigrationChanged reports an applied migration whose embedded SQL no
// longer matches what was applied: migrations are append-only, a shipped
// one is never edited.
var ErrMigrationChanged = errors.New("postgres: an applied migration was changed")

// ErrSchemaBehind reports a database whose schema lacks migrations this
// module needs: call [Migrate] first.
var ErrSchemaBehind = errors.New("postgres: database schema is behind; run Migrate")

// Migration is one embedded schema step.
type Migration struct {
	// Version orders migrations: 1, 2, 3, … without gaps.
	Version int
	// Name is the file name, e.g. "0001_runs.sql".
	Name string
	// SQL is the statements it runs.
	SQL string
	// Checksum is the hex SHA-256 of SQL, recorded when it is applied.
	Checksum string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// Migrations returns the embedded migrations in version order. It fails
// on a file outside the naming scheme "NNNN_name.sql" or on versions that
// do not run 1, 2, 3, … without gaps.
func Migrations() ([]Migration, error) {
	return loadMigrations(migrationFiles, "migrations")
}

func loadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("postgres: read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			return nil, fmt.Errorf("postgres: migration file %q is not named NNNN_name.sql", e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("postgres: read migration %s: %w", e.Name(), err)
		}
		sum := sha256.Sum256(body)
		out = append(out, Migration{Version: version, Name: e.Name(), SQL: string(body), Checksum: hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("postgres: migration %s has version %d, want %d (versions run 1, 2, 3, … without gaps)", m.Name, m.Version, i+1)
		}
	}
	return out, nil
}

// Migrate brings the database's schema up to this module's version: it
// applies, in order and in one transaction, every embedded migration not
// yet recorded in the wopinterop_schema_migrations table. It is explicit —
// nothing else in this package changes the schema — and idempotent: on an
// up-to-date database it changes nothing. Replicas may call it at the same
// time: a transaction-level advisory lock makes the second wait for the
// first and then find nothing left to do. It refuses with
// [ErrMigrationChanged] when an applied migration's SQL differs from the
// embedded one. Migrations a newer version of this module applied are
// left alone, so an older replica keeps running during a rolling upgrade
// (migrations only ever add).
//
// It returns the versions it applied.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	migrations, err := Migrations()
	if err != nil {
		return nil, err
	}
	return migrate(ctx, pool, migrations)
}

func migrate(ctx context.Context, pool *pgxpool.Pool, migrations []Migration) ([]int, error) {
	var applied []int
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		applied = nil
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
			return fmt.Errorf("postgres: migrate: lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+migrationsTable+` (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			checksum   text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("postgres: migrate: create %s: %w", migrationsTable, err)
		}
		done, err := appliedMigrations(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range migrations {
			if sum, ok := done[m.Version]; ok {
				if sum != m.Checksum {
					return fmt.Errorf("%w: %s (version %d)", ErrMigrationChanged, m.Name, m.Version)
				}
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("postgres: migrate: apply %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+migrationsTable+` (version, name, checksum) VALUES ($1, $2, $3)`,
				m.Version, m.Name, m.Checksum); err != nil {
				return fmt.Errorf("postgres: migrate: record %s: %w", m.Name, err)
			}
			applied = append(applied, m.Version)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

func appliedMigrations(ctx context.Context, q pgx.Tx) (map[int]string, error) {
	rows, err := q.Query(ctx, `SELECT version, checksum FROM `+migrationsTable)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: read %s: %w", migrationsTable, err)
	}
	done := map[int]string{}
	var (
		version int
		sum     string
	)
	_, err = pgx.ForEachRow(rows, []any{&version, &sum}, func() error {
		done[version] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: read %s: %w", migrationsTable, err)
	}
	return done, nil
}

// checkSchema reports ErrSchemaBehind unless every embedded migration is
// applied.
func checkSchema(ctx context.Context, pool *pgxpool.Pool) error {
	migrations, err := Migrations()
	if err != nil {
		return err
	}
	var have int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM `+migrationsTable+` WHERE version <= $1`, len(migrations)).Scan(&have)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table: never migrated
		return fmt.Errorf("%w: %s does not exist", ErrSchemaBehind, migrationsTable)
	case err != nil:
		return fmt.Errorf("postgres: read %s: %w", migrationsTable, err)
	}
	if have < len(migrations) {
		return fmt.Errorf("%w: %d of %d migrations applied", ErrSchemaBehind, have, len(migrations))
	}
	return nil
}
