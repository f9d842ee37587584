package a2a

import (
	"slices"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

func coreIntPtr(n int) *int { return &n }

func TestCoreGetTask(t *testing.T) {
	env := newCoreEnv(t)
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "approve"))
	env.send(t, c, acceptReply("m-2", first.ID, "accept"))

	cases := []struct {
		name    string
		history *int
		want    []string // message ids
	}{
		{"all", nil, []string{"m-1", "m-2"}},
		{"none", coreIntPtr(0), nil},
		{"last one", coreIntPtr(1), []string{"m-2"}},
		{"more than there are", coreIntPtr(10), []string{"m-1", "m-2"}},
	}
	for _, tc := range cases {
		task, err := env.srv.getTask(coreCtx(t), c, &wire.GetTaskRequest{ID: first.ID, HistoryLength: tc.history})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range task.History {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: history %v, want %v", tc.name, got, tc.want)
		}
		if task.ID != first.ID || task.ContextID != first.ContextID || task.Status.State != wire.TaskStateCompleted {
			t.Errorf("%s: task %s/%s %s", tc.name, task.ID, task.ContextID, task.Status.State)
		}
	}
	// historyLength truncates the response only.
	if n := len(env.run(t, c.subject, first.ID).Messages); n != 2 {
		t.Fatalf("run holds %d messages after truncated reads", n)
	}
	_, err := env.srv.getTask(coreCtx(t), c, &wire.GetTaskRequest{ID: first.ID, HistoryLength: coreIntPtr(-1)})
	wantError(t, err, -32602, "historyLength")
}

func TestCoreGetTaskStateFollowsTheRun(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureCancellable), withBlock(time.Millisecond))
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "go"))
	for _, want := range []struct {
		cancel bool
		state  wire.TaskState
	}{{false, wire.TaskStateWorking}, {true, wire.TaskStateCanceled}} {
		if want.cancel {
			if _, err := env.srv.cancelTask(coreCtx(t), c, &wire.CancelTaskRequest{ID: first.ID}); err != nil {
				t.Fatal(err)
			}
			env.awaitStatus(t, c.subject, string(first.ID), interop.StatusCancelled)
		}
		task, err := env.srv.getTask(coreCtx(t), c, &wire.GetTaskRequest{ID: first.ID})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State != want.state {
			t.Fatalf("state = %s, want %s", task.Status.State, want.state)
		}
	}
}

func TestCoreCancelTask(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureCancellable), withBlock(time.Millisecond))
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "go"))
	task, err := env.srv.cancelTask(coreCtx(t), c, &wire.CancelTaskRequest{ID: first.ID})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != wire.TaskStateWorking && task.Status.State != wire.TaskStateCanceled {
		t.Fatalf("cancel answered %s", task.Status.State)
	}
	run := env.run(t, c.subject, first.ID)
	if run.CancelReason != cancelReason {
		t.Fatalf("cancel reason = %q", run.CancelReason)
	}
	env.awaitStatus(t, c.subject, string(first.ID), interop.StatusCancelled)
	before := env.run(t, c.subject, first.ID)
	_, err = env.srv.cancelTask(coreCtx(t), c, &wire.CancelTaskRequest{ID: first.ID})
	wantRowError(t, env, err, -32002)
	assertRunUnchanged(t, env, c.subject, before)

	_, err = env.srv.cancelTask(coreCtx(t), c, &wire.CancelTaskRequest{ID: "acme/fabricatedfabricated0001"})
	wantRowError(t, env, err, -32001)
}

func TestCoreCancelTaskWithdrawsTheInterrupt(t *testing.T) {
	env := newCoreEnv(t)
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "approve"))
	got, err := env.srv.cancelTask(coreCtx(t), c, &wire.CancelTaskRequest{ID: first.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != wire.TaskStateWorking && got.Status.State != wire.TaskStateCanceled {
		t.Fatalf("cancel answered %s", got.Status.State)
	}
	if got.Metadata != nil {
		t.Fatalf("a cancelled approval still shows its interrupt: %v", got.Metadata)
	}
	env.awaitStatus(t, c.subject, string(first.ID), interop.StatusCancelled)
	// The withdrawn interrupt cannot be answered any more.
	_, err = env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: acceptReply("m-2", first.ID, "accept")})
	wantRowError(t, env, err, -32004)
}

