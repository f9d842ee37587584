package mcppeers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/nodepeer"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StartNode starts testpeers/mcp-remote-server.mjs, a scripted
// @modelcontextprotocol/server 2.x (the TypeScript SDK) server: McpServer
// behind createMcpHandler, one McpServer per HTTP request (MCP 2026-07-28
// stateless: no initialize, no Mcp-Session-Id), running the Script's tools
// with the scripted behaviours StartGo runs, behind a recording proxy so
// that Requests, Calls, SlowCalls and SetTools work as on StartGo.
//
// Script fields:
//   - Revisions must list Current: createMcpHandler always serves
//     2026-07-28. A revision before it turns on the SDK's stateless legacy
//     fallback (initialize per request); without one, legacy traffic is
//     refused (legacy: "reject"). server/discover reports 2026-07-28 only.
//   - BearerToken and CallerTools are checked by the SDK's
//     requireBearerAuth (answers differ from go-sdk's: see the package
//     documentation); CallerTools are registered on the McpServer of that
//     caller's requests.
//   - Tools, ListCache (the SDK's cacheHints) and SetTools (the next
//     request's McpServer, and notifications/tools/list_changed on open
//     subscriptions/listen streams) are honoured.
//   - JSONResponse selects responseMode "json"; otherwise the SDK's
//     default "auto" answers one application/json body unless the tool
//     sends a notification first (then an SSE stream).
//   - PageSize cannot be honoured (McpServer lists every tool on one page):
//     a non-zero PageSize fails t.
//
// Node.js is $WOPINTEROP_NODE, else node on PATH; the test is skipped when
// Node.js (22 or later) or testpeers/node_modules is missing, and fails
// instead when WOPINTEROP_REQUIRE_PEERS=1 (CI).
func StartNode(t testing.TB, s Script) *Server {
	t.Helper()
	node, script := nodeServer(t)
	revs := s.Revisions
	if revs == nil {
		revs = []string{Current}
	}
	if !slices.Contains(revs, Current) {
		t.Fatalf("mcppeers: StartNode: Script.Revisions %v lacks %s, which the TypeScript SDK always serves", revs, Current)
	}
	if s.PageSize != 0 {
		t.Fatalf("mcppeers: StartNode: Script.PageSize: the TypeScript SDK's McpServer does not paginate tools/list")
	}
	tools := s.Tools
	if tools == nil {
		tools = DefaultTools()
	}
	config := map[string]any{"revisions": revs, "tools": tools, "responseMode": "auto"}
	if s.JSONResponse {
		config["responseMode"] = "json"
	}
	if s.BearerToken != "" {
		config["bearerToken"] = s.BearerToken
	}
	if len(s.CallerTools) > 0 {
		config["callerTools"] = s.CallerTools
	}
	if s.ListCache != (mcp.Cacheable{}) {
		hint := map[string]any{"ttlMs": s.ListCache.TTLMs}
		if s.ListCache.CacheScope != "" {
			hint["cacheScope"] = s.ListCache.CacheScope
		}
		config["listCache"] = hint
	}
	var proc *nodeTools
	srv := serve(t, func(base string) (http.Handler, *Server) {
		config["publicURL"] = base
		var upstream *url.URL
		proc, upstream = startNodeServer(t, node, script, config)
		transport := &http.Transport{}
		t.Cleanup(transport.CloseIdleConnections)
		return &httputil.ReverseProxy{
			Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
			Transport:     transport,
			FlushInterval: -1, // SSE events pass as they come
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
				w.WriteHeader(http.StatusBadGateway)
			},
		}, &Server{tools: proc}
	}, nil)
	proc.rec = srv.rec
	// A slow call still waiting when the test ends is stopped before any
	// cleanup runs (a client's cleanup may wait for it), as StartGo does.
	go func() {
		<-t.Context().Done()
		proc.command(map[string]any{"stop": true})
	}()
	return srv
}

// nodeServer finds Node.js and the Node server script, skipping t (or failing
// it, when peers are required) when either is missing.
func nodeServer(t testing.TB) (node, script string) {
	t.Helper()
	node, root := nodepeer.Find(t, "@modelcontextprotocol/server")
	return node, filepath.Join(root, "testpeers", "mcp-remote-server.mjs")
}

