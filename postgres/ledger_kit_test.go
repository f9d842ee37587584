package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/mcp/sealed/sealedtest"
)

// The PostgreSQL ledger passes the driver kit every sealed.Ledger a
// replicated host implements must pass, with a second connection pool on
// the same database as the second replica.
func TestLedgerConformance(t *testing.T) {
	set := newReplicaSet(func(t testing.TB, pool *pgxpool.Pool) sealed.Ledger {
		l, err := NewLedger(testCtx(t), pool, LedgerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
	sealedtest.RunConformance(t, sealedtest.Harness{NewLedger: set.first, Replica: set.replica})
}
