package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/push"
)

var _ push.ConfigStore = (*Configs)(nil)

// pushTaskLockSeed seeds the hash that turns a task id into the key of
// the transaction-level advisory lock Put holds on the task. Two tasks
// whose keys collide only wait for each other.
const pushTaskLockSeed int64 = 0x7075_7368_6366_6773

// Configs is a [push.ConfigStore] on PostgreSQL, shared by every replica
// of a host. Put holds an advisory lock on the task for its transaction,
// so the per-task limit (OpenWOP RFC 0214 §D) holds however many replicas
// register configs on one task at once: of concurrent additions to a task
// with room for n, exactly n succeed. Records hold no secret, only the
// vault ref. It needs no closing. Safe for concurrent use.
type Configs struct {
	pool *pgxpool.Pool
}

// NewConfigs returns the config store over pool, whose database [Migrate]
// has brought up to date (else [ErrSchemaBehind]).
func NewConfigs(ctx context.Context, pool *pgxpool.Pool) (*Configs, error) {
	if err := checkSchema(ctx, pool); err != nil {
		return nil, err
	}
	return &Configs{pool: pool}, nil
}

const configColumns = `task_id, id, url, scheme, secret_ref, subject, tenant, workspace, context_id, after_seq, done, created`

func scanConfig(row pgx.Row) (push.Record, error) {
	var r push.Record
	var subject []byte
	if err := row.Scan(&r.TaskID, &r.ID, &r.URL, &r.Scheme, &r.SecretRef, &subject, &r.Tenant,
		&r.Workspace, &r.ContextID, &r.After, &r.Done, &r.Created); err != nil {
		return push.Record{}, err
	}
	var doc *subjectDoc
	if err := json.Unmarshal(subject, &doc); err != nil {
		return push.Record{}, fmt.Errorf("postgres: push config %s/%s: subject: %w", r.TaskID, r.ID, err)
	}
	r.Subject = doc.subject()
	r.Created = r.Created.UTC()
	return r, nil
}

func collectConfigs(rows pgx.Rows) ([]push.Record, error) {
	defer rows.Close()
	var out []push.Record
	for rows.Next() {
		r, err := scanConfig(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Put implements [push.ConfigStore].
func (c *Configs) Put(ctx context.Context, rec push.Record, max int) (push.Record, bool, error) {
	subject, err := json.Marshal(subjectDocOf(rec.Subject))
	if err != nil {
		return push.Record{}, false, fmt.Errorf("postgres: put push config: %w", err)
	}
	var old push.Record
	var replaced bool
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		// Serialize the Puts of one task: the count below and the insert
		// after it are then one step, on every replica.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, $2))`, rec.TaskID, pushTaskLockSeed); err != nil {
			return err
		}
		prev, err := scanConfig(tx.QueryRow(ctx,
			`SELECT `+configColumns+` FROM wopinterop_push_configs WHERE task_id = $1 AND id = $2`, rec.TaskID, rec.ID))
		switch {
		case err == nil:
			old, replaced = prev, true
			_, err = tx.Exec(ctx, `UPDATE wopinterop_push_configs SET url = $3, scheme = $4, secret_ref = $5,
				subject = $6, tenant = $7, workspace = $8, context_id = $9, after_seq = $10, done = $11, created = $12
				WHERE task_id = $1 AND id = $2`,
				rec.TaskID, rec.ID, rec.URL, rec.Scheme, rec.SecretRef, subject, rec.Tenant, rec.Workspace,
				rec.ContextID, rec.After, rec.Done, rec.Created)
			return err
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if max > 0 {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM wopinterop_push_configs WHERE task_id = $1`, rec.TaskID).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return push.ErrTooManyConfigs
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO wopinterop_push_configs (`+configColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			rec.TaskID, rec.ID, rec.URL, rec.Scheme, rec.SecretRef, subject, rec.Tenant, rec.Workspace,
			rec.ContextID, rec.After, rec.Done, rec.Created)
		return err
	})
	switch {
	case errors.Is(err, push.ErrTooManyConfigs):
		return push.Record{}, false, err
	case err != nil:
		return push.Record{}, false, fmt.Errorf("postgres: put push config: %w", err)
	}
	return old, replaced, nil
}

// Get implements [push.ConfigStore].
func (c *Configs) Get(ctx context.Context, taskID, id string) (push.Record, error) {
	r, err := scanConfig(c.pool.QueryRow(ctx,
		`SELECT `+configColumns+` FROM wopinterop_push_configs WHERE task_id = $1 AND id = $2`, taskID, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return push.Record{}, push.ErrConfigNotFound
	case err != nil:
		return push.Record{}, fmt.Errorf("postgres: get push config: %w", err)
	}
	return r, nil
}

// List implements [push.ConfigStore].
func (c *Configs) List(ctx context.Context, taskID string) ([]push.Record, error) {
	rows, err := c.pool.Query(ctx,
		`SELECT `+configColumns+` FROM wopinterop_push_configs WHERE task_id = $1 ORDER BY registered`, taskID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list push configs: %w", err)
	}
	out, err := collectConfigs(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: list push configs: %w", err)
	}
	return out, nil
}

// Delete implements [push.ConfigStore].
func (c *Configs) Delete(ctx context.Context, taskID, id string) (push.Record, bool, error) {
	r, err := scanConfig(c.pool.QueryRow(ctx,
		`DELETE FROM wopinterop_push_configs WHERE task_id = $1 AND id = $2 RETURNING `+configColumns, taskID, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return push.Record{}, false, nil
	case err != nil:
		return push.Record{}, false, fmt.Errorf("postgres: delete push config: %w", err)
	}
	return r, true, nil
}

// Finish implements [push.ConfigStore]. The secret_ref condition makes it
// a compare-and-set: a replacement registered meanwhile keeps its secret.
func (c *Configs) Finish(ctx context.Context, taskID, id, secretRef string) error {
	if _, err := c.pool.Exec(ctx, `UPDATE wopinterop_push_configs SET done = true, secret_ref = ''
		WHERE task_id = $1 AND id = $2 AND secret_ref = $3`, taskID, id, secretRef); err != nil {
		return fmt.Errorf("postgres: finish push config: %w", err)
	}
	return nil
}

// Advance implements [push.ConfigStore].
func (c *Configs) Advance(ctx context.Context, taskID string, seq int64) error {
	if _, err := c.pool.Exec(ctx, `UPDATE wopinterop_push_configs SET after_seq = $2
		WHERE task_id = $1 AND after_seq < $2`, taskID, seq); err != nil {
		return fmt.Errorf("postgres: advance push configs: %w", err)
	}
	return nil
}

// Live implements [push.ConfigStore].
func (c *Configs) Live(ctx context.Context) ([]push.Record, error) {
	rows, err := c.pool.Query(ctx,
		`SELECT `+configColumns+` FROM wopinterop_push_configs WHERE NOT done ORDER BY registered`)
	if err != nil {
		return nil, fmt.Errorf("postgres: live push configs: %w", err)
	}
	out, err := collectConfigs(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: live push configs: %w", err)
	}
	return out, nil
}
