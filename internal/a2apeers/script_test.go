package a2apeers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/go-cmp/cmp"
)

// newClient is a stock a2a-go client for p's card, over binding.
func newClient(t *testing.T, p *Peer, binding wire.TransportProtocol) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromCard(t.Context(), p.Card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []wire.TransportProtocol{binding}}))
	if err != nil {
		t.Fatalf("a2aclient.NewFromCard: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// callCtx bounds one scenario so a peer that hangs fails instead of
// stalling the package.
func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func userMessage(parts ...*wire.Part) *wire.Message {
	return wire.NewMessage(wire.MessageRoleUser, parts...)
}

func sendText(text string) *wire.SendMessageRequest {
	return &wire.SendMessageRequest{Message: userMessage(wire.NewTextPart(text))}
}

// sendTask sends req and returns the task it answers with.
func sendTask(ctx context.Context, t *testing.T, c *a2aclient.Client, req *wire.SendMessageRequest) *wire.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*wire.Task)
	if !ok {
		t.Fatalf("SendMessage answered %T, want a task", res)
	}
	return task
}

// startTask sends text with returnImmediately (A2A 1.0 §3.1.1): the
// answer is the task as soon as it exists.
func startTask(ctx context.Context, t *testing.T, c *a2aclient.Client, text string) *wire.Task {
	t.Helper()
	req := sendText(text)
	req.Config = &wire.SendMessageConfig{ReturnImmediately: true}
	return sendTask(ctx, t, c, req)
}

func wantState(t *testing.T, task *wire.Task, state wire.TaskState, statusText string) {
	t.Helper()
	if task.Status.State != state {
		t.Fatalf("task %s is %s, want %s", task.ID, task.Status.State, state)
	}
	got := ""
	if m := task.Status.Message; m != nil && len(m.Parts) > 0 {
		got = m.Parts[0].Text()
	}
	if got != statusText {
		t.Fatalf("status message %q, want %q", got, statusText)
	}
}

// artifactTexts renders a task's artifacts as "id: text|text".
func artifactTexts(task *wire.Task) []string {
	var out []string
	for _, a := range task.Artifacts {
		s := string(a.ID) + ":"
		for _, p := range a.Parts {
			s += " " + p.Text()
		}
		out = append(out, s)
	}
	return out
}

func wantArtifacts(t *testing.T, task *wire.Task, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, artifactTexts(task)); diff != "" {
		t.Fatalf("artifacts (-want +got):\n%s", diff)
	}
}

// eventLine renders one streamed event for comparison.
func eventLine(e wire.Event) string {
	switch e := e.(type) {
	case *wire.Task:
		return "task " + string(e.Status.State)
	case *wire.TaskStatusUpdateEvent:
		return "status " + string(e.Status.State)
	case *wire.TaskArtifactUpdateEvent:
		s := fmt.Sprintf("artifact %s append=%v last=%v", e.Artifact.ID, e.Append, e.LastChunk)
		for _, p := range e.Artifact.Parts {
			s += " " + p.Text()
		}
		return s
	case *wire.Message:
		return "message"
	}
	return fmt.Sprintf("%T", e)
}

