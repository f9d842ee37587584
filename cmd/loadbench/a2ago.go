package main

import (
	"context"
	"fmt"
	"iter"
	"net"
	"net/http"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	a2apush "github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// startA2AGo serves a2a-go's full stack: its JSON-RPC handler over its
// default request handler, its in-memory task store (which keeps a task
// to the user that created it) and an executor that completes at once,
// with listSize completed tasks of the list user, and its push sender.
func startA2AGo(ctx context.Context, listSize int, hold *holder) (*server, error) {
	store := taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: a2asrv.NewTaskStoreAuthenticator()})
	if err := seedA2AGo(ctx, store, listSize); err != nil {
		return nil, err
	}
	// Its push sender refuses loopback receivers unless told this is a
	// trusted internal network.
	sender := a2apush.NewHTTPPushSender(&a2apush.HTTPSenderConfig{AllowPrivateNetworks: true})
	h := a2asrv.NewHandler(&executor{hold: hold}, a2asrv.WithTaskStore(store), a2asrv.WithCallInterceptors(bearerUsers{}),
		a2asrv.WithPushNotifications(a2apush.NewInMemoryStore(), sender))
	mux := http.NewServeMux()
	mux.Handle("/a2a", a2asrv.NewJSONRPCHandler(h))
	base, stop, err := serve(mux)
	if err != nil {
		return nil, err
	}
	return &server{name: "a2ago", a2aURL: base + "/a2a", auth: "Bearer " + benchKey, listAuth: "Bearer " + listKey, held: true,
		pushType: "application/json", stop: stop}, nil
}

// seedA2AGo creates n completed tasks of the list user in store.
func seedA2AGo(ctx context.Context, store *taskstore.InMemory, n int) error {
	ctx, cc := a2asrv.NewCallContext(ctx, nil)
	cc.User = a2asrv.NewAuthenticatedUser(listTenant, nil)
	for i := range n {
		info := wire.TaskInfo{TaskID: wire.NewTaskID(), ContextID: wire.NewContextID()}
		msg := wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("go"))
		msg.TaskID, msg.ContextID = info.TaskID, info.ContextID
		task := wire.NewSubmittedTask(info, msg)
		task.Status = wire.TaskStatus{State: wire.TaskStateCompleted}
		task.Artifacts = []*wire.Artifact{{ID: "result", Parts: wire.ContentParts{wire.NewTextPart("done")}}}
		if _, err := store.Create(ctx, task); err != nil {
			return fmt.Errorf("seed a2a-go task %d: %w", i, err)
		}
	}
	return nil
}

// bearerUsers authenticates the bench's bearer keys as a2a-go users, as
// a host's interceptor would; the user scopes the store's tasks.
type bearerUsers struct{}

func (bearerUsers) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	var auth string
	if v, ok := cc.ServiceParams().Get("authorization"); ok && len(v) > 0 {
		auth = v[0]
	}
	switch strings.TrimPrefix(auth, "Bearer ") {
	case benchKey:
		cc.User = a2asrv.NewAuthenticatedUser(benchTenant, nil)
	case listKey:
		cc.User = a2asrv.NewAuthenticatedUser(listTenant, nil)
	default:
		return ctx, nil, wire.ErrUnauthenticated
	}
	return ctx, nil, nil
}

func (bearerUsers) After(context.Context, *a2asrv.CallContext, *a2asrv.Response) error { return nil }

// executor completes every task at once with one artifact, as the
// conformance-noop workflow does; a message for the held skill instead
// publishes an artifact per update until its holder lets go.
type executor struct{ hold *holder }

func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		if ec.StoredTask == nil && !yield(wire.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if skill, _ := ec.Message.Metadata["skillId"].(string); skill == holdSkill {
			e.held(ctx, ec, yield)
			return
		}
		if !yield(wire.NewArtifactEvent(ec, wire.NewTextPart("done")), nil) {
			return
		}
		yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCompleted, nil), nil)
	}
}

func (e *executor) held(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(wire.Event, error) bool) {
	if !yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateWorking, nil), nil) {
		return
	}
	updates := e.hold.take()
	for {
		select {
		case k, ok := <-updates:
			if !ok {
				yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCompleted, nil), nil)
				return
			}
			for range k {
				// Not appended: the update replaces the artifact, so the task keeps its size.
				tick := &wire.TaskArtifactUpdateEvent{TaskID: ec.TaskID, ContextID: ec.ContextID,
					Artifact: &wire.Artifact{ID: tickArtifact, Parts: wire.ContentParts{wire.NewTextPart("tick")}}}
				if !yield(tick, nil) {
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

func (e *executor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCanceled, nil), nil)
	}
}

// serve serves h on a fresh loopback port and returns its origin and how
// to stop it.
func serve(h http.Handler) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Close()
		<-done
	}, nil
}
