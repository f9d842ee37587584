package hostapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// listeningURL returns the URL of a "listening on" line.
func listeningURL(line string) (string, bool) {
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)$`).FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-keys", "acme"}, exitUsage, "invalid -keys: entry 1: want tenant=key"},
		{[]string{"-keys", "acme=topsecret,globex=topsecret"}, exitUsage, `the key is already given to tenant "acme"`},
		{[]string{"-keys", "bad tenant=topsecret"}, exitUsage, "is not a valid tenant"},
		{[]string{"-keys", ""}, exitUsage, "no keys given"},
		{[]string{"-public-url", "ftp://x"}, exitUsage, "invalid -public-url"},
		{[]string{"-public-url", "https://x/path"}, exitUsage, "invalid -public-url"},
		{[]string{"-nope"}, exitUsage, "flag provided but not defined"},
		{[]string{"extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"-body-timeout", "0s"}, exitUsage, "invalid -body-timeout 0s: want a positive duration"},
		{[]string{"-run-retention", "-1h"}, exitUsage, "invalid -run-retention -1h0m0s"},
		{[]string{"-host-event-max-age", "-1s"}, exitUsage, "invalid -host-event-max-age -1s"},
		{[]string{"-run-retention", "soon"}, exitUsage, `invalid value "soon" for flag -run-retention`},
		{[]string{"-addr", "256.0.0.1:http-nope"}, exitFault, "host:"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr, nil)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if strings.Contains(stderr.String(), "topsecret") {
				t.Errorf("stderr shows a key: %q", stderr.String())
			}
		})
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, io.Discard, &stderr, nil); code != exitOK || !strings.Contains(stderr.String(), "-keys") {
		t.Errorf("-h: exit %d, %q", code, stderr.String())
	}
}

// TestRunInProcess serves with custom keys and a public URL, then drains on
// context cancellation with an event stream open.
// inProcess is the host's run function serving in this process.
type inProcess struct {
	base   string      // the URL it listens on
	done   <-chan int  // its exit code, once it returned
	stderr *syncBuffer // what it logged
}

// runInProcess starts run with args and waits for its "listening on" line;
// cancelling ctx shuts it down. onDrain is run's drain hook.
func runInProcess(t *testing.T, ctx context.Context, args []string, onDrain func()) inProcess {
	t.Helper()
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, outW, stderr, onDrain)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base, ok := listeningURL(strings.TrimSuffix(line, "\n"))
	if !ok {
		t.Fatalf("first line %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	return inProcess{base: base, done: done, stderr: stderr}
}

func TestRunInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drained := make(chan struct{})
	p := runInProcess(t, ctx, []string{"-addr", "127.0.0.1:0", "-keys", "initech=k-initech", "-public-url", "https://demo.example/"}, func() { close(drained) })
	base, done, stderr := p.base, p.done, p.stderr

	post := func(key string) *http.Response {
		rq, _ := http.NewRequest("POST", base+"/runs", strings.NewReader(`{"workflowId":"conformance-noop"}`))
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("k-initech")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.Contains(string(body), `"statusUrl":"https://demo.example/runs/initech~2F`) {
		t.Errorf("create = %d %s", resp.StatusCode, body)
	}
	resp = post("demo-acme")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("the replaced demo key still works: %d", resp.StatusCode)
	}

	rq, _ := http.NewRequest("GET", base+"/host/events", nil)
	rq.Header.Set("Authorization", "Bearer k-initech")
	stream, err := http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after cancellation (the open stream blocked shutdown?)")
	}
	select {
	case <-drained:
	default:
		t.Error("onDrain was not called")
	}
	if strings.Contains(stderr.String(), "k-initech") {
		t.Errorf("a key reached the log:\n%s", stderr.String())
	}
}

// TestBinary builds the real command, runs it, reads its one line, fetches
// discovery and stops it with SIGINT (then again with SIGTERM).
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "host")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { runBinary(t, bin, sig) })
	}
	t.Run("declared bodies reserve no memory", func(t *testing.T) { declaredBodies(t, bin) })
}

