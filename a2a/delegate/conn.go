package delegate

import (
	"context"
	"iter"
	"log/slog"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/interop"
)

// remote is the part of a2a-go's *a2aclient.Client a delegation drives. The
// connection side builds the client (guarded transport, negotiated version,
// tenant, credentials); the lifecycle side only calls these methods, so its
// tests can script a peer without a network.
type remote interface {
	SendMessage(ctx context.Context, req *wire.SendMessageRequest) (wire.SendMessageResult, error)
	SendStreamingMessage(ctx context.Context, req *wire.SendMessageRequest) iter.Seq2[wire.Event, error]
	GetTask(ctx context.Context, req *wire.GetTaskRequest) (*wire.Task, error)
	CancelTask(ctx context.Context, req *wire.CancelTaskRequest) (*wire.Task, error)
	SubscribeToTask(ctx context.Context, req *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error]
}

// Conn is one admitted, negotiated connection to a remote agent on behalf of
// one run. Connect returns it; Delegate and Cancel use it.
type Conn struct {
	// RunID is the local run the exchange belongs to: its log receives the
	// negotiation.decided record and the translation-loss records.
	RunID string
	// Admission is the record the agent was admitted under.
	Admission Admission
	// Card is the agent card as resolved (and verified, when required).
	Card *wire.AgentCard
	// Version is the negotiated A2A version, sent as A2A-Version.
	Version string
	// Tenant is the chosen interface's AgentInterface.tenant, echoed in
	// every request (A2A 1.0 §AgentInterface); "" when it carries none.
	Tenant string
	// Streaming is whether the chosen interface and the card allow
	// SendStreamingMessage and SubscribeToTask.
	Streaming bool
	// Interface is the card's interface the connection talks to: the
	// JSON-RPC one of the negotiated version when the card offers it, else
	// the HTTP+JSON one.
	Interface *wire.AgentInterface

	remote remote
	deps   *connDeps
}

// connDeps are the collaborators a Conn shares with the Client that made it.
type connDeps struct {
	events interop.EventSink
	now    func() time.Time
	log    *slog.Logger
	// reverse is the interop map whose a2a.taskStateReverse rows project a
	// remote task state onto a run status: the host's map, or
	// mapping.Builtin().
	reverse *interopmap.Map
}
