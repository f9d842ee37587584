package postgres

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

// TestMain runs the package against one throw-away cluster (pgtest) and
// fails it when a goroutine outlives its tests: every execution, watch and
// background loop belongs to a Store, and Close waits for it.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
