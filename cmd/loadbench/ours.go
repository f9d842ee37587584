package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/examples/host/hostapp"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// The tenants of the example host: the bench's own, and one holding only
// the runs ListTasks pages through, so that SendMessage's runs do not
// change the listing.
const (
	benchTenant = "bench"
	listTenant  = "list"
	benchKey    = "bench-key"
	listKey     = "list-key"
)

// startOurs runs the example host on a memstore of its own, seeded with
// the conformance fixtures, the held workflow and listSize runs in the
// list tenant. pushAllow is the receiver origin the egress guard lets
// pushes reach.
func startOurs(ctx context.Context, listSize int, pushAllow string, hold *holder) (*server, error) {
	store := memstore.New(memstore.WithRunRetention(0))
	seeded := func() error {
		for _, t := range []string{benchTenant, listTenant} {
			if err := store.RegisterFixtures(t); err != nil {
				return err
			}
		}
		if err := store.Register(benchTenant, holdWorkflow(hold)); err != nil {
			return err
		}
		return store.AddAgent(benchTenant, benchAgent())
	}
	if err := seeded(); err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("seed the store: %w", err)
	}
	if err := seedRuns(ctx, store, listSize); err != nil {
		_ = store.Close()
		return nil, err
	}
	backend := hostapp.Backend{Open: func(context.Context, hostapp.OpenOptions) (hostapp.Opened, error) {
		return hostapp.Opened{Store: store, Close: store.Close}, nil
	}}
	args := []string{
		"-addr", "127.0.0.1:0",
		"-keys", benchTenant + "=" + benchKey + "," + listTenant + "=" + listKey,
		"-log-level", "error",
		"-run-retention", "0",
	}
	if pushAllow != "" {
		args = append(args, "-push-allow", pushAllow)
	}
	ctx, cancel := context.WithCancel(ctx)
	out, outW := io.Pipe()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		code := hostapp.Main(ctx, args, outW, &stderr, nil, backend)
		_ = outW.Close()
		done <- code
	}()
	base, err := listenAddr(out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if err != nil {
		cancel()
		<-done
		return nil, fmt.Errorf("start the example host: %w (stderr: %s)", err, stderr.String())
	}
	s := &server{
		name:     "ours",
		a2aURL:   base + "/a2a",
		mcpURL:   base + "/mcp",
		auth:     "Bearer " + benchKey,
		listAuth: "Bearer " + listKey,
		held:     true,
		pushType: "application/a2a+json", // OpenWOP RFC 0214 §C
		stop: func() {
			cancel()
			if code := <-done; code != 0 {
				fmt.Fprintf(os.Stderr, "loadbench: the example host exited %d: %s\n", code, stderr.String())
			}
		},
	}
	if s.tenant, err = agentTenant(base); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// agentTenant reads the bench agent's a2aTenant from the host's GET /agents.
func agentTenant(base string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/agents", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+benchKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var list struct {
		Agents []struct{ AgentID, A2ATenant string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", fmt.Errorf("GET /agents: %w", err)
	}
	for _, a := range list.Agents {
		if a.AgentID == benchAgentID && a.A2ATenant != "" {
			return a.A2ATenant, nil
		}
	}
	return "", fmt.Errorf("GET /agents: no a2aTenant for %s", benchAgentID)
}

// listenAddr reads the host's "listening on http://ADDR" line.
func listenAddr(r io.Reader) (string, error) {
	lines := bufio.NewScanner(r)
	found := make(chan string, 1)
	go func() {
		defer close(found)
		for lines.Scan() {
			if u, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
				found <- u
				return
			}
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			return "", errors.New("the host ended before it listened")
		}
		return u, nil
	case <-time.After(30 * time.Second):
		return "", errors.New("the host did not listen within 30s")
	}
}

// lockedBuffer is a strings.Builder safe for the host's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
