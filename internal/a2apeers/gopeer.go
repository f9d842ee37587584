package a2apeers

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// StartGo starts a scripted a2a-go agent: a2asrv's default request handler
// over an AgentExecutor that runs the command each message names, served
// over JSON-RPC (JSONRPCPath) and HTTP+JSON (RESTPath), streaming on, with
// an A2A 1.0 card at CardPath. It behaves as a stock a2a-go v2.4.0 server
// does, defects included: it does not check A2A-Version (A2A 1.0 §3.6.2),
// and SubscribeToTask on a task with no live execution (input-required,
// terminal) answers TaskNotFound.
func StartGo(t testing.TB, s Script) *Peer {
	t.Helper()
	agent := &scriptedAgent{stop: make(chan struct{}), commands: map[wire.TaskID]string{}}
	return serve(t, func(base string) (http.Handler, *Peer) {
		card := scriptedCard(base, s)
		h := a2asrv.NewHandler(agent,
			a2asrv.WithCapabilityChecks(&card.Capabilities),
			a2asrv.WithLogger(slog.New(slog.DiscardHandler)))
		var rest http.Handler = a2asrv.NewRESTHandler(h)
		if s.Tenant != "" {
			// The a2a-go client puts the tenant before the operation's path.
			rest = a2asrv.NewTenantRESTHandler("/{*}", h)
		}
		cardJSON := mustJSON(card)
		if s.CardSigner != nil {
			cardJSON = signCard(t, cardJSON, s.CardSigner)
			card = mustCard(t, cardJSON)
		}
		mux := http.NewServeMux()
		mux.Handle("GET "+CardPath, cardHandler(cardJSON))
		mux.Handle(JSONRPCPath, requireBearer(s.BearerToken, BindingJSONRPC, a2asrv.NewJSONRPCHandler(h)))
		mux.Handle(RESTPath+"/", http.StripPrefix(RESTPath, requireBearer(s.BearerToken, BindingREST, rest)))
		return mux, &Peer{Card: card, CardJSON: cardJSON}
	}, agent.close)
}

// scriptedCard is the A2A 1.0 card of a scripted peer at base (A2A 1.0
// §4.4.1 AgentCard, supportedInterfaces with protocolVersion).
func scriptedCard(base string, s Script) *wire.AgentCard {
	skills := s.Skills
	if skills == nil {
		skills = DefaultSkills()
	}
	card := &wire.AgentCard{
		Name:        "a2apeers scripted agent",
		Description: "A scripted A2A agent for tests.",
		Version:     "1.0.0",
		SupportedInterfaces: []*wire.AgentInterface{
			{URL: base + JSONRPCPath, ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "1.0", Tenant: s.Tenant},
			{URL: base + RESTPath, ProtocolBinding: wire.TransportProtocolHTTPJSON, ProtocolVersion: "1.0", Tenant: s.Tenant},
		},
		Capabilities:       wire.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills:             skills,
	}
	if s.BearerToken != "" {
		card.SecuritySchemes = wire.NamedSecuritySchemes{"bearer": wire.HTTPAuthSecurityScheme{Scheme: "Bearer"}}
		card.SecurityRequirements = wire.SecurityRequirementsOptions{{"bearer": {}}}
	}
	return card
}

// errPeerStopped ends an execution still waiting when the test ends, so
// a2a-go's event pipeline stops with it.
var errPeerStopped = errors.New("a2apeers: peer stopped")

// scriptedAgent is the AgentExecutor of StartGo.
type scriptedAgent struct {
	stop      chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	commands map[wire.TaskID]string // the command each task runs, for Cancel
}

func (a *scriptedAgent) close() { a.closeOnce.Do(func() { close(a.stop) }) }

func (a *scriptedAgent) commandOf(id wire.TaskID) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.commands[id]
}

