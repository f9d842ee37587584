package hostapp

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeWalkthrough returns the second ```sh block under "## Curl
// walkthrough" in the repository README: the commands a newcomer pastes.
func readmeWalkthrough(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Curl walkthrough")
	if !ok {
		t.Fatal("README has no curl walkthrough section")
	}
	var blocks []string
	for {
		_, rest, ok := strings.Cut(section, "```sh\n")
		if !ok {
			break
		}
		block, after, ok := strings.Cut(rest, "```")
		if !ok {
			t.Fatal("unterminated sh block")
		}
		blocks = append(blocks, block)
		section = after
	}
	if len(blocks) < 2 {
		t.Fatalf("walkthrough has %d sh blocks, want the start command and the commands", len(blocks))
	}
	return blocks[1]
}

// TestReadmeWalkthrough runs the README's curl walkthrough verbatim against
// the real binary. Only the BASE line is pointed at the port the binary
// picked; every other line runs as written.
func TestReadmeWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	script := readmeWalkthrough(t)
	const baseLine = "BASE=http://127.0.0.1:8080\n"
	if !strings.HasPrefix(script, baseLine) {
		t.Fatalf("walkthrough does not start with %q", baseLine)
	}

	bin := filepath.Join(t.TempDir(), "host")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
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
		t.Fatal("binary printed nothing")
	}
	base, ok := listeningURL(lines.Text())
	if !ok {
		t.Fatalf("first line %q", lines.Text())
	}

	script = "set -u\nBASE=" + base + "\n" + strings.TrimPrefix(script, baseLine)
	sh := exec.Command("bash", "-c", script)
	var out, errOut bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- sh.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("walkthrough failed: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
		}
	case <-time.After(60 * time.Second):
		_ = sh.Process.Kill()
		t.Fatalf("walkthrough hung; output so far:\n%s", out.String())
	}
	got := out.String()
	// Steps 20 and 21 answer one task in one context.
	tasks := regexp.MustCompile(`"result":\{"task":\{"id":"(acme/[^"]+)",.*?"contextId":"([^"]+)"`).FindAllStringSubmatch(got, -1)
	if len(tasks) != 2 || tasks[0][1] != tasks[1][1] || tasks[0][2] != tasks[1][2] {
		t.Errorf("the two A2A answers are not one task in one context: %q", tasks)
	}
	// What each commented step promises, in order.
	for _, want := range []string{
		`"protocolVersions":["2.0"]`,
		`"serverUrls":["` + base + `/mcp"]`,
		`"agents":{`,
		`"oauth":{`,
		"304\n",
		`"status":"running"`,
		`"status":"completed"`,
		"completed\n",
		`"runs":[{"runId":"acme/`,
		`"type":"node.suspended"`,
		`"status":"waiting-approval"`,
		`"type":"run.completed"`,
		`"error":"interrupt_already_resolved"`,
		`"status":"cancelling"`,
		`"reason":"walkthrough"`,
		`"error":"run_terminal"`,
		`"type":"run.started"`,
		`"error":"id_tenant_mismatch"`,
		"403\n403\n",
		`{"runs":[]}`,
		`"error":"unauthenticated"`,
		`"agentId":"demo-agent"`,
		`"a2aTenant":"`,
		`"agentId":"core.conformance.agent-pack.resolver"`,
		`"protocolBinding":"JSONRPC"`,
		`"skills":[{`,
		`"id":"conformance-approval"`,
		`"result":{"task":{"id":"acme/`,
		`"state":"TASK_STATE_INPUT_REQUIRED"`,
		`"id":2,"result":{"task":{"id":"acme/`,
		`"state":"TASK_STATE_COMPLETED"`,
		`"id":1,"result":{`,
		`"supportedVersions":["2026-07-28"]`,
		`"extensions":{"io.modelcontextprotocol/tasks":{}}`,
		`"id":2,"result":{`,
		`"resultType":"complete","content":[{"type":"text","text":"{\"ok\":true}"}`,
		`"structuredContent":{"ok":true},"isError":false`,
	} {
		i := strings.Index(got, want)
		if i < 0 {
			t.Fatalf("walkthrough output lacks %q (in order); remaining output:\n%s\nfull stderr:\n%s", want, got, errOut.String())
		}
		got = got[i+len(want):]
	}
}
