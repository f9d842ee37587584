package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// sendBatch is a batch of n SendMessage requests (ids 1…n) of skill.
func sendBatch(n int, prefix, skill string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(rpcBody(i+1, methodSendMessage, hardSend(prefix+strconv.Itoa(i), skill)))
	}
	b.WriteByte(']')
	return b.String()
}

// TestBatchOverTheCapRunsNothing: a batch of 5,000 SendMessage requests
// (over 900 KiB) is refused whole before any of it runs — -32600 with the
// cap in ErrorInfo metadata, id null — and creates no run; a batch of
// exactly MaxBatch requests is answered, in order.
func TestBatchOverTheCapRunsNothing(t *testing.T) {
	e := newHardEnv(t)
	hs := e.serve(t, nil, nil, nil)
	big := sendBatch(5000, "m-flood-", memstore.FixtureNoop)
	if len(big) < 900<<10 {
		t.Fatalf("the batch is only %d bytes", len(big))
	}
	res := hardCall{path: rpcPath, key: "key-acme", body: big}.do(t, hs)
	if len(res.body) > 4<<10 {
		t.Fatalf("HTTP %d with a %d-byte answer: the batch ran; %d runs", res.status, len(res.body), e.runsOf(t, "key-acme"))
	}
	out := wantRPCError(t, res.rpc(t), http.StatusOK, codeInvalidRequest, "INVALID_REQUEST")
	if string(out.ID) != "null" {
		t.Fatalf("id %s", out.ID)
	}
	rpcGolden(t, "batch_over_the_cap", res.transcript(fmt.Sprintf("POST %s (Authorization: Bearer key-acme)\n[5,000 SendMessage requests, %d bytes]", rpcPath, len(big))))
	if n := e.runsOf(t, "key-acme"); n != 0 {
		t.Fatalf("a refused batch created %d runs", n)
	}

	res = hardCall{path: rpcPath, key: "key-acme", body: sendBatch(defaultMaxBatch, "m-cap-", memstore.FixtureNoop)}.do(t, hs)
	var answers []rpcResponse
	if res.err != nil || res.status != http.StatusOK || json.Unmarshal(res.body, &answers) != nil {
		t.Fatalf("HTTP %d (%v): %s", res.status, res.err, res.body)
	}
	if len(answers) != defaultMaxBatch {
		t.Fatalf("%d answers, want %d", len(answers), defaultMaxBatch)
	}
	for i, a := range answers {
		if string(a.ID) != strconv.Itoa(i+1) || a.Error != nil {
			t.Fatalf("answer %d: id %s error %+v", i, a.ID, a.Error)
		}
	}
	if n := e.runsOf(t, "key-acme"); n != defaultMaxBatch {
		t.Fatalf("%d runs, want %d", n, defaultMaxBatch)
	}
}

// concurrencyStore tracks the GetRun calls in flight, each of which
// takes a while.
type concurrencyStore struct {
	interop.RunStore
	mu           sync.Mutex
	now, highest int
}

func (c *concurrencyStore) GetRun(ctx context.Context, sub interop.Subject, id string) (interop.Run, error) {
	c.mu.Lock()
	c.now++
	c.highest = max(c.highest, c.now)
	c.mu.Unlock()
	time.Sleep(30 * time.Millisecond)
	c.mu.Lock()
	c.now--
	c.mu.Unlock()
	return c.RunStore.GetRun(ctx, sub, id)
}

// TestBatchRunsWithBoundedConcurrency: a batch's requests run
// BatchConcurrency at a time, never more.
func TestBatchRunsWithBoundedConcurrency(t *testing.T) {
	var store *concurrencyStore
	e := newHardEnv(t, func(c *testConfig) {
		store = &concurrencyStore{RunStore: c.Store}
		c.Store = store
		c.BatchConcurrency = 3
	})
	hs := e.serve(t, nil, nil, nil)
	task := e.rpcSend(t, hs, "m-seed", memstore.FixtureNoop)
	var b strings.Builder
	b.WriteByte('[')
	for i := range 12 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(rpcBody(i, methodGetTask, map[string]any{"id": string(task.ID)}))
	}
	b.WriteByte(']')
	res := hardCall{path: rpcPath, key: "key-acme", body: b.String()}.do(t, hs)
	var answers []rpcResponse
	if json.Unmarshal(res.body, &answers) != nil || len(answers) != 12 {
		t.Fatalf("HTTP %d: %s", res.status, res.body)
	}
	for i, a := range answers {
		if string(a.ID) != strconv.Itoa(i) || a.Error != nil {
			t.Fatalf("answer %d out of order or failed: %s", i, res.body)
		}
	}
	if store.highest != 3 {
		t.Fatalf("at most %d requests ran at once, want 3", store.highest)
	}
}