// Execute implements a2asrv.AgentExecutor.
func (a *scriptedAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		emit := func(events ...wire.Event) bool {
			for _, e := range events {
				if !yield(e, nil) {
					return false
				}
			}
			return true
		}
		if ec.StoredTask != nil {
			// A follow-up message answers ask-input: echoed, completed.
			emit(artifact(ec, EchoID, false, true, ec.Message.Parts...), status(ec, wire.TaskStateCompleted, ""))
			return
		}
		c := commandOf(ec.Message)
		a.mu.Lock()
		a.commands[ec.TaskID] = c.name
		a.mu.Unlock()
		if !emit(wire.NewSubmittedTask(ec, ec.Message)) {
			return
		}
		// wait holds the task until d passes (true), a cancel ends the
		// execution, or the test ends (errPeerStopped).
		wait := func(d time.Duration) bool {
			var elapsed <-chan time.Time
			if d > 0 {
				timer := time.NewTimer(d)
				defer timer.Stop()
				elapsed = timer.C
			}
			select {
			case <-elapsed:
				return true
			case <-ctx.Done():
			case <-a.stop:
				yield(nil, errPeerStopped)
			}
			return false
		}
		complete := func() { emit(result(ec), status(ec, wire.TaskStateCompleted, "")) }

		if c.err != nil {
			emit(status(ec, wire.TaskStateFailed, c.err.Error()))
			return
		}
		switch c.name {
		case Complete:
			emit(status(ec, wire.TaskStateWorking, ""), result(ec), status(ec, wire.TaskStateCompleted, ""))
		case Echo:
			emit(status(ec, wire.TaskStateWorking, ""), artifact(ec, EchoID, false, true, ec.Message.Parts...),
				status(ec, wire.TaskStateCompleted, ""))
		case Artifacts:
			if !emit(status(ec, wire.TaskStateWorking, "")) {
				return
			}
			for i := 1; i <= c.n; i++ {
				id := fmt.Sprintf(ArtifactIDFmt, i)
				if !emit(artifact(ec, id, false, false, wire.NewTextPart(fmt.Sprintf(ChunkFormat, i, 1))),
					artifact(ec, id, true, true, wire.NewTextPart(fmt.Sprintf(ChunkFormat, i, 2)))) {
					return
				}
			}
			emit(status(ec, wire.TaskStateCompleted, ""))
		case AskInput:
			emit(status(ec, wire.TaskStateWorking, ""), status(ec, wire.TaskStateInputRequired, QuestionText))
		case AuthRequired:
			if emit(status(ec, wire.TaskStateAuthRequired, AuthText)) && wait(c.wait) {
				complete()
			}
		case Slow:
			if emit(status(ec, wire.TaskStateWorking, "")) && wait(c.wait) {
				complete()
			}
		case Fail:
			emit(status(ec, wire.TaskStateWorking, ""), status(ec, wire.TaskStateFailed, FailureText))
		case Reject:
			emit(status(ec, wire.TaskStateRejected, RejectionText))
		case UnknownStateCommand:
			if emit(status(ec, wire.TaskStateWorking, ""), status(ec, UnknownState, "")) && wait(c.wait) {
				complete()
			}
		case CancelRacesComplete:
			// Held until a cancel arrives: Cancel completes the task
			// instead of cancelling it.
			if emit(status(ec, wire.TaskStateWorking, "")) {
				wait(0)
			}
		}
	}
}

// Cancel implements a2asrv.AgentExecutor: the task is cancelled, except a
// cancel-races-complete task, which completes with its result instead.
func (a *scriptedAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		if a.commandOf(ec.TaskID) == CancelRacesComplete {
			_ = yield(result(ec), nil) && yield(status(ec, wire.TaskStateCompleted, ""), nil)
			return
		}
		yield(status(ec, wire.TaskStateCanceled, ""), nil)
	}
}

// status is a status update; text, when set, is the agent's status message.
func status(ec *a2asrv.ExecutorContext, state wire.TaskState, text string) *wire.TaskStatusUpdateEvent {
	var msg *wire.Message
	if text != "" {
		msg = wire.NewMessageForTask(wire.MessageRoleAgent, ec, wire.NewTextPart(text))
	}
	return wire.NewStatusUpdateEvent(ec, state, msg)
}

// artifact is one chunk of artifact id (A2A 1.0 §4.2.2 append/lastChunk).
func artifact(ec *a2asrv.ExecutorContext, id string, appendChunk, lastChunk bool, parts ...*wire.Part) *wire.TaskArtifactUpdateEvent {
	info := ec.TaskInfo()
	return &wire.TaskArtifactUpdateEvent{
		TaskID: info.TaskID, ContextID: info.ContextID, Append: appendChunk, LastChunk: lastChunk,
		Artifact: &wire.Artifact{ID: wire.ArtifactID(id), Name: id, Parts: parts},
	}
}

// result is the artifact a completing command returns.
func result(ec *a2asrv.ExecutorContext) *wire.TaskArtifactUpdateEvent {
	return artifact(ec, ResultID, false, true, wire.NewTextPart(CompletedText))
}
