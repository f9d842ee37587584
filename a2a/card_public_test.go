package a2a

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/negotiate"
)

func cardFetch(t testing.TB, e *restEnv, key string, header map[string]string, noVersion bool) restResult {
	t.Helper()
	return e.do(t, restCall{method: http.MethodGet, path: restEnvCardPath, key: key, header: header, noVersion: noVersion})
}

// cardWithVersions offers several versions, preferred first in neither the
// offered order nor the sort order, so ordering bugs show.
func cardWithVersions(offered []string, preferred, floor string, downgrade bool) restEnvOption {
	return func(c *testConfig) {
		p, err := negotiate.NewPolicy(negotiate.Config{
			Protocol: negotiate.A2A, Offered: offered, Preferred: preferred, Floor: floor,
			AllowDowngrade: downgrade, Now: func() time.Time { return restNow },
		})
		if err != nil {
			panic(err)
		}
		c.Policy = p
	}
}

func TestPublicCardInvariants(t *testing.T) {
	e := newRESTEnv(t, cardWithVersions([]string{"1.0", "1.2", "1.1"}, "1.1", "1.0", false))
	res := cardFetch(t, e, "", nil, true)
	// Served both ways, the same bytes (OpenWOP interop.md §Legacy profiles are absent, §Per-agent cards).
	if with := cardFetch(t, e, "", map[string]string{"A2A-Version": "1.1"}, true); !bytes.Equal(with.body, res.body) || with.status != res.status {
		t.Fatalf("the card with A2A-Version differs: %s", with.body)
	}
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %q: %s", res.status, res.header.Get("Content-Type"), res.body)
	}
	var card wire.AgentCard
	if err := json.Unmarshal(res.body, &card); err != nil {
		t.Fatal(err)
	}

	// Interfaces: routed bindings only, URLs from the configuration (the
	// request went to http://internal.invalid:8080), versions = offered,
	// preferred first, one entry per version per binding (OpenWOP interop map, a2a.card).
	var got []string
	versions := map[string]bool{}
	for _, in := range card.SupportedInterfaces {
		got = append(got, string(in.ProtocolBinding)+"@"+string(in.ProtocolVersion)+"="+in.URL+"/"+in.Tenant)
		versions[string(in.ProtocolVersion)] = true
	}
	want := []string{
		"JSONRPC@1.1=" + restEnvJSONRPCURL + "/", "HTTP+JSON@1.1=" + restEnvHTTPJSONURL + "/",
		"JSONRPC@1.0=" + restEnvJSONRPCURL + "/", "HTTP+JSON@1.0=" + restEnvHTTPJSONURL + "/",
		"JSONRPC@1.2=" + restEnvJSONRPCURL + "/", "HTTP+JSON@1.2=" + restEnvHTTPJSONURL + "/",
	}
	if !slices.Equal(got, want) {
		t.Errorf("interfaces\n got %q\nwant %q", got, want)
	}
	if len(versions) != 3 || !versions["1.0"] || !versions["1.1"] || !versions["1.2"] {
		t.Errorf("interface versions %v, want exactly the offered set", versions)
	}
	if bytes.Contains(res.body, []byte("internal.invalid")) {
		t.Error("the card names the request's Host")
	}

	// Skills: exactly the routed workflows, with tags (OpenWOP interop map, a2a.card).
	if len(card.Skills) != 1 || card.Skills[0].ID != memstore.FixtureApproval ||
		card.Skills[0].Name != "Conformance approval" || card.Skills[0].Description == "" ||
		!slices.Equal(card.Skills[0].Tags, []string{"conformance"}) {
		t.Errorf("skills %+v", card.Skills)
	}
	// Capabilities = facets; extendedAgentCard because per-agent cards are
	// served (OpenWOP interop map, a2a.card).
	if !reflect.DeepEqual(card.Capabilities, wire.AgentCapabilities{Streaming: true, ExtendedAgentCard: true}) {
		t.Errorf("capabilities %+v", card.Capabilities)
	}
	// Configured identity and security, default modes (OpenWOP interop map, a2a.card).
	if card.Name != "Test host" || card.Version != "7.1.0" || card.Description != "A host for the binding tests." ||
		card.Provider == nil || card.Provider.Org != "Example Org" || card.DocumentationURL != "https://example.test/docs" {
		t.Errorf("identity %+v", card)
	}
	if s, ok := card.SecuritySchemes["bearer"].(wire.HTTPAuthSecurityScheme); !ok || s.Scheme != "Bearer" || len(card.SecurityRequirements) != 1 {
		t.Errorf("security %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
	}
	if !slices.Equal(card.DefaultInputModes, []string{"text/plain", "application/json"}) ||
		!slices.Equal(card.DefaultOutputModes, []string{"text/plain", "application/json"}) {
		t.Errorf("default modes %v %v", card.DefaultInputModes, card.DefaultOutputModes)
	}

	// No routing value of any agent of any tenant, in any form (OpenWOP interop.md §Per-agent cards).
	for _, tenant := range []string{"acme", "globex"} {
		agents, err := e.store.ListAgents(t.Context(), interop.Subject{Tenant: tenant})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range agents {
			r := e.routing.Derive(a.ID)
			if bytes.Contains(res.body, []byte(r)) {
				t.Errorf("the public card contains the routing value of %s", a.ID)
			}
		}
	}
	if bytes.Contains(res.body, []byte(`"tenant"`)) {
		t.Error("the public card has a tenant member")
	}
}

