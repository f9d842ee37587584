package hostapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/examples/host/mcpfixtures"
	"github.com/wopinterop/wopinterop/mcp"
)

// conformancePackage is the suite the tests pin (testpeers/package.json).
const (
	conformancePackage = "@modelcontextprotocol/conformance"
	conformanceVersion = "0.2.0-alpha.12"
)

// suite finds Node.js (≥ 22) and the pinned conformance CLI among the test
// peers (see nodePeer), returning node, the CLI and the frozen requirements
// file of 2026-07-28.
func suite(t *testing.T) (node, cli, requirements string) {
	t.Helper()
	node, root := nodePeer(t, conformancePackage)
	pkg := filepath.Join(root, "testpeers", "node_modules", filepath.FromSlash(conformancePackage))
	manifest, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(manifest, &meta) != nil || meta.Version != conformanceVersion {
		t.Fatalf("%s is %q, want %s (testpeers/package.json)", conformancePackage, meta.Version, conformanceVersion)
	}
	return node, filepath.Join(pkg, "dist", "index.js"), filepath.Join(pkg, "requirements", "2026-07-28.yaml")
}

// requiredServerScenarios reads the frozen server list of the
// requirements file: the entries of its top-level "server:" block.
func requiredServerScenarios(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "server:":
			in = true
		case in && strings.HasPrefix(line, "  - "):
			out = append(out, strings.TrimSpace(strings.TrimPrefix(line, "  - ")))
		case in && line != "" && !strings.HasPrefix(line, " "):
			in = false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no server scenarios in %s", path)
	}
	return out
}

// scenarioResult is one scenario's checks.
type scenarioResult struct {
	passed, failed int
	failures       []string
}

// readResults reads every checks.json under dir, keyed by scenario.
func readResults(t *testing.T, dir string) map[string]*scenarioResult {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T`)
	results := map[string]*scenarioResult{}
	for _, f := range files {
		m := name.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			t.Fatalf("unexpected result directory %s", f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r := &scenarioResult{}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				r.passed++
			case "FAILURE":
				r.failed++
				r.failures = append(r.failures, c.ID+": "+c.ErrorMessage)
			}
		}
		results[m[1]] = r
	}
	return results
}

// TestMCPConformanceSuite runs the official MCP conformance suite against
// this host's /mcp-conformance mount (the suite's fixtures in their own
// tenant): every scenario the 2026-07-28 revision requires and every
// tasks-* extension scenario must pass. One run with --requirements covers
// both: the frozen list runs its not-scored extension scenarios too.
func TestMCPConformanceSuite(t *testing.T) {
	node, cli, reqFile := suite(t)
	// The whole host on a loopback listener: the DNS-rebinding scenario
	// needs a loopback URL.
	host := newTestHost(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "server", "--url", host.url+mcpConformancePath, "--requirements", mcp.Revision, "-o", out)
	cmd.Dir = out
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	runErr := cmd.Run()

	results := readResults(t, out)
	required := requiredServerScenarios(t, reqFile)
	var tasks []string
	for name := range results {
		if strings.HasPrefix(name, "tasks-") {
			tasks = append(tasks, name)
		}
	}
	slices.Sort(tasks)
	if len(tasks) != 10 {
		t.Errorf("the suite ran %d tasks-* scenarios (%v), want 10", len(tasks), tasks)
	}
	check := func(name string) (passedChecks int, ok bool) {
		r, found := results[name]
		switch {
		case !found:
			t.Errorf("scenario %s: no results", name)
		case r.failed > 0:
			t.Errorf("scenario %s: %d of %d checks failed:\n  %s", name, r.failed, r.passed+r.failed, strings.Join(r.failures, "\n  "))
		case r.passed == 0 && name != "tasks-status-notifications":
			// tasks-status-notifications is a placeholder without checks
			// in this suite version; every other scenario checks something.
			t.Errorf("scenario %s: no check passed", name)
		default:
			return r.passed, true
		}
		return 0, false
	}
	count := func(names []string) (scenarios, checks int) {
		for _, name := range names {
			if n, ok := check(name); ok {
				scenarios++
				checks += n
			}
		}
		return scenarios, checks
	}
	reqPassed, reqChecks := count(required)
	tasksPassed, tasksChecks := count(tasks)
	t.Logf("required for %s: %d of %d scenarios passed (%d checks); tasks-*: %d of %d passed (%d checks)",
		mcp.Revision, reqPassed, len(required), reqChecks, tasksPassed, len(tasks), tasksChecks)
	if t.Failed() {
		t.Logf("suite output (exit %v):\n%s", runErr, log.String())
	}
}

// TestMCPConformanceMountOrigins: /mcp-conformance answers the request the
// suite's dns-rebinding-protection scenario sends — server/discover with
// Host and Origin both the server URL's own — with a 2xx, and refuses a
// foreign Host and Origin, a loopback page on another port and a foreign
// page with 403, without Node.
func TestMCPConformanceMountOrigins(t *testing.T) {
	h := newTestHost(t)
	own := strings.TrimPrefix(h.url, "http://")
	port := own[strings.LastIndex(own, ":")+1:]
	discover := func(host, origin string) (int, string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"` + metaVersion + `":"` + mcpRevision + `","` + metaCaps + `":{}}}}`
		hr, err := http.NewRequest(http.MethodPost, h.url+mcpConformancePath, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		hr.Header.Set("MCP-Protocol-Version", mcpRevision)
		hr.Header.Set("Mcp-Method", "server/discover")
		hr.Header.Set("Origin", origin)
		client := &http.Client{Transport: hostRewriter{host: host, next: h.client.Transport}}
		res, err := client.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		return res.StatusCode, b.String()
	}
	for _, host := range []string{own, "localhost:" + port} {
		if status, body := discover(host, "http://"+host); status != http.StatusOK || !strings.Contains(body, `"supportedVersions":["`+mcpRevision+`"]`) {
			t.Errorf("own origin http://%s: %d %s", host, status, body)
		}
	}
	const refusal = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: origin not allowed"}}`
	for _, tc := range [][2]string{
		{"evil.example.com", "http://evil.example.com"}, // the scenario's rebinding request
		{own, "http://evil.example.com"},
		{own, "http://localhost:1"},
	} {
		if status, body := discover(tc[0], tc[1]); status != http.StatusForbidden || body != refusal {
			t.Errorf("Host %s Origin %s: %d %s", tc[0], tc[1], status, body)
		}
	}
}

