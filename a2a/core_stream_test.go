package a2a

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

var coreStreaming = withCaps(caps{Streaming: true, DurableTasks: true})

// collect drains a stream into a compact description per event:
// "task:STATE", "status:STATE", "artifact:ID[+append][!last]:text".
func collectStream(t *testing.T, ctx context.Context, seq iter.Seq2[wire.Event, error]) ([]string, []wire.Event) {
	t.Helper()
	defer func() {
		if ctx.Err() != nil {
			t.Fatal("the stream ended only because its context did")
		}
	}()
	var (
		out    []string
		events []wire.Event
	)
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("stream yielded %v after %v", err, out)
		}
		events = append(events, ev)
		switch e := ev.(type) {
		case *wire.Task:
			out = append(out, "task:"+string(e.Status.State))
		case *wire.TaskStatusUpdateEvent:
			out = append(out, "status:"+string(e.Status.State))
		case *wire.TaskArtifactUpdateEvent:
			d := "artifact:" + string(e.Artifact.ID)
			if e.Append {
				d += "+append"
			}
			if e.LastChunk {
				d += "!last"
			}
			var texts []string
			for _, p := range e.Artifact.Parts {
				texts = append(texts, p.Text())
			}
			out = append(out, d+":"+strings.Join(texts, ","))
		default:
			t.Fatalf("unexpected event %T", ev)
		}
		if len(out) > 50 {
			t.Fatal("stream does not end")
		}
	}
	return out, events
}

func TestStreamMessageOrder(t *testing.T) {
	cases := []struct {
		skill string
		want  []string
	}{
		{memstore.FixtureNoop, []string{"task:TASK_STATE_WORKING", "artifact:result!last:conformance-noop completed", "status:TASK_STATE_COMPLETED"}},
		{probeChunks, []string{"task:TASK_STATE_WORKING", "artifact:doc:one", "artifact:doc+append!last:two", "status:TASK_STATE_COMPLETED"}},
		{memstore.FixtureFailure, []string{"task:TASK_STATE_WORKING", "status:TASK_STATE_FAILED"}},
		// SendStreamingMessage ends after the interrupted statusUpdate.
		{memstore.FixtureApproval, []string{"task:TASK_STATE_WORKING", "status:TASK_STATE_INPUT_REQUIRED"}},
		{probeCredential, []string{"task:TASK_STATE_WORKING", "status:TASK_STATE_AUTH_REQUIRED"}},
	}
	env := newCoreEnv(t, coreStreaming, withRouted(memstore.FixtureNoop, probeChunks, memstore.FixtureFailure, memstore.FixtureApproval, probeCredential))
	c := asCaller(coreTenantA, "alice")
	for _, tc := range cases {
		t.Run(tc.skill, func(t *testing.T) {
			m := textMessage("m-"+tc.skill, "go")
			m.Metadata = map[string]any{"skillId": tc.skill}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			seq, err := opened(env.srv.sendStreamingMessage(ctx, c, &wire.SendMessageRequest{Message: m}))
			if err != nil {
				t.Fatal(err)
			}
			got, events := collectStream(t, ctx, seq)
			if strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
				t.Fatalf("stream:\n %v\nwant\n %v", got, tc.want)
			}
			task := events[0].(*wire.Task)
			if len(task.History) != 1 || task.History[0].ID != m.ID {
				t.Fatalf("first Task history = %+v", task.History)
			}
			for _, ev := range events[1:] {
				info := ev.TaskInfo()
				if info.TaskID != task.ID || info.ContextID != task.ContextID {
					t.Fatalf("event %T names %+v, want %s/%s", ev, info, task.ID, task.ContextID)
				}
			}
			last, ok := events[len(events)-1].(*wire.TaskStatusUpdateEvent)
			if !ok {
				t.Fatalf("last event %T", events[len(events)-1])
			}
			switch last.Status.State {
			case wire.TaskStateInputRequired:
				if meta := interruptMeta(t, last.Metadata); meta["kind"] != "approval" || last.Status.Message == nil {
					t.Fatalf("interrupted update: metadata %v message %+v", meta, last.Status.Message)
				}
			case wire.TaskStateAuthRequired:
				if text := last.Status.Message.Parts[0].Text(); !strings.Contains(text, coreCredentialURL) {
					t.Fatalf("auth update message %q", text)
				}
			case wire.TaskStateFailed:
				if last.Status.Message.Parts[0].Text() != memstore.FixtureFailureMessage {
					t.Fatalf("failed update message %+v", last.Status.Message)
				}
			}
			if last.Status.Timestamp == nil {
				t.Fatal("status update without timestamp")
			}
		})
	}
}

