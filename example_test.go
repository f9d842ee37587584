package wopinterop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
)

// The mount recipe: a store (here the embedded memstore, which is also the
// event sink), a SubjectResolver over the host's own credentials, one
// Config with an A2A and an MCP section, and the host's routes on the
// host's mux beside its own.
func Example() {
	store := memstore.New()
	defer store.Close()
	_ = store.RegisterFixtures("acme")
	approval := memstore.ConformanceFixtures()[1].Workflow // conformance-approval

	subjects := interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
		if r.Header.Get("Authorization") != "Bearer demo-acme" {
			return interop.Subject{}, interop.ErrUnauthenticated
		}
		return interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}, nil
	})

	host, err := wopinterop.New(wopinterop.Config{
		Store:       store,
		Subjects:    subjects,
		Events:      store,
		BaseURL:     "https://agents.example.com",
		HostVersion: "1.4.2",
		A2A: &wopinterop.A2AConfig{
			Record:       wopinterop.Record{RefreshedAt: "2026-11-20"},
			Streaming:    true,
			DurableTasks: true,
			Card: a2a.CardConfig{
				Name:                 "Example host",
				Description:          "Runs approval workflows.",
				SecuritySchemes:      wire.NamedSecuritySchemes{"bearer": wire.HTTPAuthSecurityScheme{Scheme: "Bearer"}},
				SecurityRequirements: wire.SecurityRequirementsOptions{{"bearer": {}}},
			},
			Routed:   []interop.Workflow{approval},
			HTTPJSON: true,
		},
		MCP: &wopinterop.MCPConfig{
			Record:  wopinterop.Record{RefreshedAt: "2026-11-20"},
			SealKey: []byte("an example key, 32 bytes or more"), // a real host reads a secret
			Server:  mcp.Options{ServerInfo: mcp.Implementation{Name: "example-host", Version: "1.4.2"}, Tasks: true},
		},
		// A fixed clock keeps this example's refreshedAt current; a real
		// host leaves Now nil and re-checks upstream at least every 90 days.
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer host.Close(context.Background())

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	for _, rt := range host.Routes() { // or host.Mount(mux)
		fmt.Println("route:", rt.Pattern)
		mux.Handle(rt.Pattern, rt.Handler)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// The discovery records go into the host's GET /.well-known/openwop.
	records := host.Records()
	var a2aRecord struct {
		Profiles     []string `json:"profiles"`
		AgentCardURL string   `json:"agentCardUrl"`
	}
	_ = json.Unmarshal(records["a2a"], &a2aRecord)
	var mcpRecord struct {
		ServerURLs []string `json:"serverUrls"`
		Features   []string `json:"features"`
	}
	_ = json.Unmarshal(records["mcp"], &mcpRecord)
	fmt.Println("records:", slices.Sorted(maps.Keys(records)))
	fmt.Println("a2a:", a2aRecord.Profiles, a2aRecord.AgentCardURL)
	fmt.Println("mcp:", mcpRecord.ServerURLs, mcpRecord.Features)

	// The public card: interfaces from BaseURL, one skill per routed workflow.
	resp, _ := http.Get(srv.URL + "/.well-known/agent-card.json")
	var card wire.AgentCard
	_ = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	for _, in := range card.SupportedInterfaces {
		fmt.Println("interface:", in.ProtocolBinding, in.ProtocolVersion, in.URL)
	}
	fmt.Println("skills:", card.Skills[0].ID)

	// A peer's JSON-RPC SendMessage starts the approval run, which waits.
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` +
		`{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"please approve"}]}}}`
	rq, _ := http.NewRequest("POST", srv.URL+"/a2a", strings.NewReader(body))
	rq.Header.Set("Content-Type", "application/json")
	rq.Header.Set("A2A-Version", "1.0")
	rq.Header.Set("Authorization", "Bearer demo-acme")
	resp, _ = http.DefaultClient.Do(rq)
	var answer struct {
		Result struct {
			Task wire.Task `json:"task"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	task := answer.Result.Task
	fmt.Println("task:", strings.HasPrefix(string(task.ID), "acme/"), task.Status.State)

	// An MCP client lists the caller's workflows as tools: a stateless
	// request naming its revision in the header and in _meta.
	body = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	rq, _ = http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
	rq.Header.Set("Content-Type", "application/json")
	rq.Header.Set("Accept", "application/json, text/event-stream")
	rq.Header.Set("MCP-Protocol-Version", "2026-07-28")
	rq.Header.Set("Mcp-Method", "tools/list")
	rq.Header.Set("Authorization", "Bearer demo-acme")
	resp, _ = http.DefaultClient.Do(rq)
	var tools struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tools)
	resp.Body.Close()
	var names []string
	for _, tool := range tools.Result.Tools {
		names = append(names, tool.Name)
	}
	fmt.Println("tools:", slices.Sorted(slices.Values(names)))

	// Output:
	// route: /.well-known/agent-card.json
	// route: /a2a
	// route: /a2a/rest
	// route: /a2a/rest/
	// route: /mcp
	// records: [a2a hostEvents mcp]
	// a2a: [a2a-1.0] https://agents.example.com/.well-known/agent-card.json
	// mcp: [https://agents.example.com/mcp] [server-discover mrtr cacheable-lists extensions]
	// interface: JSONRPC 1.0 https://agents.example.com/a2a
	// interface: HTTP+JSON 1.0 https://agents.example.com/a2a/rest
	// skills: conformance-approval
	// task: true TASK_STATE_INPUT_REQUIRED
	// tools: [conformance-approval conformance-cancellable conformance-delay conformance-failure conformance-noop]
}