// declaredBodies measures the real process: 100 unauthenticated
// connections to /a2a and 100 authenticated ones to /mcp and /a2a/rest,
// each declaring a 4 MiB body and sending 16 bytes of it, must not grow
// its resident memory by 64 MiB (they once took it from 15 MB to 428 MB).
func declaredBodies(t *testing.T, bin string) {
	statusOf := func(pid int) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Skipf("no /proc: %v", err)
		}
		return string(b)
	}
	rss := func(pid int) int64 {
		m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindStringSubmatch(statusOf(pid))
		if m == nil {
			t.Skip("no VmRSS")
		}
		kb, _ := strconv.ParseInt(m[1], 10, 64)
		return kb << 10
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	base, ok := listeningURL(lines.Text())
	if !ok {
		t.Fatalf("first line %q", lines.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	addr := strings.TrimPrefix(base, "http://")
	before := rss(cmd.Process.Pid)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	heads := []string{
		"POST " + a2aPath + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n",
		"POST " + mcpPath + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + acmeKey + "\r\nContent-Type: application/json\r\nMcp-Method: tools/list\r\nMCP-Protocol-Version: 2026-07-28\r\n",
		"POST " + a2aRESTPath + "/message:send HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + acmeKey + "\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n",
	}
	for _, head := range heads {
		for range 100 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			if _, err := io.WriteString(c, head+"Content-Length: 4194304\r\n\r\n{\"jsonrpc\":\"2.0\""); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(time.Second)
	during := rss(cmd.Process.Pid)
	t.Logf("RSS %d MiB before, %d MiB with %d connections each declaring 4 MiB", before>>20, during>>20, len(conns))
	if during-before > 64<<20 {
		t.Fatalf("RSS grew by %d MiB", (during-before)>>20)
	}
}

func runBinary(t *testing.T, bin string, sig syscall.Signal) {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("no output; stderr:\n%s", stderr.String())
	}
	base, ok := listeningURL(lines.Text())
	if !ok {
		t.Fatalf("first line %q", lines.Text())
	}
	resp, err := http.Get(base + "/.well-known/openwop")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, err := os.ReadFile(filepath.Join("testdata", "discovery.json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !bytes.Equal(bytes.ReplaceAll(body, []byte(base), []byte(goldenBase)), want) {
		t.Errorf("discovery = %d %s", resp.StatusCode, body)
	}

	// An open event stream must not hold the shutdown up.
	rq, _ := http.NewRequest("GET", base+"/host/events", nil)
	rq.Header.Set("Authorization", "Bearer demo-acme")
	stream, err := http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET /host/events = %d", stream.StatusCode)
	}

	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	// Read stdout to its end (the process closes it on exit), then Wait.
	var rest []string
	exited := make(chan error, 1)
	go func() {
		for lines.Scan() {
			rest = append(rest, lines.Text())
		}
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit: %v; stderr:\n%s", err, stderr.String())
		}
		if len(rest) != 0 {
			t.Errorf("more stdout after the listening line: %q", rest)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no exit within 5s of %v", sig)
	}
}

// TestShutdownAnswersInFlightRequests shuts the host down while an MCP
// tools/call waits on its run and an A2A SubscribeToTask stream is open:
// the call gets a JSON-RPC error in MCP's shape (never an empty 200), the
// stream ends after the events it carried, and run returns promptly.
func TestShutdownAnswersInFlightRequests(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := runInProcess(t, ctx, []string{"-addr", "127.0.0.1:0"}, nil)
	base, done, stderr := p.base, p.done, p.stderr
	h := &testHost{t: t, url: base, client: http.DefaultClient}

	// An A2A task waiting for approval, and a stream following it.
	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "shutdown-"+t.Name(), "")))
	subscribe, _ := http.NewRequest("POST", base+a2aPath, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"`+string(task.ID)+`"}}`))
	subscribe.Header.Set("Content-Type", "application/json")
	subscribe.Header.Set("A2A-Version", "1.0")
	subscribe.Header.Set("Authorization", "Bearer "+acmeKey)
	stream, err := http.DefaultClient.Do(subscribe)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	streamed := make(chan string, 1)
	go func() { b, _ := io.ReadAll(stream.Body); streamed <- string(b) }()

	// An MCP call whose run waits for a cancel.
	type answer struct {
		res response
		dec mcpResult
	}
	called := make(chan answer, 1)
	go func() {
		res, dec := mcpPost(t, http.DefaultClient, base, mcpReq{Key: acmeKey, Method: "tools/call", Name: "conformance-cancellable",
			Params: map[string]any{"name": "conformance-cancellable", "arguments": map[string]any{}}})
		called <- answer{res, dec}
	}()
	waitRuns(t, h, 2)

	cancel()
	select {
	case a := <-called:
		if a.res.Status == http.StatusOK || a.dec.Error == nil || a.dec.Error.Code != -32603 || !bytes.Contains(a.res.Body, []byte(`"jsonrpc":"2.0"`)) {
			t.Errorf("in-flight tools/call answered %d %s, want a JSON-RPC error", a.res.Status, a.res.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight tools/call got no answer")
	}
	select {
	case body := <-streamed:
		if !strings.Contains(body, `"task":{`) || !strings.Contains(body, `"id":2`) {
			t.Errorf("subscription carried %q, want the task event before it ended", body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the A2A stream did not end at shutdown")
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after shutdown")
	}
}

// waitRuns waits until acme has n runs.
func waitRuns(t *testing.T, h *testHost, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		list := decode[struct {
			Runs []snapshot `json:"runs"`
		}](t, h.get("/runs", acmeKey))
		if len(list.Runs) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("acme never had %d runs", n)
}

// -run-retention reaches the store: a finished run is gone (404, as an
// unknown id) once the retention has passed.
func TestRunRetentionFlag(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := runInProcess(t, ctx, []string{"-addr", "127.0.0.1:0", "-keys", "initech=k-initech", "-run-retention", "50ms"}, nil)
	do := func(method, url, body string) (int, string) {
		rq, _ := http.NewRequest(method, url, strings.NewReader(body))
		if body != "" {
			rq.Header.Set("Content-Type", "application/json")
		}
		rq.Header.Set("Authorization", "Bearer k-initech")
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := do("POST", p.base+"/runs", `{"workflowId":"conformance-noop"}`)
	var created struct {
		StatusURL string `json:"statusUrl"`
	}
	if err := json.Unmarshal([]byte(body), &created); status != 201 || err != nil {
		t.Fatalf("create = %d %s", status, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, body = do("GET", created.StatusURL, "")
		if status == http.StatusNotFound {
			break
		}
		if status != 200 || time.Now().After(deadline) {
			t.Fatalf("the finished run is still served: %d %s", status, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if body != `{"error":"not_found","message":"no such resource"}`+"\n" {
		t.Fatalf("a purged run answers %s", body)
	}
	cancel()
	<-p.done
}
