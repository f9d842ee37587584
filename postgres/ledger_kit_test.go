package postgres

import (
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/mcp/sealed/sealedtest"
	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

// The PostgreSQL ledger passes the driver kit every sealed.Ledger a
// replicated host implements must pass, with a second connection pool on
// the same database as the second replica.
func TestLedgerConformance(t *testing.T) {
	var mu sync.Mutex
	dsnOf := map[sealed.Ledger]string{}
	open := func(t testing.TB, dsn string) *Ledger {
		l, err := NewLedger(testCtx(t), pgtest.Pool(t, dsn), LedgerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		dsnOf[l] = dsn
		mu.Unlock()
		return l
	}
	sealedtest.RunConformance(t, sealedtest.Harness{
		NewLedger: func(t testing.TB) sealed.Ledger {
			dsn := pgtest.NewDSN(t)
			if _, err := Migrate(testCtx(t), pgtest.Pool(t, dsn)); err != nil {
				t.Fatal(err)
			}
			return open(t, dsn)
		},
		Replica: func(t testing.TB, first sealed.Ledger) sealed.Ledger {
			mu.Lock()
			dsn := dsnOf[first]
			mu.Unlock()
			return open(t, dsn)
		},
	})
}
