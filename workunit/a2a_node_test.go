package workunit_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/nodepeer"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/workunit"
)

// nodeWithA2AJS finds Node.js and the test peers' @a2a-js/sdk
// (internal/nodepeer), skipping when either is missing unless peers are
// required. It returns node and the repository root.
func nodeWithA2AJS(t *testing.T) (node, root string) {
	t.Helper()
	return nodepeer.Find(t, "@a2a-js/sdk")
}

// @a2a-js/sdk's client carries the unit to our A2A server on both
// bindings (testpeers/workunit-peer.mjs): activated with its own
// withA2AExtensions, the raw part reaches the host byte for byte and the
// response echoes the activation; the result unit it reads back verifies
// the completion; a changed byte and a missing activation are refused.
// What the host received also measures the alternatives: the text part
// kept the canonical text exactly, the data part did not.
func TestA2ARoundTripWithA2AJS(t *testing.T) {
	node, root := nodeWithA2AJS(t)
	h := newA2AHost(t, true)
	sent := mustSeal(t, sample)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testpeers", "workunit-peer.mjs"), h.url, hostKey, base64.StdEncoding.EncodeToString(sent.Canonical()), sent.Digest())
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		t.Log(line)
	}
	if err != nil {
		t.Fatalf("the Node peer failed: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if lines[len(lines)-1] != "PASS" {
		t.Fatalf("the Node peer did not pass")
	}

	byID := map[string]interop.CreateRunRequest{}
	h.host.mu.Lock()
	for _, req := range h.host.requests {
		byID[req.Message.ID] = req
	}
	h.host.mu.Unlock()
	for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
		t.Run(binding, func(t *testing.T) {
			var steps []string
			for _, l := range lines {
				if rest, ok := strings.CutPrefix(l, "ok "+binding+" "); ok {
					steps = append(steps, strings.SplitN(rest, ":", 2)[0])
				}
			}
			if want := []string{"raw", "tampered", "inactive", "text", "data"}; !slices.Equal(steps, want) {
				t.Fatalf("steps %q, want %q", steps, want)
			}
			// raw: the host received the exact bytes, activated.
			raw, ok := byID["wu-raw-"+binding]
			if !ok {
				t.Fatal("the host never received the raw message")
			}
			got, err := workunit.FromMessage(raw.Message)
			if err != nil || !bytes.Equal(got.Canonical(), sent.Canonical()) {
				t.Fatalf("the host opened %q (%v)", got.Canonical(), err)
			}
			// The result unit as @a2a-js/sdk decoded it verifies.
			var resultLine string
			for _, l := range lines {
				if strings.HasPrefix(l, "ok "+binding+" raw: ") {
					resultLine = l
				}
			}
			f := strings.Fields(resultLine)
			resultBytes, err := base64.StdEncoding.DecodeString(f[len(f)-2])
			if err != nil {
				t.Fatal(err)
			}
			result, err := workunit.Open(resultBytes, f[len(f)-1])
			if err != nil {
				t.Fatalf("the result as the Node peer read it: %v", err)
			}
			if c, err := workunit.RemoteCompleted(sent).Verify(result); err != nil || c.Acceptance() != workunit.Accepted {
				t.Fatalf("Verify: %+v %v", c, err)
			}
			// The measurement: a text part keeps the bytes, a data part
			// does not (@a2a-js/sdk re-serializes the parsed value, and a
			// JavaScript object puts integer-like keys first).
			text := byID["wu-text-"+binding].Message.Parts[1]
			if text.Kind != interop.PartText || text.Text != string(sent.Canonical()) {
				t.Errorf("the text part arrived as %q", text.Text)
			}
			data := byID["wu-data-"+binding].Message.Parts[1]
			if data.Kind != interop.PartData || bytes.Equal(data.Data, sent.Canonical()) {
				t.Errorf("the data part kept the bytes; the measurement no longer holds: %s", data.Data)
			} else {
				t.Logf("data part arrived as %s", data.Data)
			}
		})
	}
}
