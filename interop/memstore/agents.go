package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wopinterop/wopinterop/interop"
)

// AddAgent adds an agent to tenant's inventory. The id must be non-empty
// and unique in the tenant.
func (s *Store) AddAgent(tenant string, a interop.Agent) error {
	if err := validTenant(tenant); err != nil {
		return err
	}
	if a.ID == "" {
		return errors.New("memstore: add agent: id is empty")
	}
	a.Workflows = slices.Clone(a.Workflows)
	a.HandoffSchemas = bytes.Clone(a.HandoffSchemas)
	t := s.tenantForWrite(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, have := range t.agents {
		if have.ID == a.ID {
			return fmt.Errorf("memstore: add agent %q: duplicate id", a.ID)
		}
	}
	t.agents = append(t.agents, a)
	return nil
}

// ListAgents returns the agents of the Subject's tenant, in the order they
// were added. Agents are tenant-wide: the workspace does not narrow them.
func (s *Store) ListAgents(ctx context.Context, sub interop.Subject) ([]interop.Agent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return []interop.Agent{}, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]interop.Agent, len(t.agents))
	for i, a := range t.agents {
		a.Workflows = slices.Clone(a.Workflows)
		a.HandoffSchemas = bytes.Clone(a.HandoffSchemas)
		out[i] = a
	}
	return out, nil
}