// nodeTools is the Go side of a running Node server: its commands
// (stdin, one JSON object a line) and the events it reports (stdout, one
// JSON object a line after "PORT <n>").
type nodeTools struct {
	rec  *recorder
	slow slowLog

	stdinMu sync.Mutex
	stdin   io.WriteCloser
	closed  bool

	exited chan struct{} // closed when the process has exited

	mu      sync.Mutex
	seq     int
	acks    map[int]chan struct{}
	bySeq   map[int]*SlowCall // slow calls by the Node server's seq
	port    chan string
	gotPort bool
}

// startNodeServer runs the Node server with config and returns it and its
// URL. The process ends with t: its stdin closes (it exits on EOF), and
// it is killed if it has not exited 5 s later.
func startNodeServer(t testing.TB, node, script string, config map[string]any) (*nodeTools, *url.URL) {
	t.Helper()
	cmd := exec.Command(node, script, string(mustJSON(config)))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	p := &nodeTools{stdin: stdin, exited: exited, acks: map[int]chan struct{}{}, bySeq: map[int]*SlowCall{}, port: make(chan string, 1)}
	var stderr nodepeer.Buffer
	cmd.Stdout, cmd.Stderr = &lineWriter{line: p.event}, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("mcppeers: start the Node server: %v", err)
	}
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		p.closeStdin()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("mcppeers: the Node server's stderr:\n%s", stderr.String())
		}
	})
	select {
	case line := <-p.port:
		n, err := strconv.Atoi(strings.TrimPrefix(line, "PORT "))
		if err != nil {
			t.Fatalf("mcppeers: the Node server printed %q, want PORT <n>", line)
		}
		return p, &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(n)}
	case <-exited:
		t.Fatalf("mcppeers: the Node server exited before listening: %v\n%s", waitErr, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("mcppeers: the Node server printed no port in 30 s\n%s", stderr.String())
	}
	return nil, nil
}

// event handles one stdout line of the Node server.
func (p *nodeTools) event(line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.gotPort {
		p.gotPort = true
		p.port <- string(line)
		return
	}
	var e struct {
		Ack  *int `json:"ack"`
		Slow *struct {
			Seq     int             `json:"seq"`
			ID      json.RawMessage `json:"id"`
			Outcome SlowOutcome     `json:"outcome"`
		} `json:"slow"`
	}
	if json.Unmarshal(line, &e) != nil {
		return
	}
	if e.Ack != nil {
		if ack, ok := p.acks[*e.Ack]; ok {
			close(ack)
			delete(p.acks, *e.Ack)
		}
	}
	if s := e.Slow; s != nil {
		if c, ok := p.bySeq[s.Seq]; ok {
			p.slow.end(c, s.Outcome)
		} else {
			c := &SlowCall{ID: s.ID, Outcome: s.Outcome}
			p.bySeq[s.Seq] = c
			p.slow.add(c)
		}
	}
}

// command sends c to the Node server and waits up to ten seconds for it to
// be applied; it reports false when the server exited or did not answer.
func (p *nodeTools) command(c map[string]any) bool {
	p.mu.Lock()
	p.seq++
	seq := p.seq
	ack := make(chan struct{})
	p.acks[seq] = ack
	p.mu.Unlock()
	c["seq"] = seq
	p.stdinMu.Lock()
	err := io.ErrClosedPipe
	if !p.closed {
		_, err = p.stdin.Write(append(mustJSON(c), '\n'))
	}
	p.stdinMu.Unlock()
	if err != nil {
		return false
	}
	select {
	case <-ack:
		return true
	case <-p.exited:
		return false
	case <-time.After(10 * time.Second):
		return false
	}
}

func (p *nodeTools) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if !p.closed {
		p.closed = true
		_ = p.stdin.Close()
	}
}

func (p *nodeTools) set(tools []*mcp.Tool) {
	if !p.command(map[string]any{"setTools": tools}) {
		panic("mcppeers: the Node server did not take the new tool list")
	}
}

func (p *nodeTools) slowCalls() []SlowCall { return p.slow.snapshot(p.rec) }

// lineWriter hands on each complete line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func([]byte)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		line, rest, ok := bytes.Cut(w.buf, []byte("\n"))
		if !ok {
			break
		}
		w.line(line)
		w.buf = rest
	}
	return len(b), nil
}
