package facets

import "time"

func effectiveWindow(w time.Duration) time.Duration {
	if w == 0 {
		return MaxRefreshWindow
	}
	return w
}

func refreshDeadline(at Date, window time.Duration) time.Time {
	t, err := at.Time()
	if err != nil {
		return time.Time{}
	}
	return t.Add(effectiveWindow(window))
}

func staleAfter(deadline, now time.Time) (time.Duration, bool) {
	remaining := deadline.Sub(now)
	return remaining, now.After(deadline)
}

// RefreshDeadline is the instant the advertisement goes stale: midnight
// UTC starting RefreshedAt plus the refresh window (OpenWOP interop.md §The refresh SLA). It is the
// zero time when RefreshedAt is not a date. Validation refuses a facet
// whose deadline has passed.
func (a *A2A) RefreshDeadline() time.Time { return refreshDeadline(a.RefreshedAt, a.RefreshWindow) }

// StaleAfter returns the time left until the refresh deadline and whether
// it has passed. A host should alarm well before: re-checking upstream and
// bumping RefreshedAt is a human task, so alarm when remaining drops under
// a margin such as two weeks, and refuse to start once stale is true.
func (a *A2A) StaleAfter(now time.Time) (remaining time.Duration, stale bool) {
	return staleAfter(a.RefreshDeadline(), now)
}

// RefreshDeadline is A2A.RefreshDeadline for MCP.
func (m *MCP) RefreshDeadline() time.Time { return refreshDeadline(m.RefreshedAt, m.RefreshWindow) }

// StaleAfter is A2A.StaleAfter for MCP.
func (m *MCP) StaleAfter(now time.Time) (remaining time.Duration, stale bool) {
	return staleAfter(m.RefreshDeadline(), now)
}