// testScript drives the commands every scripted peer shares with a stock
// a2a-go client over binding.
func testScript(t *testing.T, p *Peer, binding wire.TransportProtocol) {
	c := newClient(t, p, binding)

	t.Run("complete", func(t *testing.T) {
		task := sendTask(callCtx(t), t, c, sendText(Complete))
		wantState(t, task, wire.TaskStateCompleted, "")
		wantArtifacts(t, task, "result: "+CompletedText)
	})

	t.Run("echo", func(t *testing.T) {
		parts := []*wire.Part{
			wire.NewTextPart("not a command"),
			wire.NewDataPart(map[string]any{"unit": "payload", "n": 3.0}),
			wire.NewRawPart([]byte("canonical bytes")),
		}
		task := sendTask(callCtx(t), t, c, &wire.SendMessageRequest{Message: userMessage(parts...)})
		wantState(t, task, wire.TaskStateCompleted, "")
		if len(task.Artifacts) != 1 || task.Artifacts[0].ID != EchoID {
			t.Fatalf("artifacts %v, want one %q", artifactTexts(task), EchoID)
		}
		want, _ := json.Marshal(wire.ContentParts(parts))
		got, _ := json.Marshal(task.Artifacts[0].Parts)
		if string(got) != string(want) {
			t.Fatalf("echoed parts\n got %s\nwant %s", got, want)
		}
	})

	t.Run("artifacts", func(t *testing.T) {
		ctx := callCtx(t)
		var lines []string
		var taskID wire.TaskID
		for e, err := range c.SendStreamingMessage(ctx, sendText("artifacts:2")) {
			if err != nil {
				t.Fatalf("stream: %v (after %q)", err, lines)
			}
			taskID = e.TaskInfo().TaskID
			lines = append(lines, eventLine(e))
		}
		want := []string{
			"task TASK_STATE_SUBMITTED",
			"status TASK_STATE_WORKING",
			"artifact artifact-1 append=false last=false artifact 1 chunk 1",
			"artifact artifact-1 append=true last=true artifact 1 chunk 2",
			"artifact artifact-2 append=false last=false artifact 2 chunk 1",
			"artifact artifact-2 append=true last=true artifact 2 chunk 2",
			"status TASK_STATE_COMPLETED",
		}
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Fatalf("stream (-want +got):\n%s", diff)
		}
		task, err := c.GetTask(ctx, &wire.GetTaskRequest{ID: taskID})
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		wantArtifacts(t, task, "artifact-1: artifact 1 chunk 1 artifact 1 chunk 2", "artifact-2: artifact 2 chunk 1 artifact 2 chunk 2")
	})

	t.Run("ask-input", func(t *testing.T) {
		ctx := callCtx(t)
		task := sendTask(ctx, t, c, sendText(AskInput))
		wantState(t, task, wire.TaskStateInputRequired, QuestionText)
		answer := wire.NewMessageForTask(wire.MessageRoleUser, task, wire.NewTextPart("the answer"))
		done := sendTask(ctx, t, c, &wire.SendMessageRequest{Message: answer})
		wantState(t, done, wire.TaskStateCompleted, "")
		wantArtifacts(t, done, "echo: the answer")
	})

	t.Run("slow-cancelled", func(t *testing.T) {
		ctx := callCtx(t)
		task := startTask(ctx, t, c, "slow:1m")
		cancelled, err := c.CancelTask(ctx, &wire.CancelTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatalf("CancelTask: %v", err)
		}
		wantState(t, cancelled, wire.TaskStateCanceled, "")
		got, err := c.GetTask(ctx, &wire.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		wantState(t, got, wire.TaskStateCanceled, "")
	})

	t.Run("slow-elapses", func(t *testing.T) {
		task := sendTask(callCtx(t), t, c, sendText("slow:20ms"))
		wantState(t, task, wire.TaskStateCompleted, "")
		wantArtifacts(t, task, "result: "+CompletedText)
	})

	t.Run("fail", func(t *testing.T) {
		wantState(t, sendTask(callCtx(t), t, c, sendText(Fail)), wire.TaskStateFailed, FailureText)
	})

	t.Run("reject", func(t *testing.T) {
		wantState(t, sendTask(callCtx(t), t, c, sendText(Reject)), wire.TaskStateRejected, RejectionText)
	})

	t.Run("bad-argument", func(t *testing.T) {
		task := sendTask(callCtx(t), t, c, sendText("artifacts:none"))
		wantState(t, task, wire.TaskStateFailed, `artifacts:N needs N >= 1, got "none"`)
	})

	t.Run("data-command", func(t *testing.T) {
		req := &wire.SendMessageRequest{Message: userMessage(wire.NewDataPart(map[string]any{"command": "complete"}))}
		wantArtifacts(t, sendTask(callCtx(t), t, c, req), "result: "+CompletedText)
	})

	t.Run("cancel-races-complete", func(t *testing.T) {
		ctx := callCtx(t)
		task := startTask(ctx, t, c, CancelRacesComplete)
		if _, err := c.CancelTask(ctx, &wire.CancelTaskRequest{ID: task.ID}); !errors.Is(err, wire.ErrTaskNotCancelable) {
			t.Fatalf("CancelTask: %v, want TaskNotCancelable", err)
		}
		got, err := c.GetTask(ctx, &wire.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		wantState(t, got, wire.TaskStateCompleted, "")
		wantArtifacts(t, got, "result: "+CompletedText)
	})

	t.Run("auth-required", func(t *testing.T) {
		ctx := callCtx(t)
		task := sendTask(ctx, t, c, sendText(AuthRequired))
		wantState(t, task, wire.TaskStateAuthRequired, AuthText)
		cancelled, err := c.CancelTask(ctx, &wire.CancelTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatalf("CancelTask: %v", err)
		}
		wantState(t, cancelled, wire.TaskStateCanceled, "")
	})

	t.Run("auth-required-elapses", func(t *testing.T) {
		ctx := callCtx(t)
		var lines []string
		for e, err := range c.SendStreamingMessage(ctx, sendText("auth-required:20ms")) {
			if err != nil {
				t.Fatalf("stream: %v (after %q)", err, lines)
			}
			lines = append(lines, eventLine(e))
		}
		want := []string{
			"task TASK_STATE_SUBMITTED",
			"status TASK_STATE_AUTH_REQUIRED",
			"artifact result append=false last=true " + CompletedText,
			"status TASK_STATE_COMPLETED",
		}
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Fatalf("stream (-want +got):\n%s", diff)
		}
	})
}

// post sends body as a JSON-RPC request with A2A-Version 1.0 to url and
// returns the response with its body read.
func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	return postVersion(t, url, "1.0", body)
}

// postVersion is post with the given A2A-Version ("" sends none).
func postVersion(t *testing.T, url, version, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(callCtx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	return do(t, req)
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(callCtx(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read %s: %v", req.URL, err)
	}
	return res, strings.TrimSpace(string(b))
}