// TestMCPConformanceMountAudits: each request to /mcp-conformance leaves
// one negotiation.decided record in the host's sink, the store, as a
// durable host event of the fixtures' own tenant and of no other (OpenWOP
// interop.md §The audit event; RFC 0242 §B).
func TestMCPConformanceMountAudits(t *testing.T) {
	h := newTestHost(t)
	before := map[string]int{}
	for _, tenant := range []string{"acme", "globex", mcpfixtures.Tenant} {
		before[tenant] = len(h.store.DurableHostEvents(tenant))
	}
	const calls = 2
	for range calls {
		body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"` + metaVersion + `":"` + mcpRevision + `","` + metaCaps + `":{}}}}`
		hr, err := http.NewRequest(http.MethodPost, h.url+mcpConformancePath, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		hr.Header.Set("MCP-Protocol-Version", mcpRevision)
		hr.Header.Set("Mcp-Method", "server/discover")
		res, err := h.client.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("server/discover: %d", res.StatusCode)
		}
	}
	// Close delivers what the audit trail still queues.
	if err := h.handler.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := h.store.DurableHostEvents(mcpfixtures.Tenant)[before[mcpfixtures.Tenant]:]
	if len(events) != calls {
		t.Fatalf("%d records in %s, want %d", len(events), mcpfixtures.Tenant, calls)
	}
	for _, ev := range events {
		var p struct{ Protocol, Outcome, Version string }
		if err := json.Unmarshal(ev.Payload, &p); err != nil || ev.Type != "negotiation.decided" || p.Protocol != "mcp" || p.Outcome != "accepted" || p.Version != mcpRevision {
			t.Errorf("record %s %s", ev.Type, ev.Payload)
		}
	}
	for _, tenant := range []string{"acme", "globex"} {
		if n := len(h.store.DurableHostEvents(tenant)); n != before[tenant] {
			t.Errorf("%s gained %d records", tenant, n-before[tenant])
		}
	}
}
