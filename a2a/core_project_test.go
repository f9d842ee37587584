package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mapping"
)

var projectAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// projectServer is a Server with just what projection needs.
func projectServer(t testing.TB) *Server {
	t.Helper()
	m := (*interopmap.Map)(mapping.Builtin())
	errs, err := newErrorTable(m)
	if err != nil {
		t.Fatal(err)
	}
	return &Server{m: m, errs: errs}
}

// smallRun is a completed run with one exchanged message and one artifact.
func smallRun() interop.Run {
	return interop.Run{
		ID: "acme/run0000000000000001", Tenant: "acme", Principal: "alice", WorkflowID: "wf",
		Status: interop.StatusCompleted, StatusAt: projectAt, CreatedAt: projectAt,
		Transport: interop.TransportA2A, ContextID: "ctx-1",
		Messages:  []interop.Message{{ID: "m-1", Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("hello")}}},
		Artifacts: []interop.Artifact{{ID: "result", Name: "result", Parts: []interop.Part{interop.TextPart("done")}}},
		Output:    json.RawMessage(`{"ok":true}`), LastSequence: 3,
	}
}

func approvalInterrupt() interop.Interrupt {
	return interop.Interrupt{ID: "acme/intr000000000000001", Kind: interop.InterruptApproval, Key: "approval",
		Message: "Approve the request?", Actions: []string{"accept", "reject"}}
}

func credentialInterrupt(cd *interop.CredentialData, data string) interop.Interrupt {
	return interop.Interrupt{ID: "acme/intr000000000000002", Kind: interop.InterruptCredential, Key: "cred",
		Message: "Connect your account", Credential: cd, Data: json.RawMessage(data)}
}

