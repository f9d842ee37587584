package mcpfixtures_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/examples/host/mcpfixtures"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

// conformancePackage is the suite the tests pin (testpeers/package.json).
const (
	conformancePackage = "@modelcontextprotocol/conformance"
	conformanceVersion = "0.2.0-alpha.12"
	minNodeMajor       = 22
)

// newMount serves the fixtures the way a host does for the suite: the
// anonymous caller lands in the dedicated tenant, the Tasks extension is
// served, loopback pages may call (the DNS-rebinding scenario sends a
// loopback Origin), tasks are answered as soon as their run exists.
func newMount(t testing.TB) (*httptest.Server, *memstore.Store) {
	t.Helper()
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	if err := mcpfixtures.Register(store, mcpfixtures.Tenant); err != nil {
		t.Fatal(err)
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision})
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, sealed.MinKeyLen)
	rand.Read(key)
	sealer, err := sealed.NewSealer(sealed.Config{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	cfg := mcp.Config{
		Store: store, Policy: policy, Sealer: sealer,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{Tenant: mcpfixtures.Tenant, Principal: "conformance-client"}, nil
		}),
		AllowAnonymous:       true,
		AllowLoopbackOrigins: true,
		Tasks:                true,
		ServerInfo:           mcp.Implementation{Name: "wopinterop-mcp-fixtures", Version: "1.0.0"},
		BlockTimeout:         10 * time.Second,
	}
	mcpfixtures.New().Configure(&cfg)
	srv, err := mcp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	ts := httptest.NewServer(mux) // 127.0.0.1: the DNS-rebinding scenario needs a loopback URL
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("mcp Server.Close: %v", err)
		}
	})
	return ts, store
}

// requirePeers reports whether a missing Node or suite fails the test
// rather than skipping it; CI sets it after installing testpeers.
func requirePeers() bool { return os.Getenv("WOPINTEROP_REQUIRE_PEERS") == "1" }

// suite finds Node.js (≥ 22) and the conformance CLI: $WOPINTEROP_NODE or
// node on PATH; the package under $WOPINTEROP_TESTPEERS/node_modules or
// the repository's testpeers/node_modules.
func suite(t *testing.T) (node, cli, requirements string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if requirePeers() {
			t.Fatalf(format+" (WOPINTEROP_REQUIRE_PEERS=1)", args...)
		}
		t.Skipf(format+"; install testpeers (npm ci) to run the MCP conformance suite", args...)
	}
	node = os.Getenv("WOPINTEROP_NODE")
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			missing("no Node.js: set WOPINTEROP_NODE or put node on PATH")
		}
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		missing("%s --version: %v", node, err)
	}
	major := 0
	if m := regexp.MustCompile(`^v([0-9]+)\.`).FindSubmatch(bytes.TrimSpace(out)); m != nil {
		major, _ = strconv.Atoi(string(m[1]))
	}
	if major < minNodeMajor {
		missing("Node.js %s is older than %d", bytes.TrimSpace(out), minNodeMajor)
	}
	peers := os.Getenv("WOPINTEROP_TESTPEERS")
	if peers == "" {
		root, err := filepath.Abs(filepath.Join("..", "..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		peers = filepath.Join(root, "testpeers")
	}
	pkg := filepath.Join(peers, "node_modules", filepath.FromSlash(conformancePackage))
	manifest, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		missing("%s is not installed under %s", conformancePackage, peers)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(manifest, &meta) != nil || meta.Version != conformanceVersion {
		t.Fatalf("%s is %q under %s, want %s", conformancePackage, meta.Version, peers, conformanceVersion)
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

// TestConformanceSuite runs the official MCP conformance suite against the
// mount with the fixtures: every scenario the 2026-07-28 revision requires
// and every tasks-* extension scenario must pass. One run with
// --requirements covers both: the frozen list runs its not-scored
// extension scenarios too.
func TestConformanceSuite(t *testing.T) {
	node, cli, reqFile := suite(t)
	ts, _ := newMount(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "server", "--url", ts.URL+"/mcp", "--requirements", mcp.Revision, "-o", out)
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
