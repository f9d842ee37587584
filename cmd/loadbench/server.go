package main

import "sync"

// server is one server under test, as the scenarios reach it.
type server struct {
	name string
	// a2aURL is the A2A JSON-RPC endpoint, mcpURL the MCP one; "" when
	// the server does not speak that protocol.
	a2aURL, mcpURL string
	// auth is the Authorization of the bench caller, listAuth of the
	// caller whose tenant holds the listed tasks.
	auth, listAuth string
	// tenant is the A2A routing value of the agent SendMessage goes to
	// (params.tenant; OpenWOP interop.md §Per-agent cards); "" for none.
	tenant string
	// held is whether the server has the held task (fan-out, push),
	// driven through its control endpoint.
	held bool
	// pushType is the Content-Type of the server's A2A pushes; "" when
	// it does not push.
	pushType string
	// fixtures the unary scenarios read, filled by prepare.
	taskID string
	// control is the origin of the server process's control endpoint.
	control string
	stop    func()
}

// holdSkill is the skill (workflow) of the held task; tickArtifact is the
// artifact each of its updates replaces.
const (
	holdSkill    = "bench-hold"
	tickArtifact = "tick"
)

// holder hands the next held task its channel of updates: each value is
// how many artifact updates to publish at once, and closing it lets the
// task complete. A server holds one task at a time.
type holder struct {
	mu   sync.Mutex
	next chan int
}

// arm makes a fresh channel for the next held task to take.
func (h *holder) arm() chan int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next = make(chan int)
	return h.next
}

// take is the held task's side of arm.
func (h *holder) take() chan int {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.next
	if c == nil {
		c = make(chan int) // never armed: a task that waits for its context
	}
	h.next = nil
	return c
}