func TestCoreIsolation(t *testing.T) {
	env := newCoreEnv(t, withCaps(caps{Streaming: true, DurableTasks: true}))
	alice := asCaller(coreTenantA, "alice")
	gina := asCaller(coreTenantB, "gina")
	theirs := env.send(t, alice, textMessage("m-1", "approve"))
	before := env.run(t, alice.subject, theirs.ID)

	unknown := wire.TaskID("globex/fabricatedfabricated0001")
	_, want := env.srv.getTask(coreCtx(t), gina, &wire.GetTaskRequest{ID: unknown})
	wantRowError(t, env, want, -32001)

	for _, id := range []wire.TaskID{theirs.ID, unknown} {
		_, err := env.srv.getTask(coreCtx(t), gina, &wire.GetTaskRequest{ID: id})
		sameCoreError(t, "GetTask", err, want)
		_, err = env.srv.cancelTask(coreCtx(t), gina, &wire.CancelTaskRequest{ID: id})
		sameCoreError(t, "CancelTask", err, want)
		_, err = env.srv.sendMessage(coreCtx(t), gina, &wire.SendMessageRequest{Message: acceptReply("m-x", id, "accept")})
		sameCoreError(t, "SendMessage", err, want)
		_, err = opened(env.srv.sendStreamingMessage(coreCtx(t), gina, &wire.SendMessageRequest{Message: acceptReply("m-y", id, "accept")}))
		sameCoreError(t, "SendStreamingMessage", err, want)
		_, err = opened(env.srv.subscribeToTask(coreCtx(t), gina, &wire.SubscribeToTaskRequest{ID: id}))
		sameCoreError(t, "SubscribeToTask", err, want)
	}
	assertRunUnchanged(t, env, alice.subject, before)

	// Globex's own task is listed; acme's never, also with its contextId.
	own := env.send(t, gina, textMessage("m-2", "approve"))
	for _, req := range []*wire.ListTasksRequest{{}, {ContextID: theirs.ContextID}, {Tenant: coreTenantA, ContextID: theirs.ContextID}, {Status: wire.TaskStateInputRequired}} {
		list, err := env.srv.listTasks(coreCtx(t), gina, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range list.Tasks {
			if task.ID == theirs.ID {
				t.Fatalf("globex listed acme's task with %+v", req)
			}
		}
		if req.ContextID == "" && (len(list.Tasks) != 1 || list.Tasks[0].ID != own.ID || list.TotalSize != 1) {
			t.Fatalf("globex's own list = %d tasks, total %d", len(list.Tasks), list.TotalSize)
		}
		if req.ContextID != "" && (list.Tasks == nil || len(list.Tasks) != 0 || list.TotalSize != 0) {
			t.Fatalf("acme's contextId listed %v (total %d) for globex", list.Tasks, list.TotalSize)
		}
	}
}

func TestCoreListTasksPaging(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureNoop))
	c := asCaller(coreTenantA, "alice")
	var created []wire.TaskID
	for i := range 5 {
		m := textMessage("m-"+string(rune('a'+i)), "go")
		m.ContextID = "ctx-paging"
		created = append(created, env.send(t, c, m).ID)
	}
	var seen []wire.TaskID
	token := ""
	for page := 0; ; page++ {
		list, err := env.srv.listTasks(coreCtx(t), c, &wire.ListTasksRequest{PageSize: 2, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if list.PageSize != 2 || list.TotalSize != 5 {
			t.Fatalf("page %d: pageSize %d totalSize %d", page, list.PageSize, list.TotalSize)
		}
		for _, task := range list.Tasks {
			seen = append(seen, task.ID)
			if task.Artifacts != nil {
				t.Fatalf("artifacts listed without includeArtifacts")
			}
			if len(task.History) != 1 {
				t.Fatalf("history of a listed task = %d messages", len(task.History))
			}
		}
		if wantLen := min(2, 5-2*page); len(list.Tasks) != wantLen {
			t.Fatalf("page %d has %d tasks, want %d", page, len(list.Tasks), wantLen)
		}
		if token = list.NextPageToken; token == "" {
			break
		}
	}
	// Newest status timestamp first.
	want := slices.Clone(created)
	slices.Reverse(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("paged %v, want newest first %v", seen, want)
	}

	list, err := env.srv.listTasks(coreCtx(t), c, &wire.ListTasksRequest{IncludeArtifacts: true, HistoryLength: coreIntPtr(0)})
	if err != nil {
		t.Fatal(err)
	}
	if list.PageSize != defaultPageSize || list.NextPageToken != "" || len(list.Tasks) != 5 {
		t.Fatalf("default page: size %d token %q tasks %d", list.PageSize, list.NextPageToken, len(list.Tasks))
	}
	for _, task := range list.Tasks {
		if len(task.Artifacts) != 1 || task.History != nil {
			t.Fatalf("includeArtifacts/historyLength 0: artifacts %d history %d", len(task.Artifacts), len(task.History))
		}
	}
}

func TestCoreListTasksFilters(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureNoop, memstore.FixtureApproval, memstore.FixtureCancellable, probeCredential, probeCredBare), withBlock(time.Millisecond))
	c := asCaller(coreTenantA, "alice")
	start := func(id, skill, contextID string) wire.TaskID {
		m := textMessage(id, "go")
		m.Metadata = map[string]any{"skillId": skill}
		m.ContextID = contextID
		task := env.send(t, c, m)
		return task.ID
	}
	noop := start("m-noop", memstore.FixtureNoop, "ctx-one")
	approval := start("m-appr", memstore.FixtureApproval, "ctx-one")
	working := start("m-work", memstore.FixtureCancellable, "ctx-two")
	cred := start("m-cred", probeCredential, "ctx-two")
	bare := start("m-bare", probeCredBare, "ctx-two")
	env.awaitStatus(t, c.subject, string(approval), interop.StatusWaitingApproval)
	env.awaitStatus(t, c.subject, string(cred), interop.StatusWaitingInput)
	env.awaitStatus(t, c.subject, string(bare), interop.StatusWaitingInput)
	later := env.run(t, c.subject, cred).StatusAt

	cases := []struct {
		name string
		req  wire.ListTasksRequest
		want []wire.TaskID // any order
	}{
		{"contextId", wire.ListTasksRequest{ContextID: "ctx-one"}, []wire.TaskID{noop, approval}},
		{"completed", wire.ListTasksRequest{Status: wire.TaskStateCompleted}, []wire.TaskID{noop}},
		{"working", wire.ListTasksRequest{Status: wire.TaskStateWorking}, []wire.TaskID{working}},
		{"input required excludes the credential override", wire.ListTasksRequest{Status: wire.TaskStateInputRequired}, []wire.TaskID{approval, bare}},
		{"auth required", wire.ListTasksRequest{Status: wire.TaskStateAuthRequired}, []wire.TaskID{cred}},
		{"auth required in another context", wire.ListTasksRequest{Status: wire.TaskStateAuthRequired, ContextID: "ctx-one"}, nil},
		{"canceled", wire.ListTasksRequest{Status: wire.TaskStateCanceled}, nil},
		{"statusTimestampAfter", wire.ListTasksRequest{StatusTimestampAfter: &later}, nil /* filled below */},
	}
	for _, tc := range cases {
		list, err := env.srv.listTasks(coreCtx(t), c, &tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []wire.TaskID
		for _, task := range list.Tasks {
			got = append(got, task.ID)
			if tc.req.Status != "" && task.Status.State != tc.req.Status {
				t.Errorf("%s: listed a %s task", tc.name, task.Status.State)
			}
			if tc.req.StatusTimestampAfter != nil && task.Status.Timestamp.Before(later) {
				t.Errorf("%s: listed a task stamped %v before %v", tc.name, task.Status.Timestamp, later)
			}
		}
		if tc.req.StatusTimestampAfter != nil {
			if !slices.Contains(got, cred) || slices.Contains(got, noop) && env.run(t, c.subject, noop).StatusAt.Before(later) {
				t.Errorf("%s: %v", tc.name, got)
			}
			continue
		}
		if !sameTaskIDs(got, tc.want) || list.TotalSize != len(tc.want) || list.Tasks == nil {
			t.Errorf("%s: listed %v (total %d), want %v", tc.name, got, list.TotalSize, tc.want)
		}
	}
}

