//go:build !unix

package processcpu

import "time"

// Used is 0 where getrusage(2) is missing: CPU figures read 0.
func Used() time.Duration { return 0 }
