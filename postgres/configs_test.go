package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
	"github.com/wopinterop/wopinterop/push"
	"github.com/wopinterop/wopinterop/push/pushtest"
)

func openConfigs(t testing.TB, pool *pgxpool.Pool) *Configs {
	t.Helper()
	c, err := NewConfigs(testCtx(t), pool)
	if err != nil {
		t.Fatalf("NewConfigs: %v", err)
	}
	return c
}

// The PostgreSQL config store passes the push kit's ConfigStore checks,
// with a second connection pool on the same database as the second
// replica.
func TestConfigsConformance(t *testing.T) {
	set := newReplicaSet(func(t testing.TB, pool *pgxpool.Pool) push.ConfigStore { return openConfigs(t, pool) })
	pushtest.RunConformance(t, pushtest.Harness{NewConfigs: set.first, ConfigsReplica: set.replica})
}

// TestConfigsLimitAcrossPools: of many concurrent Puts of distinct ids on
// one task, spread over two pools (two replicas), exactly max succeed and
// the rest are ErrTooManyConfigs, several rounds over.
func TestConfigsLimitAcrossPools(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	if _, err := Migrate(testCtx(t), pgtest.Pool(t, dsn)); err != nil {
		t.Fatal(err)
	}
	replicas := []*Configs{openConfigs(t, pgtest.Pool(t, dsn)), openConfigs(t, pgtest.Pool(t, dsn))}
	const max, writers = 3, 24
	for round := range 5 {
		task := fmt.Sprintf("limit-task-%d", round)
		var ok sync.WaitGroup
		var mu sync.Mutex
		succeeded, refused := 0, 0
		var unexpected []error
		start := make(chan struct{})
		for w := range writers {
			ok.Go(func() {
				<-start
				_, _, err := replicas[w%2].Put(testCtx(t), push.Record{TaskID: task, ID: fmt.Sprintf("cfg-%d", w),
					Subject: alice(), Created: time.Now().UTC().Truncate(time.Microsecond)}, max)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					succeeded++
				case errors.Is(err, push.ErrTooManyConfigs):
					refused++
				default:
					unexpected = append(unexpected, err)
				}
			})
		}
		close(start)
		ok.Wait()
		if len(unexpected) > 0 || succeeded != max || refused != writers-max {
			t.Fatalf("round %d: %d succeeded, %d refused, errors %v; want %d and %d", round, succeeded, refused, unexpected, max, writers-max)
		}
		held, err := replicas[1].List(testCtx(t), task)
		if err != nil || len(held) != max {
			t.Fatalf("round %d: the task holds %d configs (%v), want %d", round, len(held), err, max)
		}
	}
}

// TestConfigsRefuseStaleSchema: like every store, the config store refuses
// a database Migrate has not brought up to date.
func TestConfigsRefuseStaleSchema(t *testing.T) {
	if _, err := NewConfigs(testCtx(t), pgtest.NewPool(t)); !errors.Is(err, ErrSchemaBehind) {
		t.Fatalf("NewConfigs on an empty database = %v, want ErrSchemaBehind", err)
	}
}
