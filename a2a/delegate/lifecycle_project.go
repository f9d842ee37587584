package delegate

import (
	"log/slog"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// project maps a remote task state onto the host's run vocabulary through
// the interop map's a2a.taskStateReverse rows (OpenWOP interop map; RFC 0199
// §D.1): AUTH_REQUIRED is waiting-input with the auth sub-kind, REJECTED
// is failed with reason rejected_by_remote, and a state the map does not
// know is pending — never completed.
func (c *Conn) project(s wire.TaskState) (status interop.RunStatus, subkind, reason string) {
	status, _, ok := c.deps.reverse.ReverseTaskState(s)
	if !ok {
		return interop.StatusPending, "", ""
	}
	switch s {
	case wire.TaskStateAuthRequired:
		subkind = SubkindAuth
	case wire.TaskStateRejected:
		reason = ReasonRejectedByRemote
	}
	return status, subkind, reason
}

// warning is the warning reading s earns: TASK_STATE_UNSPECIFIED is never
// emitted and a state outside the map is unknown; both are read as
// pending.
func (c *Conn) warning(s wire.TaskState) Warning {
	if _, _, ok := c.deps.reverse.ReverseTaskState(s); !ok {
		return WarningUnknownState
	}
	if s == wire.TaskStateUnspecified {
		return WarningUnspecifiedState
	}
	return ""
}

// logger is the host's logger, or one that discards.
func (c *Conn) logger() *slog.Logger {
	if c.deps != nil && c.deps.log != nil {
		return c.deps.log
	}
	return slog.New(slog.DiscardHandler)
}
