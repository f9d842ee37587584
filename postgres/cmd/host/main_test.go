package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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

// replicaArgs are a replica's flags: dsn, a free loopback port, the keys
// every replica shares, then extra.
func replicaArgs(dsn string, extra ...string) []string {
	return append([]string{"-postgres", dsn, "-addr", "127.0.0.1:0",
		"-seal-key", sealKey, "-routing-secret", routingSecret, "-log-level", "error"}, extra...)
}

var listening = regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)$`)

// origin reads a replica's first line of output, "listening on ORIGIN",
// then drains the rest; exited says why there was none.
func origin(t *testing.T, out io.Reader, exited func() string) string {
	t.Helper()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("replica exited before listening: %s", exited())
	}
	m := listening.FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q", lines.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return m[1]
}

// startReplica runs the host on dsn on a free loopback port until t ends,
// with the shared keys and extra flags, and returns its origin.
func startReplica(t *testing.T, dsn string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- hostapp.Main(ctx, replicaArgs(dsn, extra...), w, io.Discard, nil, backend())
		_ = w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("replica exited with %d", code)
		}
	})
	return origin(t, out, func() string { cancel(); return fmt.Sprintf("exit code %d", <-done) })
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

// TestVaultKeyFlag: -vault-key is a comma-separated list of hex AES-256
// keys kept in order (the first encrypts); without it the key is derived
// from -seal-key by HKDF-SHA256 under a fixed label — the same on every
// replica sharing the seal key, and never the seal key itself; with
// neither, a random key and a warning. No refusal and no log line repeats
// a key.
func TestVaultKeyFlag(t *testing.T) {
	k1, k2 := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	keys, err := vaultKeys(" "+k1+", "+k2, nil, nil)
	if err != nil || len(keys) != 2 || hex.EncodeToString(keys[0]) != k1 || hex.EncodeToString(keys[1]) != k2 {
		t.Fatalf("vaultKeys(k1, k2) = %x, %v", keys, err)
	}

	seal, _ := hex.DecodeString(sealKey)
	derived, err := vaultKeys("", seal, nil)
	// HKDF-SHA256 (RFC 5869), no salt, info "wopinterop example host: push
	// vault key", computed independently: changing the label would make
	// every stored push secret unreadable.
	const want = "36d54f2fb6339c00bf38397a5fd8e6b234970aa3932cbdbf3358f64e88b117e3"
	if err != nil || len(derived) != 1 || hex.EncodeToString(derived[0]) != want {
		t.Fatalf("derived from -seal-key: %x, %v; want %s", derived, err, want)
	}
	other, _ := vaultKeys("", append([]byte{1}, seal[1:]...), nil)
	if bytes.Equal(other[0], derived[0]) {
		t.Fatal("two seal keys derive one vault key")
	}

	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	r1, err1 := vaultKeys("", nil, logger)
	r2, err2 := vaultKeys("", nil, logger)
	if err1 != nil || err2 != nil || len(r1[0]) != 32 || bytes.Equal(r1[0], r2[0]) {
		t.Fatalf("without -vault-key and -seal-key: %x %x (%v %v), want two random keys", r1, r2, err1, err2)
	}
	if !strings.Contains(logs.String(), "level=WARN") || strings.Contains(logs.String(), hex.EncodeToString(r1[0])) {
		t.Fatalf("the random key's warning: %q", logs.String())
	}

	for spec, want := range map[string]string{
		"zz" + k1[2:]:        "invalid -vault-key: key 1 is not 64 hex digits",
		k1 + "," + k1[:62]:   "invalid -vault-key: key 2 is not 64 hex digits",
		k1 + "," + k2 + "00": "invalid -vault-key: key 2 is not 64 hex digits",
		k1 + ",":             "invalid -vault-key: key 2 is not 64 hex digits",
	} {
		var stderr strings.Builder
		code := hostapp.Main(context.Background(), []string{"-addr", "127.0.0.1:0", "-postgres", "postgres://127.0.0.1:1/none", "-vault-key", spec},
			io.Discard, &stderr, nil, backend())
		if code != 1 || strings.TrimSpace(stderr.String()) != "host: "+want {
			t.Errorf("-vault-key %q: exit %d, %q; want 1, %q", spec, code, stderr.String(), "host: "+want)
		}
		if strings.Contains(stderr.String(), k1[4:]) {
			t.Errorf("-vault-key %q: the refusal repeats the key: %q", spec, stderr.String())
		}
	}
}