func TestProjectAllStatuses(t *testing.T) {
	s := projectServer(t)
	full := &interop.CredentialData{Provider: "github", Scopes: []string{"repo"}, Reason: "missing", ConnectURL: coreCredentialURL}
	authText := "Authorization required: connect your github account at " + coreCredentialURL
	cases := []struct {
		name      string
		status    interop.RunStatus
		interrupt *interop.Interrupt
		failure   string
		state     wire.TaskState
		kind      string // metadata.openwop.interrupt.kind, "" = no metadata
		text      string // status message, "" = none
	}{
		{"pending", interop.StatusPending, nil, "", wire.TaskStateSubmitted, "", ""},
		{"running", interop.StatusRunning, nil, "", wire.TaskStateWorking, "", ""},
		{"paused", interop.StatusPaused, nil, "", wire.TaskStateWorking, "", ""},
		{"waiting-approval", interop.StatusWaitingApproval, corePtr(approvalInterrupt()), "", wire.TaskStateInputRequired, "approval", "Approve the request?"},
		{"waiting-input clarification", interop.StatusWaitingInput, &interop.Interrupt{ID: "acme/intr000000000000003", Kind: interop.InterruptClarification, Message: "Which one?"}, "", wire.TaskStateInputRequired, "clarification", "Which one?"},
		{"waiting-input credential", interop.StatusWaitingInput, corePtr(credentialInterrupt(full, "")), "", wire.TaskStateAuthRequired, "credential", authText},
		{"waiting-input credential in Data", interop.StatusWaitingInput, corePtr(credentialInterrupt(nil, `{"provider":"github","scopes":["repo"],"reason":"missing","connectUrl":"`+coreCredentialURL+`"}`)), "", wire.TaskStateAuthRequired, "credential", authText},
		{"waiting-input credential without connectUrl", interop.StatusWaitingInput, corePtr(credentialInterrupt(&interop.CredentialData{Provider: "github"}, "")), "", wire.TaskStateInputRequired, "credential", "Connect your account"},
		{"waiting-input credential with broken Data", interop.StatusWaitingInput, corePtr(credentialInterrupt(nil, `{"provider":`)), "", wire.TaskStateInputRequired, "credential", "Connect your account"},
		{"waiting-external", interop.StatusWaitingExternal, &interop.Interrupt{ID: "acme/intr000000000000004", Kind: interop.InterruptExternalEvent}, "", wire.TaskStateInputRequired, "external-event", ""},
		{"completed", interop.StatusCompleted, nil, "", wire.TaskStateCompleted, "", ""},
		{"failed", interop.StatusFailed, nil, "workflow failed", wire.TaskStateFailed, "", "workflow failed"},
		{"failed without message", interop.StatusFailed, nil, "", wire.TaskStateFailed, "", ""},
		{"cancelling", interop.StatusCancelling, nil, "", wire.TaskStateWorking, "", ""},
		{"cancelled", interop.StatusCancelled, nil, "", wire.TaskStateCanceled, "", ""},
		{"running with a stale interrupt", interop.StatusRunning, corePtr(approvalInterrupt()), "", wire.TaskStateWorking, "", ""},
	}
	seen := map[interop.RunStatus]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := smallRun()
			run.Status, run.FailureMessage = tc.status, tc.failure
			if tc.interrupt != nil {
				run.Interrupts = []interop.Interrupt{*tc.interrupt}
			}
			task, err := s.project(&run, taskView{artifacts: true})
			if err != nil {
				t.Fatal(err)
			}
			seen[tc.status] = true
			if task.Status.State != tc.state {
				t.Fatalf("state = %s, want %s", task.Status.State, tc.state)
			}
			if task.Status.Timestamp == nil || !task.Status.Timestamp.Equal(projectAt) || task.Status.Timestamp.Location() != time.UTC {
				t.Fatalf("timestamp = %v", task.Status.Timestamp)
			}
			meta := interruptMeta(t, task.Metadata)
			if tc.kind == "" && task.Metadata != nil {
				t.Fatalf("metadata = %v, want none", task.Metadata)
			}
			if tc.kind != "" {
				if meta["kind"] != tc.kind || meta["id"] != tc.interrupt.ID {
					t.Fatalf("metadata.openwop.interrupt = %v", meta)
				}
				wantActions := tc.kind == "approval"
				if _, has := meta["actions"]; has != wantActions {
					t.Fatalf("actions present = %v, want %v", has, wantActions)
				}
				if len(task.Metadata) != 1 {
					t.Fatalf("metadata has members %v besides openwop", task.Metadata)
				}
			}
			if got := statusText(task); got != tc.text {
				t.Fatalf("status message = %q, want %q", got, tc.text)
			}
			if msg := task.Status.Message; msg != nil {
				if msg.Role != wire.MessageRoleAgent || msg.ID == "" || msg.TaskID != task.ID || msg.ContextID != task.ContextID {
					t.Fatalf("status message = %+v", msg)
				}
			}
		})
	}
	for _, st := range interop.AllStatuses() {
		if !seen[st] {
			t.Errorf("status %s not covered", st)
		}
	}

	run := smallRun()
	run.Status = "sleeping"
	if _, err := s.project(&run, taskView{}); !errors.Is(err, errUnknownStatus) {
		t.Fatalf("unknown status: %v", err)
	}
}

func corePtr[T any](v T) *T { return &v }

func TestProjectCredentialOverrideNamesProviderAndConnectURL(t *testing.T) {
	s := projectServer(t)
	run := smallRun()
	run.Status = interop.StatusWaitingInput
	run.Interrupts = []interop.Interrupt{credentialInterrupt(&interop.CredentialData{Provider: "slack", ConnectURL: "https://host.example/connect/slack"}, "")}
	task, err := s.project(&run, taskView{})
	if err != nil {
		t.Fatal(err)
	}
	text := statusText(task)
	if task.Status.State != wire.TaskStateAuthRequired || !strings.Contains(text, "slack") || !strings.Contains(text, "https://host.example/connect/slack") {
		t.Fatalf("AUTH_REQUIRED status %s %q", task.Status.State, text)
	}
}

