package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// AddAgent adds an agent to tenant's inventory, for every replica at
// once. The id must be non-empty and unique in the tenant.
func (s *Store) AddAgent(ctx context.Context, tenant string, a interop.Agent) error {
	if !isolation.ValidTenant(tenant) {
		return fmt.Errorf("postgres: invalid tenant %q", tenant)
	}
	if a.ID == "" {
		return errors.New("postgres: add agent: id is empty")
	}
	doc, err := encode(agentDocOf(a))
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO wopinterop_agents (tenant, id, doc) VALUES ($1, $2, $3)`, tenant, a.ID, doc)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505": // unique_violation
		return fmt.Errorf("postgres: add agent %q: duplicate id", a.ID)
	case err != nil:
		return fmt.Errorf("postgres: add agent %q: %w", a.ID, err)
	}
	return nil
}

// RemoveAgent removes an agent from tenant's inventory; removing one that
// is not there is not an error.
func (s *Store) RemoveAgent(ctx context.Context, tenant, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM wopinterop_agents WHERE tenant = $1 AND id = $2`, tenant, id); err != nil {
		return fmt.Errorf("postgres: remove agent %q: %w", id, err)
	}
	return nil
}

// ListAgents returns the agents of the Subject's tenant, in the order they
// were added. Agents are tenant-wide: the workspace does not narrow them.
func (s *Store) ListAgents(ctx context.Context, sub interop.Subject) ([]interop.Agent, error) {
	rows, err := s.pool.Query(ctx, `SELECT doc FROM wopinterop_agents WHERE tenant = $1 ORDER BY added`, sub.Tenant)
	if err != nil {
		return nil, fmt.Errorf("postgres: list agents: %w", err)
	}
	out := []interop.Agent{}
	var raw []byte
	_, err = pgx.ForEachRow(rows, []any{&raw}, func() error {
		var d agentDoc
		if err := decode(raw, &d); err != nil {
			return err
		}
		out = append(out, d.agent())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list agents: %w", err)
	}
	return out, nil
}
