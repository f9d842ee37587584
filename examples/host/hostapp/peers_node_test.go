package hostapp

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/nodepeer"
)

// requirePeers reports whether a missing peer is a failure rather than a
// skip; CI sets WOPINTEROP_REQUIRE_PEERS=1 after installing them.
func requirePeers() bool { return nodepeer.Required() }

// nodePeer finds Node.js and the installed npm package pkg of the test
// peers (internal/nodepeer), skipping — or, when peers are required,
// failing — when either is missing. It returns node and the repository root.
func nodePeer(t *testing.T, pkg string) (node, root string) {
	t.Helper()
	return nodepeer.Find(t, pkg)
}

// TestNodePeer runs @a2a-js/sdk's client (testpeers/a2a-peer.mjs) against
// the demo host on 127.0.0.1:0: the scenario of TestGoPeer over JSON-RPC
// and HTTP+JSON, tenant globex seeing nothing of acme's.
func TestNodePeer(t *testing.T) {
	node, root := nodePeer(t, "@a2a-js/sdk")
	h := newTestHost(t)
	out := runNodePeer(t, node, root, "a2a-peer.mjs", h.url, acmeKey, globexKey)
	// Every step reported, in order; a peer that skipped one fails here.
	want := []string{"ok card: skills conformance-approval"}
	for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
		for _, step := range []string{"send: acme/", "multi-turn: TASK_STATE_COMPLETED", "get: TASK_STATE_COMPLETED, 2 history",
			"list: A 1 task, B none", "cancel: TASK_STATE_", "stream: task:", "subscribe: task:TASK_STATE_INPUT_REQUIRED", "wire: ", "output: openwop.output"} {
			want = append(want, "ok "+binding+" "+step)
		}
	}
	wantInOrder(t, out, append(want, "PASS"))
}

// runNodePeer runs testpeers/<script> with args from the repository root
// and returns its stdout, logging each line; a non-zero exit fails t.
func runNodePeer(t *testing.T, node, root, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testpeers", script)}, args...)...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		t.Log(line)
	}
	if err != nil {
		t.Fatalf("the Node peer %s failed: %v\nstderr:\n%s", script, err, stderr.String())
	}
	return stdout.String()
}

// wantInOrder fails t unless every string of want occurs in out, in order.
func wantInOrder(t *testing.T, out string, want []string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("the Node peer did not report %q (in order)", w)
		}
		rest = rest[i+len(w):]
	}
}
