package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/examples/host/hostapp"
	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const (
	sealKey       = "0000000000000000000000000000000000000000000000000000000000000001"
	routingSecret = "0000000000000000000000000000000000000000000000000000000000000002"
)

// startReplica runs the host on dsn on a free loopback port until t ends,
// with the shared keys and extra flags, and returns its origin.
func startReplica(t *testing.T, dsn string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		args := append([]string{"-postgres", dsn, "-addr", "127.0.0.1:0",
			"-seal-key", sealKey, "-routing-secret", routingSecret, "-log-level", "error"}, extra...)
		done <- hostapp.Main(ctx, args, w, io.Discard, nil, backend())
		_ = w.Close()
	}()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		cancel()
		t.Fatalf("replica exited with %d before listening", <-done)
	}
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q", lines.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("replica exited with %d", code)
		}
	})
	return m[1]
}

func call(t *testing.T, method, url, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer demo-acme")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 || json.Unmarshal(raw, &v) != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	return v
}

// TestTwoReplicasServeOneRun starts two hosts on one database: a run
// started on one is read, and cancelled, on the other.
func TestTwoReplicasServeOneRun(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, b := startReplica(t, dsn), startReplica(t, dsn)
	run := call(t, http.MethodPost, a+"/runs", `{"workflowId":"conformance-approval","inputs":{}}`)
	id, _ := run["runId"].(string)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := call(t, http.MethodGet, b+"/runs/"+url.PathEscape(id), "")
		if got["status"] == "waiting-approval" || got["status"] == "waiting" || got["status"] == "suspended" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica b reads %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	call(t, http.MethodPost, b+"/runs/"+url.PathEscape(id)+"/cancel", `{}`)
	// The replica holding the run's lease ends it; until it has, the run
	// reads cancelling on every replica.
	deadline = time.Now().Add(10 * time.Second)
	for {
		final := call(t, http.MethodGet, a+"/runs/"+url.PathEscape(id), "")
		if final["status"] == "cancelled" {
			break
		}
		if final["status"] != "cancelling" || time.Now().After(deadline) {
			t.Fatalf("after a cancel on b, a reads %v", final)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestOpenRefusesWithoutPostgres(t *testing.T) {
	var stderr strings.Builder
	code := hostapp.Main(context.Background(), []string{"-addr", "127.0.0.1:0"}, io.Discard, &stderr, nil, backend())
	if code != 1 || !strings.Contains(stderr.String(), "host: -postgres is required") {
		t.Fatalf("Main without -postgres = %d, %q", code, stderr.String())
	}
}