func TestStreamMessageRefusalsComeBeforeTheStream(t *testing.T) {
	t.Run("facet off", func(t *testing.T) {
		env := newCoreEnv(t)
		_, _, err := env.through(coreCtx(t), asCaller(coreTenantA, "alice"), methodSendStreamingMessage, &wire.SendMessageRequest{Message: textMessage("m-1", "go")})
		wantRowError(t, env, err, -32004)
		page, _ := env.store.ListRuns(coreCtx(t), coreSubject(coreTenantA, "alice"), interop.ListRunsQuery{})
		if page.Total != 0 {
			t.Fatalf("a refused stream created %d runs", page.Total)
		}
	})
	t.Run("invalid message", func(t *testing.T) {
		env := newCoreEnv(t, coreStreaming)
		_, err := opened(env.srv.sendStreamingMessage(coreCtx(t), asCaller(coreTenantA, "alice"), &wire.SendMessageRequest{Message: userMessage("m-1")}))
		wantError(t, err, -32602, "message.parts")
	})
	t.Run("terminal task", func(t *testing.T) {
		env := newCoreEnv(t, coreStreaming, withRouted(memstore.FixtureNoop))
		c := asCaller(coreTenantA, "alice")
		first := env.send(t, c, textMessage("m-1", "go"))
		m := textMessage("m-2", "more")
		m.TaskID = first.ID
		_, err := opened(env.srv.sendStreamingMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m}))
		wantRowError(t, env, err, -32004)
	})
}

func TestStreamMessageRepeatOfSettledTaskIsTaskOnly(t *testing.T) {
	env := newCoreEnv(t, coreStreaming, withRouted(memstore.FixtureNoop))
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "go"))
	ctx := coreCtx(t)
	seq, err := opened(env.srv.sendStreamingMessage(ctx, c, &wire.SendMessageRequest{Message: textMessage("m-1", "go")}))
	if err != nil {
		t.Fatal(err)
	}
	got, events := collectStream(t, ctx, seq)
	if len(got) != 1 || got[0] != "task:TASK_STATE_COMPLETED" || events[0].TaskInfo().TaskID != first.ID {
		t.Fatalf("repeat streamed %v", got)
	}
}

func TestStreamMessageResolvesAndFollows(t *testing.T) {
	env := newCoreEnv(t, coreStreaming)
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "approve"))
	ctx := coreCtx(t)
	seq, err := opened(env.srv.sendStreamingMessage(ctx, c, &wire.SendMessageRequest{Message: acceptReply("m-2", first.ID, "accept")}))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := collectStream(t, ctx, seq)
	// The approval run completes with an output and no artifact: the
	// output's artifact goes just before the end.
	want := "task:TASK_STATE_WORKING | artifact:" + outputArtifactID + "!last: | status:TASK_STATE_COMPLETED"
	if strings.Join(got, " | ") != want {
		t.Fatalf("stream %v, want %s", got, want)
	}
}