// Required members are present as arrays even when empty, never null or
// absent; optional ones are absent rather than empty.
func TestPublicCardRequiredArrays(t *testing.T) {
	e := newRESTEnv(t, func(c *testConfig) {
		c.Routed = []interop.Workflow{{ID: "bare"}} // no name, description or tags
		c.HTTPJSONURL = ""
		c.Inventory, c.Routing = nil, nil
		c.Card = CardConfig{Name: "Bare"}
	})
	res := cardFetch(t, e, "", nil, false)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(res.body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"supportedInterfaces", "skills", "defaultInputModes", "defaultOutputModes"} {
		if v := raw[k]; len(v) == 0 || v[0] != '[' {
			t.Errorf("%s = %s, want an array", k, v)
		}
	}
	for _, k := range []string{"securitySchemes", "securityRequirements", "provider", "signatures"} {
		if _, ok := raw[k]; ok {
			t.Errorf("%s present on a card that configures none", k)
		}
	}
	var card wire.AgentCard
	if err := json.Unmarshal(res.body, &card); err != nil {
		t.Fatal(err)
	}
	if len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].ProtocolBinding != wire.TransportProtocolJSONRPC {
		t.Errorf("without HTTPJSONURL only JSON-RPC is routed: %+v", card.SupportedInterfaces)
	}
	sk := card.Skills[0]
	if sk.ID != "bare" || sk.Name != "bare" || sk.Description != "bare" || sk.Tags == nil {
		t.Errorf("skill defaults %+v", sk)
	}
	if !bytes.Contains(res.body, []byte(`"tags":[]`)) {
		t.Errorf("tags not an empty array: %s", res.body)
	}
	if card.Capabilities.ExtendedAgentCard {
		t.Error("extendedAgentCard claimed without ExtendedCard or per-agent cards")
	}
}

func TestPublicCardExtendedCapabilityFollowsConfig(t *testing.T) {
	cases := []struct {
		name   string
		opt    restEnvOption
		want   bool
		facet  caps
		agents bool
	}{
		{"per-agent cards", func(c *testConfig) {}, true, caps{Streaming: true, DurableTasks: true}, true},
		{"host extended card only", func(c *testConfig) { c.Inventory, c.Routing, c.ExtendedCard = nil, nil, true }, true, caps{Streaming: true, DurableTasks: true}, false},
		{"neither", func(c *testConfig) { c.Inventory, c.Routing = nil, nil }, false, caps{Streaming: true, DurableTasks: true}, false},
		{"no streaming", func(c *testConfig) { c.setCaps(caps{}) }, true, caps{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newRESTEnv(t, tc.opt)
			var card wire.AgentCard
			if err := json.Unmarshal(cardFetch(t, e, "", nil, false).body, &card); err != nil {
				t.Fatal(err)
			}
			want := wire.AgentCapabilities{Streaming: tc.facet.Streaming, ExtendedAgentCard: tc.want}
			if !reflect.DeepEqual(card.Capabilities, want) {
				t.Errorf("capabilities %+v, want %+v", card.Capabilities, want)
			}
			// What the server reports serving for the facet check is what
			// the card claims.
			served := facets.ServedA2A{
				Versions: []string{"1.0"}, JSONRPC: true, HTTPJSON: true,
				Streaming: tc.facet.Streaming, DurableTasks: tc.facet.DurableTasks,
				ExtendedCard: tc.want, AgentCards: tc.agents,
			}
			if got := e.srv.Served(); !reflect.DeepEqual(got, served) {
				t.Errorf("Served() = %+v, want %+v", got, served)
			}
		})
	}
}