func sameTaskIDs(a, b []wire.TaskID) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestCoreListTasksProjectedFilterPages(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureApproval, probeCredential))
	c := asCaller(coreTenantA, "alice")
	var creds []wire.TaskID
	for i := range 7 {
		skill := probeCredential
		if i%2 == 1 {
			skill = memstore.FixtureApproval
		}
		m := textMessage("m-"+string(rune('a'+i)), "go")
		m.Metadata = map[string]any{"skillId": skill}
		task := env.send(t, c, m)
		if skill == probeCredential {
			creds = append(creds, task.ID)
		}
	}
	var seen []wire.TaskID
	token := ""
	for pages := 0; ; pages++ {
		list, err := env.srv.listTasks(coreCtx(t), c, &wire.ListTasksRequest{Status: wire.TaskStateAuthRequired, PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if list.TotalSize != len(creds) || len(list.Tasks) > 3 {
			t.Fatalf("page %d: %d tasks, total %d, want total %d", pages, len(list.Tasks), list.TotalSize, len(creds))
		}
		for _, task := range list.Tasks {
			seen = append(seen, task.ID)
		}
		if pages == 0 && len(list.Tasks) != 3 {
			t.Fatalf("first page has %d tasks, want a full page of 3", len(list.Tasks))
		}
		if token = list.NextPageToken; token == "" {
			break
		}
		if pages > 3 {
			t.Fatal("paging does not end")
		}
	}
	if !sameTaskIDs(seen, creds) || len(seen) != len(creds) {
		t.Fatalf("paged %v, want %v", seen, creds)
	}
}

func TestCoreListTasksValidation(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureNoop))
	c := asCaller(coreTenantA, "alice")
	for i := range 3 {
		env.send(t, c, textMessage("m-"+string(rune('a'+i)), "go"))
	}
	first, err := env.srv.listTasks(coreCtx(t), c, &wire.ListTasksRequest{PageSize: 1})
	if err != nil || first.NextPageToken == "" {
		t.Fatalf("first page: %v, token %q", err, first.NextPageToken)
	}
	tampered := []byte(first.NextPageToken)
	tampered[len(tampered)/2] ^= 1
	cases := []struct {
		name  string
		req   wire.ListTasksRequest
		field string
	}{
		{"pageSize 101", wire.ListTasksRequest{PageSize: 101}, "pageSize"},
		{"negative pageSize", wire.ListTasksRequest{PageSize: -1}, "pageSize"},
		{"negative historyLength", wire.ListTasksRequest{HistoryLength: coreIntPtr(-1)}, "historyLength"},
		{"rejected is never reported", wire.ListTasksRequest{Status: wire.TaskStateRejected}, "status"},
		{"unknown state", wire.ListTasksRequest{Status: "TASK_STATE_BOGUS"}, "status"},
		{"tampered token", wire.ListTasksRequest{PageSize: 1, PageToken: string(tampered)}, "pageToken"},
		{"token of another query", wire.ListTasksRequest{PageSize: 1, PageToken: first.NextPageToken, ContextID: "other"}, "pageToken"},
	}
	for _, tc := range cases {
		_, err := env.srv.listTasks(coreCtx(t), c, &tc.req)
		wantError(t, err, -32602, tc.field)
	}
	// The edges of the range are served.
	for _, size := range []int{1, 100} {
		list, err := env.srv.listTasks(coreCtx(t), c, &wire.ListTasksRequest{PageSize: size})
		if err != nil || list.PageSize != size {
			t.Fatalf("pageSize %d: %v %+v", size, err, list)
		}
	}
	// Globex has no tasks: an empty array, not null, and an empty token.
	empty, err := env.srv.listTasks(coreCtx(t), asCaller(coreTenantB, "gina"), &wire.ListTasksRequest{})
	if err != nil || empty.Tasks == nil || len(empty.Tasks) != 0 || empty.NextPageToken != "" || empty.TotalSize != 0 {
		t.Fatalf("empty list = %+v, %v", empty, err)
	}
}