func TestProjectHistoryAndArtifacts(t *testing.T) {
	s := projectServer(t)
	run := smallRun()
	run.Messages = append(run.Messages,
		interop.Message{ID: "m-2", Role: interop.RoleAgent, Parts: []interop.Part{interop.TextPart("a"), interop.TextPart("b")}},
		interop.Message{ID: "m-3", Role: "system", Parts: nil},
	)
	cases := []struct {
		view    taskView
		history []string
		arts    int
	}{
		{taskView{artifacts: true}, []string{"m-1", "m-2", "m-3"}, 1},
		{taskView{history: coreIntPtr(2)}, []string{"m-2", "m-3"}, 0},
		{taskView{history: coreIntPtr(0), artifacts: true}, nil, 1},
	}
	for _, tc := range cases {
		task, err := s.project(&run, tc.view)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range task.History {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != strings.Join(tc.history, ",") || len(task.Artifacts) != tc.arts {
			t.Errorf("%+v: history %v artifacts %d", tc.view, ids, len(task.Artifacts))
		}
	}
	task, _ := s.project(&run, taskView{})
	roles := []wire.MessageRole{task.History[0].Role, task.History[1].Role, task.History[2].Role}
	if roles[0] != wire.MessageRoleUser || roles[1] != wire.MessageRoleAgent || roles[2] != wire.MessageRoleUnspecified {
		t.Fatalf("roles = %v", roles)
	}
	if task.History[1].Parts[1].Text() != "b" || task.History[2].Parts == nil {
		t.Fatalf("parts = %+v / %+v", task.History[1].Parts, task.History[2].Parts)
	}
}

func TestProjectPartsBothWays(t *testing.T) {
	meta := map[string]any{"k": "v"}
	in := &wire.Message{ID: "m", Role: wire.MessageRoleAgent, Parts: wire.ContentParts{
		{Content: wire.Text("hello"), MediaType: "text/plain", Metadata: meta},
		{Content: wire.Raw([]byte{0, 1, 2}), Filename: "blob.bin", MediaType: "application/octet-stream"},
		{Content: wire.URL("https://files.example/x.pdf"), Filename: "x.pdf"},
		wire.NewDataPart(map[string]any{"b": 2, "a": 1}),
		{Content: wire.Data{Value: json.RawMessage(`[1,2]`)}},
	}}
	host, bad := hostMessage(in)
	if bad != -1 {
		t.Fatalf("part %d refused", bad)
	}
	if host.Role != interop.RoleAgent || host.ID != "m" {
		t.Fatalf("message = %+v", host)
	}
	wantKinds := []interop.PartKind{interop.PartText, interop.PartRaw, interop.PartURL, interop.PartData, interop.PartData}
	for i, p := range host.Parts {
		if p.Kind != wantKinds[i] {
			t.Fatalf("part %d kind %s, want %s", i, p.Kind, wantKinds[i])
		}
	}
	if string(host.Parts[3].Data) != `{"a":1,"b":2}` || string(host.Parts[4].Data) != `[1,2]` || host.Parts[0].Metadata["k"] != "v" || host.Parts[1].Filename != "blob.bin" {
		t.Fatalf("parts = %+v", host.Parts)
	}
	// And back: the wire JSON of each part equals what the client sent.
	buf := newParts(len(host.Parts))
	out, _ := buf.take(host.Parts)
	for i := range in.Parts {
		want, _ := json.Marshal(in.Parts[i])
		got, _ := json.Marshal(out[i])
		if !bytes.Equal(got, want) {
			t.Errorf("part %d: %s, want %s", i, got, want)
		}
	}

	for _, bad := range []*wire.Part{nil, {}, {Content: wire.URL("")}, {Content: wire.Data{Value: json.RawMessage(`{`)}}, {Content: wire.Data{Value: func() {}}}} {
		if _, err := hostPart(bad); !errors.Is(err, errBadPart) {
			t.Errorf("hostPart(%+v) = %v, want errBadPart", bad, err)
		}
	}
}

// TestProjectGolden pins the wire bytes of projected Tasks. Regenerate
// with -update.
func TestProjectGolden(t *testing.T) {
	s := projectServer(t)
	waiting := smallRun()
	waiting.Status = interop.StatusWaitingApproval
	waiting.Interrupts = []interop.Interrupt{approvalInterrupt()}
	waiting.Messages[0].Parts = append(waiting.Messages[0].Parts,
		interop.Part{Kind: interop.PartData, Data: json.RawMessage(`{"action":"accept"}`)},
		interop.Part{Kind: interop.PartURL, URL: "https://files.example/x.pdf", Filename: "x.pdf", MediaType: "application/pdf"},
		interop.Part{Kind: interop.PartRaw, Raw: []byte("raw"), Metadata: map[string]any{"note": "opaque"}},
	)
	auth := smallRun()
	auth.Status = interop.StatusWaitingInput
	auth.Artifacts = nil
	auth.Interrupts = []interop.Interrupt{credentialInterrupt(&interop.CredentialData{Provider: "github", ConnectURL: coreCredentialURL}, "")}
	failed := smallRun()
	failed.Status, failed.FailureMessage = interop.StatusFailed, "request rejected"

	for _, tc := range []struct {
		name string
		run  interop.Run
	}{{"task_input_required", waiting}, {"task_auth_required", auth}, {"task_failed", failed}} {
		task, err := s.project(&tc.run, taskView{artifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.MarshalIndent(task, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		golden.Check(t, "core/"+tc.name+".golden.json", got)
	}
}

func TestProjectAllocations(t *testing.T) {
	s := projectServer(t)
	small := smallRun()
	waiting := smallRun()
	waiting.Status = interop.StatusWaitingApproval
	waiting.Interrupts = []interop.Interrupt{approvalInterrupt()}
	for _, tc := range []struct {
		name string
		run  *interop.Run
	}{{"completed", &small}, {"waiting-approval", &waiting}} {
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := s.project(tc.run, taskView{artifacts: true}); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 25 {
			t.Errorf("projecting a small %s run costs %.0f allocs, want ≤ 25", tc.name, allocs)
		}
	}
}

func BenchmarkProjectSmallRun(b *testing.B) {
	s := projectServer(b)
	run := smallRun()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.project(&run, taskView{artifacts: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCoreGetTask(b *testing.B) {
	env := newCoreEnv(b, withRouted("conformance-noop"))
	c := asCaller(coreTenantA, "alice")
	task := env.send(b, c, textMessage("m-1", "go"))
	req := &wire.GetTaskRequest{ID: task.ID}
	ctx := coreCtx(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.srv.getTask(ctx, c, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCoreSendMessageNoop(b *testing.B) {
	env := newCoreEnv(b, withRouted("conformance-noop"))
	c := asCaller(coreTenantA, "alice")
	ctx := coreCtx(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		// A fresh messageId per call: a repeat would be an idempotent read.
		req := &wire.SendMessageRequest{Message: textMessage("m-"+strconv.Itoa(i), "go")}
		if _, err := env.srv.sendMessage(ctx, c, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestProjectSoloTaskAllocs: a task projected on its own with a message
// and the run's output (SendMessage's answer to a conformance-noop
// message) costs one allocation for the Task, the output artifact's part
// and its parts' contents, and is the same Task as ListTasks' projection
// of it; one too big for its inline storage projects the same as in a
// list.
func TestProjectSoloTaskAllocs(t *testing.T) {
	s := projectServer(t)
	run := smallRun()
	run.Artifacts = nil // the output is the artifact
	view := taskView{artifacts: true}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.project(&run, view); err != nil {
			t.Fatal(err)
		}
	})
	// The Task, the output's interop.Part, and the text part's and the
	// data part's contents (wire.Part.Content's interface values: a Text,
	// a Data and the json.RawMessage in it).
	if allocs > 5 {
		t.Errorf("%v allocations per projection, want at most 5", allocs)
	}

	big := smallRun()
	for i := range 3 {
		big.Messages = append(big.Messages, interop.Message{ID: "m-more-" + strconv.Itoa(i), Role: interop.RoleAgent, Parts: []interop.Part{interop.TextPart("a"), interop.TextPart("b")}})
	}
	big.Artifacts = append(big.Artifacts, big.Artifacts[0])
	for _, r := range []*interop.Run{&run, &big} {
		for _, v := range []taskView{view, {}, {history: new(int)}} {
			solo, err := s.project(r, v)
			if err != nil {
				t.Fatal(err)
			}
			var listed taskBox
			if err := s.projectInto(&listed, r, v, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&listed.task, solo); diff != "" {
				t.Errorf("a solo projection differs from a listed one (-listed +solo):\n%s", diff)
			}
		}
	}
}
