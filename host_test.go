package wopinterop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/push"
)

// today is the fixed clock of these tests; refreshedAt is ten days before.
var today = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const (
	refreshed = facets.Date("2026-11-20")
	base      = "https://agents.example.com"
	acmeKey   = "key-acme"
	globexKey = "key-globex"
	secret    = "0123456789abcdef0123456789abcdef" // 32 bytes
)

func subjects() interop.SubjectResolver {
	return interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer " + acmeKey:
			return interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}, nil
		case "Bearer " + globexKey:
			return interop.Subject{Tenant: "globex", Principal: "key:globex", Authenticated: true}, nil
		}
		return interop.Subject{}, interop.ErrUnauthenticated
	})
}

func newStore(t *testing.T) *memstore.Store {
	t.Helper()
	store := memstore.New()
	for _, tenant := range []string{"acme", "globex"} {
		if err := store.RegisterFixtures(tenant); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func approvalWorkflow() interop.Workflow {
	for _, d := range memstore.ConformanceFixtures() {
		if d.Workflow.ID == memstore.FixtureApproval {
			return d.Workflow
		}
	}
	panic("no approval fixture")
}

// validConfig is a complete configuration over store; cases change one
// thing each.
func validConfig(store *memstore.Store) wopinterop.Config {
	return wopinterop.Config{
		Store:         store,
		Subjects:      subjects(),
		Events:        store,
		Inventory:     store,
		BaseURL:       base,
		HostVersion:   "9.9.9",
		RoutingSecret: []byte(secret),
		Now:           func() time.Time { return today },
		A2A: &wopinterop.A2AConfig{
			Record:       wopinterop.Record{RefreshedAt: refreshed},
			Streaming:    true,
			DurableTasks: true,
			Card: a2a.CardConfig{
				Name:                 "Test host",
				Description:          "Serves the conformance fixtures.",
				SecuritySchemes:      wire.NamedSecuritySchemes{"bearer": wire.HTTPAuthSecurityScheme{Scheme: "Bearer"}},
				SecurityRequirements: wire.SecurityRequirementsOptions{{"bearer": {}}},
			},
			Routed:       []interop.Workflow{approvalWorkflow()},
			HTTPJSON:     true,
			ExtendedCard: true,
		},
	}
}

// manifestRuntime is the agents record per-agent cards need.
func manifestRuntime() *facets.Agents {
	return &facets.Agents{ManifestRuntime: &facets.ManifestRuntime{InstallScope: facets.InstallScopeTenant}}
}

// configFields returns the Field of every *ConfigError in err's tree.
func configFields(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *wopinterop.ConfigError:
			out = append(out, e.Field)
		case interface{ Unwrap() []error }:
			for _, c := range e.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	slices.Sort(out)
	return out
}

func TestNewRefusesInvalidConfig(t *testing.T) {
	store := newStore(t)
	for _, tt := range []struct {
		name   string
		change func(*wopinterop.Config)
		fields []string
	}{
		{"empty", func(c *wopinterop.Config) { *c = wopinterop.Config{} }, []string{"BaseURL", "Events", "Store", "Subjects"}},
		{"no store", func(c *wopinterop.Config) { c.Store = nil }, []string{"Store"}},
		{"no subjects", func(c *wopinterop.Config) { c.Subjects = nil }, []string{"Subjects"}},
		{"no events", func(c *wopinterop.Config) { c.Events = nil }, []string{"Events"}},
		{"relative base", func(c *wopinterop.Config) { c.BaseURL = "/host" }, []string{"BaseURL"}},
		{"base with path", func(c *wopinterop.Config) { c.BaseURL = base + "/v2" }, []string{"BaseURL"}},
		{"base with query", func(c *wopinterop.Config) { c.BaseURL = base + "?x=1" }, []string{"BaseURL"}},
		{"base not http", func(c *wopinterop.Config) { c.BaseURL = "ftp://agents.example.com" }, []string{"BaseURL"}},
		{"base with user", func(c *wopinterop.Config) { c.BaseURL = "https://u:p@agents.example.com" }, []string{"BaseURL"}},
		{"nothing routed", func(c *wopinterop.Config) { c.A2A.Routed = nil }, []string{"A2A.Routed"}},
		{"card without name", func(c *wopinterop.Config) { c.A2A.Card.Name = "" }, []string{"A2A.Card.Name"}},
		{"card without description", func(c *wopinterop.Config) { c.A2A.Card.Description = "" }, []string{"A2A.Card.Description"}},
		{"card without version", func(c *wopinterop.Config) { c.HostVersion = "" }, []string{"A2A.Card.Version"}},
		{"root path", func(c *wopinterop.Config) { c.A2A.Path = "/" }, []string{"A2A.Path"}},
		{"relative path", func(c *wopinterop.Config) { c.A2A.Path = "a2a" }, []string{"A2A.Path"}},
		{"wildcard path", func(c *wopinterop.Config) { c.A2A.Path = "/a2a/{tenant}" }, []string{"A2A.Path"}},
		{"card path under rest", func(c *wopinterop.Config) { c.A2A.CardPath = "/a2a/rest/card.json" }, []string{"A2A.CardPath"}},
		{"card path is the interface", func(c *wopinterop.Config) { c.A2A.CardPath = "/a2a" }, []string{"A2A.CardPath"}},
		{"agent cards without inventory", func(c *wopinterop.Config) {
			c.A2A.AgentCards, c.Agents = true, manifestRuntime()
			c.Inventory = nil
		}, []string{"Inventory"}},
		{"agent cards without secret", func(c *wopinterop.Config) {
			c.A2A.AgentCards, c.Agents = true, manifestRuntime()
			c.RoutingSecret = nil
		}, []string{"RoutingSecret"}},
		{"agent cards with a short secret", func(c *wopinterop.Config) {
			c.A2A.AgentCards, c.Agents = true, manifestRuntime()
			c.RoutingSecret = []byte("short-and-secret")
		}, []string{"RoutingSecret"}},
		// a2a.agentCards needs agents.manifestRuntime (OpenWOP interop
		// §Per-agent cards).
		{"agent cards without the agents record", func(c *wopinterop.Config) {
			c.A2A.AgentCards = true
		}, []string{"Agents"}},
		{"agent cards without agents.manifestRuntime", func(c *wopinterop.Config) {
			c.A2A.AgentCards, c.Agents = true, &facets.Agents{Status: facets.StatusStable}
		}, []string{"Agents.ManifestRuntime"}},
		{"a workflow routed twice", func(c *wopinterop.Config) { c.A2A.Routed = append(c.A2A.Routed, c.A2A.Routed...) }, []string{"A2A"}},
		{"agent cards with nothing they need, all at once", func(c *wopinterop.Config) {
			c.A2A.AgentCards = true
			c.Inventory, c.RoutingSecret = nil, nil
		}, []string{"Agents", "Inventory", "RoutingSecret"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig(store)
			tt.change(&cfg)
			h, err := wopinterop.New(cfg)
			if h != nil || !errors.Is(err, wopinterop.ErrInvalidConfig) {
				t.Fatalf("New = %v, %v; want an ErrInvalidConfig", h, err)
			}
			if got := configFields(err); !slices.Equal(got, tt.fields) {
				t.Errorf("fields %v, want %v (%v)", got, tt.fields, err)
			}
			if strings.Contains(err.Error(), "short-and-secret") || strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the routing secret: %v", err)
			}
		})
	}
}

// What a Record may not say is refused at construction with the facet
// field named (OpenWOP interop.md §The facets, §The refresh SLA, §Legacy
// profiles are absent; host-event.schema.json).
func TestNewRefusesBadRecords(t *testing.T) {
	store := newStore(t)
	for _, tt := range []struct {
		name   string
		change func(*wopinterop.Config)
		field  string
		rule   string
	}{
		{"no refreshedAt", func(c *wopinterop.Config) { c.A2A.Record.RefreshedAt = "" }, "a2a.refreshedAt", ""},
		{"stale refreshedAt", func(c *wopinterop.Config) { c.A2A.Record.RefreshedAt = "2026-08-01" }, "a2a.refreshedAt", "OpenWOP interop.md §The refresh SLA"},
		{"legacy profile", func(c *wopinterop.Config) { c.A2A.Record.Profiles = []string{"a2a-0.3-legacy"} }, "a2a.profiles[0]", "OpenWOP interop.md §Legacy profiles are absent"},
		{"version not spoken", func(c *wopinterop.Config) { c.A2A.Record.Versions = []string{"0.3"} }, "a2a.versions[0]", "OpenWOP interop.md §The facets"},
		{"negotiation.decided not durable", func(c *wopinterop.Config) {
			c.HostEvents = &facets.HostEvents{Types: []facets.HostEventType{{Type: "negotiation.decided", Delivery: facets.Ephemeral}}}
		}, "hostEvents.types[0].delivery", "OpenWOP host-event.schema.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig(store)
			tt.change(&cfg)
			h, err := wopinterop.New(cfg)
			if h != nil || !errors.Is(err, facets.ErrInvalidFacet) {
				t.Fatalf("New = %v, %v; want an ErrInvalidFacet", h, err)
			}
			var found bool
			for _, fe := range facets.FieldErrors(err) {
				if strings.HasPrefix(fe.Field, tt.field) && (tt.rule == "" || fe.Rule == tt.rule) {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem on %s (%s): %v", tt.field, tt.rule, err)
			}
		})
	}
}

// server mounts h on a fresh mux beside a host route and serves it.
func server(t *testing.T, h *wopinterop.Host) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /host-route", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "host") })
	h.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func newHost(t *testing.T, cfg wopinterop.Config) *wopinterop.Host {
	t.Helper()
	h, err := wopinterop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func send(t *testing.T, method, url, key, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	rq, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	rq.Header.Set("A2A-Version", "1.0")
	if body != "" {
		rq.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		rq.Header.Set("Authorization", "Bearer "+key)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

const sendApproval = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":` +
	`{"messageId":"MSG","role":"ROLE_USER","parts":[{"text":"approve?"}]}}}`

// Mount serves the card, JSON-RPC and HTTP+JSON at the configured paths,
// with every published URL built from BaseURL, and leaves the host's own
// routes alone.
func TestMountServesConfiguredPaths(t *testing.T) {
	for _, tt := range []struct {
		name               string
		path, cardPath     string
		rpc, rest, cardURL string
	}{
		{"defaults", "", "", "/a2a", "/a2a/rest", "/.well-known/agent-card.json"},
		{"custom", "/interop/a2a/", "/cards/host.json", "/interop/a2a", "/interop/a2a/rest", "/cards/host.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig(newStore(t))
			cfg.A2A.Path, cfg.A2A.CardPath = tt.path, tt.cardPath
			h := newHost(t, cfg)
			srv := server(t, h)

			card := send(t, "GET", srv.URL+tt.cardURL, "", "")
			if card.status != 200 {
				t.Fatalf("card: %d %s", card.status, card.body)
			}
			var c wire.AgentCard
			if err := json.Unmarshal(card.body, &c); err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, in := range c.SupportedInterfaces {
				urls = append(urls, string(in.ProtocolBinding)+" "+in.URL)
			}
			if want := []string{"JSONRPC " + base + tt.rpc, "HTTP+JSON " + base + tt.rest}; !slices.Equal(urls, want) {
				t.Errorf("interfaces %v, want %v", urls, want)
			}
			if len(c.Skills) != 1 || c.Skills[0].ID != memstore.FixtureApproval || !c.Capabilities.ExtendedAgentCard || !c.Capabilities.Streaming {
				t.Errorf("card %s", card.body)
			}

			rpc := send(t, "POST", srv.URL+tt.rpc, acmeKey, strings.Replace(sendApproval, "MSG", "m-"+tt.name, 1))
			var ans struct {
				ID     int `json:"id"`
				Result struct {
					Task wire.Task `json:"task"`
				} `json:"result"`
			}
			if err := json.Unmarshal(rpc.body, &ans); err != nil || rpc.status != 200 || ans.ID != 7 {
				t.Fatalf("JSON-RPC: %d %s %v", rpc.status, rpc.body, err)
			}
			task := ans.Result.Task
			if !strings.HasPrefix(string(task.ID), "acme/") || task.Status.State != wire.TaskStateInputRequired {
				t.Fatalf("task %s", rpc.body)
			}

			got := send(t, "GET", srv.URL+tt.rest+"/tasks/"+strings.Replace(string(task.ID), "/", "%2F", 1), acmeKey, "")
			var rt wire.Task
			if err := json.Unmarshal(got.body, &rt); err != nil || got.status != 200 || rt.ID != task.ID {
				t.Fatalf("HTTP+JSON GetTask: %d %s", got.status, got.body)
			}

			// The bare HTTP+JSON prefix is answered by the binding, not by
			// the mux's redirect (OpenWOP RFC 0211 §C).
			bare := send(t, "GET", srv.URL+tt.rest, acmeKey, "")
			var st struct {
				Error struct {
					Code   int    `json:"code"`
					Status string `json:"status"`
				} `json:"error"`
			}
			if err := json.Unmarshal(bare.body, &st); err != nil || bare.status != 404 || st.Error.Code != 404 || st.Error.Status != "NOT_FOUND" {
				t.Errorf("bare prefix: %d %s", bare.status, bare.body)
			}
			// A wrong verb on the JSON-RPC URL is JSON-RPC shaped.
			if r := send(t, "GET", srv.URL+tt.rpc, acmeKey, ""); r.status != 405 || !bytes.Contains(r.body, []byte(`"jsonrpc":"2.0"`)) {
				t.Errorf("GET on JSON-RPC: %d %s", r.status, r.body)
			}
			if r := send(t, "GET", srv.URL+"/host-route", "", ""); r.status != 200 || string(r.body) != "host" {
				t.Errorf("host route: %d %s", r.status, r.body)
			}
		})
	}
}

// Without HTTPJSON nothing is mounted under the rest prefix and the card
// lists the JSON-RPC interface only (OpenWOP interop map, a2a.card).
func TestMountWithoutHTTPJSON(t *testing.T) {
	cfg := validConfig(newStore(t))
	cfg.A2A.HTTPJSON = false
	srv := server(t, newHost(t, cfg))
	card := send(t, "GET", srv.URL+"/.well-known/agent-card.json", "", "")
	var c wire.AgentCard
	if err := json.Unmarshal(card.body, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.SupportedInterfaces) != 1 || c.SupportedInterfaces[0].ProtocolBinding != wire.TransportProtocolJSONRPC {
		t.Errorf("interfaces %s", card.body)
	}
	if r := send(t, "GET", srv.URL+"/a2a/rest/tasks", acmeKey, ""); r.status != 404 || bytes.Contains(r.body, []byte(`"status"`)) {
		t.Errorf("rest route answered: %d %s", r.status, r.body)
	}
}

// Without an A2A section nothing is mounted and nothing is advertised.
func TestHostWithoutSurfaces(t *testing.T) {
	cfg := validConfig(newStore(t))
	cfg.A2A = nil
	h := newHost(t, cfg)
	srv := server(t, h)
	if r := send(t, "GET", srv.URL+"/.well-known/agent-card.json", "", ""); r.status != 404 {
		t.Errorf("card served without A2A: %d", r.status)
	}
	if recs := h.Records(); len(recs) != 0 {
		t.Errorf("records %v", recs)
	}
	if routes := h.Routes(); len(routes) != 0 {
		t.Errorf("routes without a surface: %v", routes)
	}
}

type hostEventsRecord struct {
	Status  string `json:"status"`
	Witness string `json:"witness"`
	Types   []struct {
		Type     string `json:"type"`
		Delivery string `json:"delivery"`
	} `json:"types"`
}

func TestRecords(t *testing.T) {
	cfg := validConfig(newStore(t))
	cfg.A2A.CardPath = "/cards/host.json"
	h := newHost(t, cfg)
	recs := h.Records()
	if len(recs) != 2 {
		t.Fatalf("records %v, want a2a and hostEvents", recs)
	}
	var a struct {
		Profiles     []string `json:"profiles"`
		AgentCardURL string   `json:"agentCardUrl"`
		Versions     []string `json:"versions"`
		Streaming    bool     `json:"streaming"`
		DurableTasks bool     `json:"durableTasks"`
		RefreshedAt  string   `json:"refreshedAt"`
		Push         *bool    `json:"pushNotifications"`
	}
	if err := json.Unmarshal(recs["a2a"], &a); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Profiles, []string{"a2a-1.0"}) || a.AgentCardURL != base+"/cards/host.json" ||
		!slices.Equal(a.Versions, []string{"1.0"}) || !a.Streaming || !a.DurableTasks || a.RefreshedAt != string(refreshed) || a.Push != nil {
		t.Errorf("a2a record %s", recs["a2a"])
	}
	var he hostEventsRecord
	if err := json.Unmarshal(recs["hostEvents"], &he); err != nil {
		t.Fatal(err)
	}
	if len(he.Types) != 1 || he.Types[0].Type != "negotiation.decided" || he.Types[0].Delivery != "durable" {
		t.Errorf("hostEvents record %s", recs["hostEvents"])
	}
	// The copy is the caller's.
	recs["a2a"][0] = 'X'
	if h.Records()["a2a"][0] != '{' {
		t.Error("Records shares its bytes")
	}

	// The agents record, with the manifestRuntime object a2a.agentCards
	// needs (OpenWOP interop §Per-agent cards), is advertised as given,
	// its witness defaulted.
	cfg = validConfig(newStore(t))
	cfg.A2A.AgentCards, cfg.Agents = true, manifestRuntime()
	if got := string(newHost(t, cfg).Records()["agents"]); got != `{"status":"stable","since":"2.0","witness":"witnessable-gated","manifestRuntime":{"installScope":"tenant"}}` {
		t.Errorf("agents record %s", got)
	}
	cfg.Agents = &facets.Agents{ManifestRuntime: &facets.ManifestRuntime{}}
	if got := string(newHost(t, cfg).Records()["agents"]); got != `{"status":"stable","since":"2.0","witness":"witnessable-gated","manifestRuntime":{}}` {
		t.Errorf("agents record with an empty manifestRuntime %s", got)
	}

	// A host's own hostEvents record keeps its settings and types, and
	// gains negotiation.decided (OpenWOP RFC 0242 §B.3).
	cfg = validConfig(newStore(t))
	cfg.HostEvents = &facets.HostEvents{
		Witness: facets.WitnessGated,
		Types:   []facets.HostEventType{{Type: "billing.threshold", Delivery: facets.Ephemeral}},
	}
	if err := json.Unmarshal(newHost(t, cfg).Records()["hostEvents"], &he); err != nil {
		t.Fatal(err)
	}
	if he.Witness != "witnessable-gated" || len(he.Types) != 2 || he.Types[0].Type != "billing.threshold" || he.Types[1].Type != "negotiation.decided" || he.Types[1].Delivery != "durable" {
		t.Errorf("host's hostEvents record %+v", he)
	}
}

// A2ATenant gives an agent with a routed workflow a routing value, stable
// for the agent and host version, and none to an agent without one or
// without per-agent cards (OpenWOP RFC 0202 §B).
func TestA2ATenant(t *testing.T) {
	store := newStore(t)
	cfg := validConfig(store)
	cfg.A2A.AgentCards, cfg.Agents = true, manifestRuntime()
	h := newHost(t, cfg)
	agent := interop.Agent{ID: "ada", Persona: "Ada", Workflows: []string{memstore.FixtureApproval}}
	r, ok := h.A2ATenant(agent)
	if !ok || len(r) != 24 {
		t.Fatalf("A2ATenant = %q, %v", r, ok)
	}
	if again, _ := newHost(t, cfg).A2ATenant(agent); again != r {
		t.Error("routing value not stable across hosts with one secret and version")
	}
	cfg.HostVersion = "10.0.0"
	if other, _ := newHost(t, cfg).A2ATenant(agent); other == r {
		t.Error("routing value did not change with the host version")
	}
	if _, ok := h.A2ATenant(interop.Agent{ID: "idle"}); ok {
		t.Error("an agent without routed workflows got a routing value")
	}
	cfg.A2A.AgentCards = false
	if _, ok := newHost(t, cfg).A2ATenant(agent); ok {
		t.Error("a routing value without per-agent cards")
	}

	// The value opens that agent's card through GetExtendedAgentCard.
	if err := store.AddAgent("acme", agent); err != nil {
		t.Fatal(err)
	}
	srv := server(t, h)
	rpc := send(t, "POST", srv.URL+"/a2a", acmeKey, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{"tenant":"`+r+`"}}`)
	var ans struct {
		Result wire.AgentCard `json:"result"`
	}
	if err := json.Unmarshal(rpc.body, &ans); err != nil || ans.Result.Name != "Ada" || ans.Result.SupportedInterfaces[0].Tenant != r {
		t.Errorf("per-agent card: %s", rpc.body)
	}
	// globex cannot use acme's value (OpenWOP interop.md §Per-agent cards).
	rpc = send(t, "POST", srv.URL+"/a2a", globexKey, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{"tenant":"`+r+`"}}`)
	if !bytes.Contains(rpc.body, []byte(`"code":-32007`)) {
		t.Errorf("foreign routing value: %s", rpc.body)
	}
}

// gatedSink holds every host event until release is closed, so a test can
// prove Close waits for queued records.
type gatedSink struct {
	interop.EventSink
	release chan struct{}
	mu      sync.Mutex
	events  []interop.HostEvent
}

func (s *gatedSink) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	if tenant == "acme" {
		s.events = append(s.events, ev)
	}
	return s.EventSink.PublishHostEvent(ctx, tenant, ev)
}

