package a2apeers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/nodepeer"
)

// StartNode starts testpeers/a2a-remote-agent.mjs, an @a2a-js/sdk server
// running the same commands as StartGo, behind a recording proxy whose URL
// the card names. It serves JSON-RPC only (JSONRPCPath): the SDK's
// HTTP+JSON adapter needs express, which testpeers does not depend on.
//
// Node.js is $WOPINTEROP_NODE, else node on PATH; the test is skipped when
// Node.js (22 or later) or testpeers/node_modules is missing, and fails
// instead when WOPINTEROP_REQUIRE_PEERS=1 (CI).
//
// Card is nil when a2a-go's AgentCard cannot decode the card the SDK
// writes: with a BearerToken, @a2a-js/sdk writes a security requirement's
// scopes as a StringList object ({"bearer":{}}), which a2a-go v2.4.0 reads
// as an array. CardJSON always holds the card.
func StartNode(t testing.TB, s Script) *Peer {
	t.Helper()
	node, agent := nodeAgent(t)
	return serve(t, func(base string) (http.Handler, *Peer) {
		upstream := startNodeAgent(t, node, agent, map[string]any{
			"publicURL": base, "tenant": s.Tenant, "bearerToken": s.BearerToken, "skills": s.Skills,
		})
		transport := &http.Transport{}
		t.Cleanup(transport.CloseIdleConnections)
		p := &Peer{}
		res, err := (&http.Client{Transport: transport}).Get(upstream.String() + CardPath)
		if err != nil {
			t.Fatalf("a2apeers: the Node agent's card: %v", err)
		}
		p.CardJSON, err = io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("a2apeers: the Node agent's card: %d %v", res.StatusCode, err)
		}
		if s.CardSigner != nil {
			p.CardJSON = signCard(t, p.CardJSON, s.CardSigner)
		}
		if err := json.Unmarshal(p.CardJSON, &p.Card); err != nil {
			p.Card = nil
			t.Logf("a2apeers: a2a-go cannot decode the Node agent's card: %v", err)
		}
		var h http.Handler = &httputil.ReverseProxy{
			Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(upstream) },
			Transport:     transport,
			FlushInterval: -1, // SSE events pass as they come
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
				w.WriteHeader(http.StatusBadGateway)
			},
		}
		if s.CardSigner != nil {
			// The signed card is served here; the agent's own stays unsigned.
			mux := http.NewServeMux()
			mux.Handle("GET "+CardPath, cardHandler(p.CardJSON))
			mux.Handle("/", h)
			h = mux
		}
		return h, p
	}, nil)
}

// nodeAgent finds Node.js and the Node agent script, skipping t (or failing
// it, when peers are required) when either is missing.
func nodeAgent(t testing.TB) (node, script string) {
	t.Helper()
	node, root := nodepeer.Find(t, "@a2a-js/sdk")
	return node, filepath.Join(root, "testpeers", "a2a-remote-agent.mjs")
}

// startNodeAgent runs the Node agent with config and returns its URL. The
// process ends with t: its stdin closes (the agent exits on EOF), and it
// is killed if it has not exited 5 s later.
func startNodeAgent(t testing.TB, node, script string, config map[string]any) *url.URL {
	t.Helper()
	cmd := exec.Command(node, script, string(mustJSON(config)))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	port := &firstLine{line: make(chan string, 1)}
	var stderr nodepeer.Buffer
	cmd.Stdout, cmd.Stderr = port, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("a2apeers: start the Node agent: %v", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("a2apeers: the Node agent's stderr:\n%s", stderr.String())
		}
	})
	select {
	case line := <-port.line:
		n, err := strconv.Atoi(strings.TrimPrefix(line, "PORT "))
		if err != nil {
			t.Fatalf("a2apeers: the Node agent printed %q, want PORT <n>", line)
		}
		return &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(n)}
	case <-exited:
		t.Fatalf("a2apeers: the Node agent exited before listening: %v\n%s", waitErr, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("a2apeers: the Node agent printed no port in 30 s\n%s", stderr.String())
	}
	return nil
}

// firstLine hands on the first line written to it and drops the rest.
type firstLine struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	line chan string
}

func (w *firstLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.sent {
		w.buf = append(w.buf, p...)
		if line, _, ok := bytes.Cut(w.buf, []byte("\n")); ok {
			w.sent = true
			w.line <- string(line)
		}
	}
	return len(p), nil
}