func TestPublicCardGolden(t *testing.T) {
	e := newRESTEnv(t)
	c := restCall{method: http.MethodGet, path: restEnvCardPath}
	restGolden(t, "cards", "public", restTranscript(c, e.do(t, c)))
	c = restCall{method: http.MethodGet, path: restEnvCardPath, header: map[string]string{"A2A-Version": "9.9"}}
	restGolden(t, "cards", "version-not-supported", restTranscript(c, e.do(t, c)))
	c = restCall{method: http.MethodPost, path: restEnvCardPath, body: "{}"}
	restGolden(t, "cards", "wrong-method", restTranscript(c, e.do(t, c)))
}

func TestPublicCardETag(t *testing.T) {
	e := newRESTEnv(t)
	first := cardFetch(t, e, "", nil, false)
	etag := first.header.Get("ETag")
	if first.status != http.StatusOK || len(etag) < 3 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		t.Fatalf("HTTP %d, ETag %q: want a strong ETag", first.status, etag)
	}
	if cc := first.header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control %q", cc)
	}
	if v := first.header.Get("Vary"); v != "A2A-Version" {
		t.Errorf("Vary %q", v)
	}
	again := cardFetch(t, e, "key-acme", nil, false)
	if again.header.Get("ETag") != etag || !bytes.Equal(again.body, first.body) {
		t.Error("the card differs between requests (or by caller)")
	}
	cases := []struct {
		ifNoneMatch string
		want        int
	}{
		{etag, http.StatusNotModified},
		{"W/" + etag, http.StatusNotModified},
		{`"other", ` + etag, http.StatusNotModified},
		{"*", http.StatusNotModified},
		{`"other"`, http.StatusOK},
		{strings.Trim(etag, `"`), http.StatusOK},
	}
	for _, tc := range cases {
		res := cardFetch(t, e, "", map[string]string{"If-None-Match": tc.ifNoneMatch}, false)
		if res.status != tc.want {
			t.Errorf("If-None-Match %s: HTTP %d, want %d", tc.ifNoneMatch, res.status, tc.want)
		}
		if tc.want == http.StatusNotModified && (len(res.body) != 0 || res.header.Get("ETag") != etag) {
			t.Errorf("304 with body %q, ETag %q", res.body, res.header.Get("ETag"))
		}
	}
	head := e.do(t, restCall{method: http.MethodHead, path: restEnvCardPath})
	if head.status != http.StatusOK || len(head.body) != 0 || head.header.Get("ETag") != etag ||
		head.header.Get("Content-Length") != first.header.Get("Content-Length") {
		t.Errorf("HEAD: HTTP %d, %d body bytes, ETag %q", head.status, len(head.body), head.header.Get("ETag"))
	}
}

// cardDecision is the negotiation.decided payload of a card fetch.
type cardDecision struct {
	Protocol  string `json:"protocol"`
	Outcome   string `json:"outcome"`
	Version   string `json:"version"`
	Requested string `json:"requested"`
	Reason    string `json:"reason"`
}

func cardLastDecision(t testing.TB, e *restEnv, tenant string) (cardDecision, int) {
	t.Helper()
	evs := e.store.DurableHostEvents(tenant)
	if len(evs) == 0 {
		t.Fatalf("no host event recorded for tenant %q", tenant)
	}
	ev := evs[len(evs)-1]
	if ev.Type != negotiate.EventType || ev.Delivery != interop.DeliveryDurable {
		t.Fatalf("host event %s/%s", ev.Type, ev.Delivery)
	}
	var d cardDecision
	if err := json.Unmarshal(ev.Payload, &d); err != nil {
		t.Fatal(err)
	}
	return d, len(evs)
}