func (s *gatedSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// Close delivers every record still queued before it returns: the
// negotiation.decided record of each inbound call reaches the sink as a
// durable host event of the caller's tenant (OpenWOP interop.md §The audit event; RFC 0242 §B).
func TestCloseDrainsAuditor(t *testing.T) {
	store := newStore(t)
	sink := &gatedSink{EventSink: store, release: make(chan struct{})}
	cfg := validConfig(store)
	cfg.Events = sink
	h, err := wopinterop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := server(t, h)
	const calls = 5
	for i := range calls {
		r := send(t, "POST", srv.URL+"/a2a", acmeKey, `{"jsonrpc":"2.0","id":`+strings.Repeat("1", i+1)+`,"method":"ListTasks","params":{}}`)
		if r.status != 200 || !bytes.Contains(r.body, []byte(`"tasks":[]`)) {
			t.Fatalf("ListTasks: %d %s", r.status, r.body)
		}
	}
	// The requests were answered while every record waits in the queue.
	if n := sink.count(); n != 0 {
		t.Fatalf("%d records delivered through a closed gate", n)
	}

	closed := make(chan error, 1)
	go func() { closed <- h.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with %d records undelivered", err, calls)
	case <-time.After(50 * time.Millisecond):
	}
	close(sink.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if n := sink.count(); n != calls {
		t.Fatalf("%d records delivered by Close, want %d", n, calls)
	}
	for _, ev := range store.DurableHostEvents("acme") {
		var p struct {
			Protocol string `json:"protocol"`
			Outcome  string `json:"outcome"`
			Version  string `json:"version"`
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil || ev.Type != negotiate.EventType || ev.Delivery != interop.DeliveryDurable ||
			p.Protocol != "a2a" || p.Outcome != "accepted" || p.Version != "1.0" {
			t.Errorf("record %+v %s", ev, ev.Payload)
		}
	}
	if n := len(store.DurableHostEvents("acme")); n != calls {
		t.Errorf("acme has %d durable host events, want %d", n, calls)
	}
	if n := len(store.DurableHostEvents("globex")); n != 0 {
		t.Errorf("globex received %d of acme's records", n)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Close gives up when its context ends while the sink is stuck.
func TestCloseHonoursContext(t *testing.T) {
	store := newStore(t)
	sink := &gatedSink{EventSink: store, release: make(chan struct{})}
	defer close(sink.release)
	cfg := validConfig(store)
	cfg.Events = sink
	h, err := wopinterop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := server(t, h)
	send(t, "GET", srv.URL+"/.well-known/agent-card.json", acmeKey, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
}

// TestA2ARecordFollowsTheServer: the a2a record claims exactly the facets
// the section turns on, each of which the server then serves — the card's
// capabilities say the same — so the record cannot promise what is not
// served (OpenWOP interop.md §The facets; interop map, a2a.card).
func TestA2ARecordFollowsTheServer(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		streaming, durable, push, agentCard bool
		record                              string
	}{
		{"nothing", false, false, false, false, `"agentCardUrl":"` + base + `/.well-known/agent-card.json"}`},
		{"streaming", true, false, false, false, `"agentCardUrl":"` + base + `/.well-known/agent-card.json","streaming":true}`},
		{"everything", true, true, true, true, `"agentCardUrl":"` + base + `/.well-known/agent-card.json","streaming":true,"pushNotifications":true,"durableTasks":true,"agentCards":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig(newStore(t))
			cfg.A2A.ExtendedCard = false
			cfg.A2A.Streaming, cfg.A2A.DurableTasks, cfg.A2A.AgentCards = tc.streaming, tc.durable, tc.agentCard
			if tc.push {
				cfg.A2A.Push = &push.Options{}
			}
			if tc.agentCard {
				cfg.Agents = manifestRuntime()
			}
			h := newHost(t, cfg)
			if rec := string(h.Records()["a2a"]); !strings.HasSuffix(rec, tc.record) {
				t.Errorf("record %s, want it to end %s", rec, tc.record)
			}
			card := send(t, "GET", server(t, h).URL+wopinterop.DefaultCardPath, "", "")
			var c wire.AgentCard
			if err := json.Unmarshal(card.body, &c); err != nil {
				t.Fatal(err)
			}
			if want := (wire.AgentCapabilities{Streaming: tc.streaming, PushNotifications: tc.push, ExtendedAgentCard: tc.agentCard}); !reflect.DeepEqual(c.Capabilities, want) {
				t.Errorf("card capabilities %+v, want %+v", c.Capabilities, want)
			}
		})
	}
}

// TestA2AExtensionsReachTheServer: the extensions a host declares are on
// its card and activated by a request's A2A-Extensions, which the response
// echoes (A2A 1.0 §3.2.6); a refused declaration names the section.
func TestA2AExtensionsReachTheServer(t *testing.T) {
	const uri = "https://ext.example/unit/v1"
	cfg := validConfig(newStore(t))
	cfg.A2A.Extensions = []wire.AgentExtension{{URI: uri, Description: "units"}}
	srv := server(t, newHost(t, cfg))
	var c wire.AgentCard
	if err := json.Unmarshal(send(t, "GET", srv.URL+wopinterop.DefaultCardPath, "", "").body, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Capabilities.Extensions) != 1 || c.Capabilities.Extensions[0].URI != uri || c.Capabilities.Extensions[0].Description != "units" {
		t.Fatalf("card extensions %+v", c.Capabilities.Extensions)
	}
	r, _ := http.NewRequest(http.MethodPost, srv.URL+wopinterop.DefaultA2APath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`))
	r.Header.Set("Authorization", "Bearer "+acmeKey)
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("A2A-Extensions", "urn:other, "+uri)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("A2A-Extensions") != uri {
		t.Fatalf("ListTasks: %d, A2A-Extensions %q", res.StatusCode, res.Header.Get("A2A-Extensions"))
	}

	cfg = validConfig(newStore(t))
	cfg.A2A.Extensions = []wire.AgentExtension{{URI: uri, Required: true}}
	if _, err := wopinterop.New(cfg); err == nil || !strings.Contains(err.Error(), "Extensions[0] is Required, which the server does not enforce") || !slices.Contains(configFields(err), "A2A") {
		t.Fatalf("a required extension: %v", err)
	}
}

// TestRecordSettingsReachTheRecords: every field of a Record is the
// record's own, for A2A and MCP alike (OpenWOP interop.md §The facets).
func TestRecordSettingsReachTheRecords(t *testing.T) {
	record := func(version string) wopinterop.Record {
		return wopinterop.Record{
			Status: facets.StatusExperimental, Since: "2.0", Until: "2027-06-01", Witness: facets.WitnessClaimsCheck,
			Versions: []string{version}, Preferred: version, Minimum: version,
			RefreshedAt: refreshed, RefreshWindow: 30 * 24 * time.Hour,
		}
	}
	cfg := mcpConfig(validConfig(newStore(t)))
	cfg.A2A.Record, cfg.MCP.Record = record("1.0"), record(mcp.Revision)
	cfg.A2A.Record.Profiles = []string{"a2a-1.0"}
	recs := newHost(t, cfg).Records()
	lifecycle := `{"status":"experimental","since":"2.0","until":"2027-06-01","witness":"claims-check",`
	if want := lifecycle + `"versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-11-20","profiles":["a2a-1.0"],`; !strings.HasPrefix(string(recs["a2a"]), want) {
		t.Errorf("a2a record %s, want it to begin %s", recs["a2a"], want)
	}
	if want := lifecycle + `"revisions":["2026-07-28"],"preferredVersion":"2026-07-28","minimumRevision":"2026-07-28","refreshedAt":"2026-11-20","profiles":["mcp-2026-07-28"],`; !strings.HasPrefix(string(recs["mcp"]), want) {
		t.Errorf("mcp record %s, want it to begin %s", recs["mcp"], want)
	}
	// RefreshWindow is the record's: refreshed ten days ago is stale under
	// a window of five.
	cfg.MCP.Record.RefreshWindow = 5 * 24 * time.Hour
	if _, err := wopinterop.New(cfg); !errors.Is(err, facets.ErrInvalidFacet) || !strings.Contains(err.Error(), "mcp.refreshedAt") {
		t.Errorf("a five-day window: %v", err)
	}
}