func TestStreamSubscribeFollowsUntilTerminal(t *testing.T) {
	env := newCoreEnv(t, coreStreaming)
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "approve"))
	before := env.run(t, c.subject, first.ID)
	seq, err := opened(env.srv.subscribeToTask(coreCtx(t), c, &wire.SubscribeToTaskRequest{ID: first.ID}))
	if err != nil {
		t.Fatal(err)
	}
	// Subscribing is read-only.
	assertRunUnchanged(t, env, c.subject, before)
	var got []string
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *wire.Task:
			got = append(got, "task:"+string(e.Status.State))
			if meta := interruptMeta(t, e.Metadata); meta["kind"] != "approval" {
				t.Fatalf("first Task metadata = %v", meta)
			}
			// An input-required task keeps the stream open: answer it now.
			go env.srv.sendMessage(context.Background(), c, &wire.SendMessageRequest{Message: acceptReply("m-2", first.ID, "accept")})
		case *wire.TaskStatusUpdateEvent:
			got = append(got, "status:"+string(e.Status.State))
		}
	}
	want := "task:TASK_STATE_INPUT_REQUIRED | status:TASK_STATE_WORKING | status:TASK_STATE_COMPLETED"
	if strings.Join(got, " | ") != want {
		t.Fatalf("subscribe %v, want %s", got, want)
	}
}

func TestStreamSubscribeRefusals(t *testing.T) {
	env := newCoreEnv(t, coreStreaming, withRouted(memstore.FixtureNoop, memstore.FixtureApproval))
	c := asCaller(coreTenantA, "alice")
	m := textMessage("m-1", "go")
	m.Metadata = map[string]any{"skillId": memstore.FixtureNoop}
	done := env.send(t, c, m)
	_, err := opened(env.srv.subscribeToTask(coreCtx(t), c, &wire.SubscribeToTaskRequest{ID: done.ID}))
	wantRowError(t, env, err, -32004)
	_, err = opened(env.srv.subscribeToTask(coreCtx(t), c, &wire.SubscribeToTaskRequest{ID: "acme/fabricatedfabricated0001"}))
	wantRowError(t, env, err, -32001)

	for _, k := range []caps{{}, {Streaming: true}, {DurableTasks: true}} {
		off := newCoreEnv(t, withCaps(k))
		_, _, err := off.through(coreCtx(t), c, methodSubscribeToTask, &wire.SubscribeToTaskRequest{ID: "acme/fabricatedfabricated0001"})
		wantRowError(t, off, err, -32004)
	}
}

func TestStreamEndsWhenTheClientGoesAway(t *testing.T) {
	env := newCoreEnv(t, coreStreaming, withRouted(probeGate))
	c := asCaller(coreTenantA, "alice")
	ctx, cancel := context.WithCancel(coreCtx(t))
	seq, err := opened(env.srv.sendStreamingMessage(ctx, c, &wire.SendMessageRequest{Message: textMessage("m-1", "go")}))
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan []error, 1)
	go func() {
		var errs []error
		n := 0
		for _, err := range seq {
			n++
			if n == 1 {
				cancel()
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		ended <- errs
	}()
	select {
	case errs := <-ended:
		if len(errs) != 0 {
			t.Fatalf("a cancelled stream yielded errors %v", errs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end when its context was cancelled")
	}
	// The run itself is untouched by the client leaving.
	page, err := env.store.ListRuns(coreCtx(t), c.subject, interop.ListRunsQuery{})
	if err != nil || page.Total != 1 || page.Runs[0].Status != interop.StatusRunning {
		t.Fatalf("run after the client left: %+v, %v", page.Runs, err)
	}
}

func TestStreamConsumerMayStopEarly(t *testing.T) {
	env := newCoreEnv(t, coreStreaming, withRouted(probeChunks))
	c := asCaller(coreTenantA, "alice")
	for stopAfter := 1; stopAfter <= 3; stopAfter++ {
		seq, err := opened(env.srv.sendStreamingMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: textMessage(fmt.Sprintf("m-%d", stopAfter), "go")}))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range seq {
			n++
			if n == stopAfter {
				break
			}
		}
		if n != stopAfter {
			t.Fatalf("stopped after %d, want %d", n, stopAfter)
		}
	}
}