// Version selection (OpenWOP interop.md §Negotiation is a protocol, §Legacy profiles are absent) and its negotiation.decided record
// (OpenWOP interop.md §The audit event; RFC 0242 §B) for every outcome.
func TestPublicCardVersionSelection(t *testing.T) {
	cases := []struct {
		name       string
		downgrade  bool
		key        string
		header     string
		query      string
		wantStatus int
		want       cardDecision
	}{
		{"absent", false, "", "", "", 200, cardDecision{"a2a", "accepted", "1.1", "", "ok"}},
		{"preferred", false, "", "1.1", "", 200, cardDecision{"a2a", "accepted", "1.1", "1.1", "ok"}},
		{"patch ignored", false, "", "1.1.7", "", 200, cardDecision{"a2a", "accepted", "1.1", "1.1", "ok"}},
		{"query parameter", false, "", "", "1.1", 200, cardDecision{"a2a", "accepted", "1.1", "1.1", "ok"}},
		{"newer offered", false, "", "1.2", "", 200, cardDecision{"a2a", "accepted", "1.2", "1.2", "ok"}},
		{"unauthenticated lower gets preferred", true, "", "1.0", "", 200, cardDecision{"a2a", "accepted", "1.1", "1.0", "unauthenticated"}},
		{"authenticated downgrade", true, "key-acme", "1.0", "", 200, cardDecision{"a2a", "accepted", "1.0", "1.0", "ok"}},
		{"downgrade not allowed", false, "key-acme", "1.0", "", 200, cardDecision{"a2a", "accepted", "1.1", "1.0", "ok"}},
		{"not offered", false, "key-acme", "9.9", "", 400, cardDecision{"a2a", "refused", "", "9.9", "unsupported"}},
		{"below floor", false, "", "0.3", "", 400, cardDecision{"a2a", "refused", "", "0.3", "below-floor"}},
		{"malformed", false, "", "one", "", 400, cardDecision{"a2a", "refused", "", "", "unsupported"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newRESTEnv(t, cardWithVersions([]string{"1.0", "1.1", "1.2"}, "1.1", "1.0", tc.downgrade))
			c := restCall{method: http.MethodGet, path: restEnvCardPath, key: tc.key, noVersion: true}
			if tc.header != "" {
				c.header = map[string]string{"A2A-Version": tc.header}
			}
			if tc.query != "" {
				c.path += "?A2A-Version=" + tc.query
			}
			res := e.do(t, c)
			tenant := ""
			if tc.key != "" {
				tenant = "acme"
			}
			d, n := cardLastDecision(t, e, tenant)
			if n != 1 {
				t.Errorf("%d records, want exactly one", n)
			}
			if d != tc.want {
				t.Errorf("record %+v, want %+v", d, tc.want)
			}
			if tc.wantStatus == 200 {
				if res.status != 200 {
					t.Fatalf("HTTP %d: %s", res.status, res.body)
				}
				var card wire.AgentCard
				if err := json.Unmarshal(res.body, &card); err != nil || len(card.SupportedInterfaces) != 6 {
					t.Fatalf("not the card: %s", res.body)
				}
				return
			}
			st := restWantStatus(t, res, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
			var info restErrorInfoJSON
			if err := json.Unmarshal(st.Error.Details[0], &info); err != nil {
				t.Fatal(err)
			}
			if info.Metadata["supportedVersions"] != "1.0,1.1,1.2" || len(info.Metadata) != 1 {
				t.Errorf("metadata %v", info.Metadata)
			}
			if res.header.Get("ETag") != "" {
				t.Error("a refusal carries the card's ETag")
			}
		})
	}
}

// A resolver failure never makes the public card unavailable: the caller
// is served as anonymous.
func TestPublicCardIgnoresResolverFailure(t *testing.T) {
	e := newRESTEnv(t, func(c *testConfig) {
		c.Subjects = interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{}, cardErrBoom
		})
	})
	res := cardFetch(t, e, "key-acme", nil, false)
	if res.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", res.status, res.body)
	}
	if d, _ := cardLastDecision(t, e, ""); d.Outcome != "accepted" {
		t.Errorf("record %+v", d)
	}
}

var cardErrBoom = cardErrString("resolver exploded")

type cardErrString string

func (e cardErrString) Error() string { return string(e) }