// TestBatchWaitsUnderOneDeadline: the blocking SendMessages of a batch
// share one deadline, BlockTimeout after the batch began, so a batch of
// them takes about one BlockTimeout, not one per request; each answers its
// task as it stands then.
func TestBatchWaitsUnderOneDeadline(t *testing.T) {
	const block = 400 * time.Millisecond
	e := newHardEnv(t, func(c *testConfig) { c.BlockTimeout, c.BatchConcurrency = block, 1 })
	hs := e.serve(t, nil, nil, nil)
	start := time.Now()
	res := hardCall{path: rpcPath, key: "key-acme", body: sendBatch(4, "m-held-", probeHold)}.do(t, hs)
	took := time.Since(start)
	var answers []rpcResponse
	if json.Unmarshal(res.body, &answers) != nil || len(answers) != 4 {
		t.Fatalf("HTTP %d: %s", res.status, res.body)
	}
	for _, a := range answers {
		var r struct {
			Task wire.Task `json:"task"`
		}
		if a.Error != nil || json.Unmarshal(a.Result, &r) != nil || r.Task.Status.State != wire.TaskStateWorking {
			t.Fatalf("answer %s: %s", a.ID, res.body)
		}
	}
	if took >= 3*block {
		t.Fatalf("4 blocking requests took %v with BlockTimeout %v: each waited on its own", took, block)
	}
}

// TestNotificationsChangeNothing: a notification is never executed, alone
// or in a batch — SendMessage creates no run, CancelTask cancels nothing,
// a push config is neither created nor deleted — and gets no response.
func TestNotificationsChangeNothing(t *testing.T) {
	rc := newPushReceiver(t)
	e := newRPCEnv(t, withPush(t, newPushSetup(), rc.srv.URL))
	startPush(t, e)
	task := rpcTask(t, e.do(t, acme(rpcBody(1, methodSendMessage, map[string]any{"message": rpcMessage("m-open", memstore.FixtureApproval, "x")}))), true)
	created := e.do(t, acme(rpcBody(2, methodCreatePushConfig, map[string]any{"taskId": string(task.ID), "id": "keep", "url": rc.srv.URL + "/keep"})))
	if created.status != http.StatusOK || strings.Contains(string(created.body), `"error"`) {
		t.Fatalf("CreateTaskPushNotificationConfig: %s", created.body)
	}
	before := e.do(t, acme(rpcBody(3, methodListTasks, nil))).body
	configs := func() string {
		return string(e.do(t, acme(rpcBody(4, methodListPushConfigs, map[string]any{"taskId": string(task.ID)}))).body)
	}
	configsBefore := configs()

	notes := []string{
		rpcBody(nil, methodSendMessage, map[string]any{"message": rpcMessage("m-note", memstore.FixtureNoop, "x")}),
		rpcBody(nil, methodSendMessage, map[string]any{"message": acceptMessage("m-note-accept", string(task.ID))}),
		rpcBody(nil, methodCancelTask, map[string]any{"id": string(task.ID)}),
		rpcBody(nil, methodCreatePushConfig, map[string]any{"taskId": string(task.ID), "id": "added", "url": rc.srv.URL + "/added"}),
		rpcBody(nil, methodDeletePushConfig, map[string]any{"taskId": string(task.ID), "id": "keep"}),
	}
	for _, n := range notes {
		if res := e.do(t, acme(n)); res.status != http.StatusNoContent || len(res.body) != 0 {
			t.Fatalf("notification %s: HTTP %d %s", n, res.status, res.body)
		}
	}
	if res := e.do(t, acme("["+strings.Join(notes, ",")+"]")); res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Fatalf("batch of notifications: HTTP %d %s", res.status, res.body)
	}
	// Mixed with a request, only the request is answered.
	mixed := e.do(t, acme("["+notes[0]+","+rpcBody(5, methodGetTask, map[string]any{"id": string(task.ID)})+"]"))
	var answers []rpcResponse
	if json.Unmarshal(mixed.body, &answers) != nil || len(answers) != 1 || string(answers[0].ID) != "5" {
		t.Fatalf("mixed batch: %s", mixed.body)
	}

	if after := e.do(t, acme(rpcBody(3, methodListTasks, nil))).body; string(after) != string(before) {
		t.Fatalf("notifications changed the tasks:\nbefore %s\nafter  %s", before, after)
	}
	if got := configs(); got != configsBefore {
		t.Fatalf("notifications changed the push configs:\nbefore %s\nafter  %s", configsBefore, got)
	}
}
