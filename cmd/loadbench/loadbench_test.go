package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/processcpu"
)

// TestMain lets the test binary be the bench's server processes too: the
// bench re-executes its own binary (os.Executable) for each server.
func TestMain(m *testing.M) {
	if name := os.Getenv(serveEnv); name != "" {
		os.Exit(serveMain(name, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestSmoke runs every scenario with tiny counts and requires every
// server that speaks it to have answered every request correctly (the
// checks validate each answer, not only its status), so the bench keeps
// working as the library changes.
func TestSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"-json", "-n", "40", "-c", "4", "-rounds", "2", "-list-size", "120", "-subscribers", "3"}
	if code := run(ctx, args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("-json output: %v\n%s", err, stdout.String())
	}
	want := map[string][]string{
		scGetTask:     {"ours", "a2ago", "bare"},
		scSendMessage: {"ours", "a2ago", "bare"},
		scListTasks:   {"ours", "a2ago", "bare"},
		scToolsList:   {"ours", "gosdk", "bare"},
		scToolsCall:   {"ours", "gosdk", "bare"},
		scFanout:      {"ours", "a2ago", "bare"},
		scPush:        {"ours", "a2ago"},
	}
	got := map[string][]string{}
	for _, r := range rep.Rows {
		got[r.Scenario] = append(got[r.Scenario], r.Server)
		if r.Errors != 0 || r.N == 0 || r.PerSec <= 0 || r.CPU <= 0 {
			t.Errorf("%s/%s: n=%d errors=%d (%s) rate=%.0f cpu=%v", r.Scenario, r.Server, r.N, r.Errors, r.FirstErr, r.PerSec, r.CPU)
		}
		if r.Scenario != scPush && (r.P50 <= 0 || r.P99 < r.P50) {
			t.Errorf("%s/%s: p50 %v p99 %v", r.Scenario, r.Server, r.P50, r.P99)
		}
		if r.ClientCPU <= 0 || r.VsSDK <= 0 || r.SDKCPUVs <= 0 || (r.Scenario != scPush) != (r.CPUVsBare > 0) {
			t.Errorf("%s/%s: client cpu %v, ratios ×sdk %.2f cpu÷bare %.2f sdk÷cpu %.2f", r.Scenario, r.Server, r.ClientCPU, r.VsSDK, r.CPUVsBare, r.SDKCPUVs)
		}
		if (r.Server == "a2ago" || r.Server == "gosdk") && (r.VsSDK != 1 || r.SDKCPUVs != 1) {
			t.Errorf("%s/%s: the SDK stack's own ratios are ×sdk %.2f sdk÷cpu %.2f, want 1", r.Scenario, r.Server, r.VsSDK, r.SDKCPUVs)
		}
		if r.Server == "bare" && r.CPUVsBare != 1 {
			t.Errorf("%s/bare: cpu÷bare %.2f, want 1", r.Scenario, r.CPUVsBare)
		}
	}
	for sc, servers := range want {
		if !slices.Equal(got[sc], servers) {
			t.Errorf("%s: servers %v, want %v", sc, got[sc], servers)
		}
	}
}

// TestChecksRefuseWrongAnswers proves the checks the smoke test relies
// on fail on a wrong answer, not only on a bad status.
func TestChecksRefuseWrongAnswers(t *testing.T) {
	task := `{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"}]}]}`
	ok := func(id int, res string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result":` + res + `}`)
	}
	cases := []struct {
		name  string
		check func(i, status int, body []byte) error
		good  []byte
		bad   [][]byte
	}{
		{"GetTask", func(i, st int, b []byte) error { return checkGetTask(i, st, b, "t1") }, ok(3, task), [][]byte{
			ok(4, task), // another request's answer
			ok(3, strings.Replace(task, `"t1"`, `"t2"`, 1)),
			ok(3, strings.Replace(task, "COMPLETED", "WORKING", 1)),
			[]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"task not found"}}`),
			[]byte(`not json`),
		}},
		{"SendMessage", checkSend, ok(3, `{"task":`+task+`}`), [][]byte{
			ok(3, task), // the task not wrapped
			ok(3, `{"task":`+strings.Replace(task, "COMPLETED", "INPUT_REQUIRED", 1)+`}`),
		}},
		{"ListTasks", func(i, st int, b []byte) error { return checkList(i, st, b, 2) },
			ok(3, `{"tasks":[`+task+`,`+task+`],"totalSize":2,"pageSize":50,"nextPageToken":""}`), [][]byte{
				ok(3, `{"tasks":[`+task+`],"totalSize":2,"pageSize":50,"nextPageToken":""}`),
				ok(3, `{"tasks":[`+task+`,`+task+`],"totalSize":3,"pageSize":50,"nextPageToken":""}`),
				ok(3, `{"tasks":[`+task+`,`+task+`],"totalSize":2,"pageSize":50,"nextPageToken":"more"}`),
			}},
		{"tools/list", checkToolsList, ok(3, `{"tools":[{"name":"conformance-noop"}]}`), [][]byte{
			ok(3, `{"tools":[{"name":"other"}]}`),
		}},
		{"tools/call", checkToolsCall, ok(3, `{"content":[{"type":"text","text":"{}"}]}`), [][]byte{
			ok(3, `{"content":[{"type":"text","text":"boom"}],"isError":true}`),
			ok(3, `{"content":[]}`),
		}},
	}
	for _, c := range cases {
		if err := c.check(3, http.StatusOK, c.good); err != nil {
			t.Errorf("%s: a right answer refused: %v", c.name, err)
		}
		if err := c.check(3, http.StatusInternalServerError, c.good); err == nil {
			t.Errorf("%s: HTTP 500 accepted", c.name)
		}
		for _, b := range c.bad {
			if err := c.check(3, http.StatusOK, b); err == nil {
				t.Errorf("%s: wrong answer accepted: %s", c.name, b)
			}
		}
	}
}

// TestServerCPUIsTheServerProcess proves cpu/req counts the server
// process alone: CPU this process burns (as the clients do) does not show
// in the server's figure, while the requests it serves do.
func TestServerCPUIsTheServerProcess(t *testing.T) {
	s, err := spawn("gosdk", serveConfig{}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	cpu := func() time.Duration {
		t.Helper()
		d, err := s.cpu()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	before, mine := cpu(), processcpu.Used()
	for processcpu.Used()-mine < 300*time.Millisecond { // burn 300ms here
	}
	if idle := cpu() - before; idle > 100*time.Millisecond {
		t.Errorf("the server process's CPU rose %v while only this process worked", idle)
	}
	u, _ := unaryFor(scToolsList, s, 0)
	client := newClient(2)
	defer client.CloseIdleConnections()
	before = cpu()
	if got := drive(client, u, 1, 200, 2); got.errs != 0 {
		t.Fatalf("tools/list: %d wrong answers, first: %v", got.errs, got.firstErr)
	}
	if served := cpu() - before; served <= 0 {
		t.Errorf("the server process's CPU did not rise serving 200 requests")
	}
}
