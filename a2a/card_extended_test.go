package a2a

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

func (e *restEnv) extendedCard(t testing.TB, key, tenant string) restResult {
	t.Helper()
	path := "/extendedAgentCard"
	if tenant != "" {
		path = "/" + tenant + path
	}
	return e.do(t, restCall{method: http.MethodGet, path: path, key: key})
}

func decodeCard(t testing.TB, res restResult) *wire.AgentCard {
	t.Helper()
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %q: %s", res.status, res.header.Get("Content-Type"), res.body)
	}
	card := new(wire.AgentCard)
	if err := json.Unmarshal(res.body, card); err != nil {
		t.Fatal(err)
	}
	return card
}

func skillIDs(card *wire.AgentCard) []string {
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	return ids
}

// The per-agent card's field table (OpenWOP RFC 0202 §C).
func TestPerAgentCardFields(t *testing.T) {
	e := newRESTEnv(t)
	host := decodeCard(t, cardFetch(t, e, "", nil, false))
	cases := []struct {
		agent, name, version, description string
		skills                            []string
	}{
		// Description empty: the label. Skills: the agent's workflows the
		// caller may start, in the agent's order; "not-installed" is
		// routed to the agent but startable by nobody.
		{"agent-ada", "Ada", "2.3.1", "Ada the approver", []string{memstore.FixtureApproval, memstore.FixtureNoop}},
		{"agent-bo", "Bo", "0.9.0", "Bo runs delays.", []string{memstore.FixtureDelay}},
	}
	for _, tc := range cases {
		t.Run(tc.agent, func(t *testing.T) {
			r := e.routing.Derive(tc.agent)
			res := e.extendedCard(t, "key-acme", r)
			card := decodeCard(t, res)
			if card.Name != tc.name || card.Version != tc.version || card.Description != tc.description {
				t.Errorf("identity %q %q %q", card.Name, card.Version, card.Description)
			}
			if !slices.Equal(skillIDs(card), tc.skills) {
				t.Errorf("skills %v, want %v", skillIDs(card), tc.skills)
			}
			for _, sk := range card.Skills {
				if sk.Name == "" || sk.Description == "" || sk.Tags == nil {
					t.Errorf("skill %+v lacks a required member", sk)
				}
			}
			// The host card's interfaces, each with tenant R.
			if len(card.SupportedInterfaces) != len(host.SupportedInterfaces) {
				t.Fatalf("%d interfaces, host has %d", len(card.SupportedInterfaces), len(host.SupportedInterfaces))
			}
			for i, in := range card.SupportedInterfaces {
				h := *host.SupportedInterfaces[i]
				h.Tenant = r
				if *in != h {
					t.Errorf("interface %d = %+v, want %+v", i, *in, h)
				}
			}
			if !reflect.DeepEqual(card.Capabilities, host.Capabilities) ||
				!reflect.DeepEqual(card.SecuritySchemes, host.SecuritySchemes) ||
				!reflect.DeepEqual(card.SecurityRequirements, host.SecurityRequirements) ||
				!slices.Equal(card.DefaultInputModes, host.DefaultInputModes) ||
				!slices.Equal(card.DefaultOutputModes, host.DefaultOutputModes) {
				t.Error("capabilities, security or default modes differ from the host card's")
			}
			// Nothing but the inventory entry's public fields: no other
			// agent's value, no host identity beyond the provider.
			if bytes.Contains(res.body, []byte("Test host")) || bytes.Contains(res.body, []byte("7.1.0")) {
				t.Errorf("the host card's identity leaked into the agent's: %s", res.body)
			}
			if n := bytes.Count(res.body, []byte(r)); n != len(host.SupportedInterfaces) {
				t.Errorf("R appears %d times, want once per interface", n)
			}
		})
	}
}

func TestPerAgentCardGolden(t *testing.T) {
	e := newRESTEnv(t)
	c := restCall{method: http.MethodGet, path: "/" + e.routing.Derive("agent-ada") + "/extendedAgentCard", key: "key-acme"}
	got := e.do(t, c)
	// The routing value is derived from a fixed secret, so it is stable.
	restGolden(t, "cards", "per-agent", restTranscript(c, got))
}

// Every routing value the caller may not use is answered exactly like a
// never-minted one: same status, same bytes (OpenWOP RFC 0202 §D.6; interop.md §Per-agent cards).
func TestPerAgentCardNonDisclosure(t *testing.T) {
	e := newRESTEnv(t)
	neverMinted := "AAAAAAAAAAAAAAAAAAAAAAAA"
	reference := e.extendedCard(t, "key-acme", neverMinted)
	restWantStatus(t, reference, http.StatusBadRequest, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED")
	restGolden(t, "cards", "per-agent-unknown", restTranscript(restCall{method: http.MethodGet, path: "/" + neverMinted + "/extendedAgentCard", key: "key-acme"}, reference))

	otherSecret, err := isolation.NewRoutingKeys(bytes.Repeat([]byte("x"), 32), "host-test-1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, key, r string }{
		{"another tenant's agent", "key-acme", e.routing.Derive("agent-gina")},
		{"agent without workflows", "key-acme", e.routing.Derive("agent-idle")},
		{"agent whose workflows nobody may start", "key-acme", e.routing.Derive("agent-ghost")},
		{"real value, tenant that installed nothing", "key-initech", e.routing.Derive("agent-ada")},
		{"malformed", "key-acme", "not%20a%20value"},
		{"too long", "key-acme", strings.Repeat("A", 200)},
		{"value minted under another secret", "key-acme", otherSecret.Derive("agent-ada")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := e.extendedCard(t, tc.key, tc.r)
			if got.status != reference.status || !bytes.Equal(got.body, reference.body) {
				t.Errorf("HTTP %d %s\nwant HTTP %d %s", got.status, got.body, reference.status, reference.body)
			}
		})
	}
	// And the same agent's value works for its own tenant.
	decodeCard(t, e.extendedCard(t, "key-globex", e.routing.Derive("agent-gina")))
}

// An unauthenticated request with a real R gets what one with a
// never-minted value gets (OpenWOP RFC 0202 §D.6): 401 from the credential check, and,
// on a host that serves anonymous callers, the never-minted -32007.
func TestPerAgentCardUnauthenticated(t *testing.T) {
	e := newRESTEnv(t)
	real := e.routing.Derive("agent-ada")
	never := "AAAAAAAAAAAAAAAAAAAAAAAA"
	a, b := e.extendedCard(t, "", real), e.extendedCard(t, "", never)
	restWantStatus(t, a, http.StatusUnauthorized, "UNAUTHENTICATED", "UNAUTHENTICATED")
	if a.status != b.status || !bytes.Equal(a.body, b.body) || a.header.Get("WWW-Authenticate") != b.header.Get("WWW-Authenticate") {
		t.Errorf("real R: %d %s; never-minted: %d %s", a.status, a.body, b.status, b.body)
	}

	// A resolver that admits anonymous callers, placing them in acme: the
	// inventory would show acme's agents, but an unauthenticated caller
	// still learns nothing.
	anon := newRESTEnv(t, func(c *testConfig) {
		c.Subjects = interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
			if sub, err := restBearerSubject(r); err == nil {
				return sub, nil
			}
			return interop.Subject{Tenant: "acme", Principal: "anonymous"}, nil
		})
	})
	a, b = anon.extendedCard(t, "", real), anon.extendedCard(t, "", never)
	restWantStatus(t, a, http.StatusBadRequest, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED")
	if !bytes.Equal(a.body, b.body) {
		t.Errorf("anonymous, real R: %s; never-minted: %s", a.body, b.body)
	}
	decodeCard(t, anon.extendedCard(t, "key-acme", real))
}

// Without a routing value: the caller's view of the host card when
// configured (OpenWOP interop map, a2a.operations), -32007 otherwise.
func TestHostExtendedCard(t *testing.T) {
	off := newRESTEnv(t)
	res := off.extendedCard(t, "key-acme", "")
	restWantStatus(t, res, http.StatusBadRequest, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED")
	restGolden(t, "cards", "extended-not-configured", restTranscript(restCall{method: http.MethodGet, path: "/extendedAgentCard", key: "key-acme"}, res))

	on := newRESTEnv(t, func(c *testConfig) {
		c.ExtendedCard = true
		c.Routed = append(c.Routed, interop.Workflow{ID: "only-on-paper", Name: "Routed but not installed"})
	})
	public := decodeCard(t, cardFetch(t, on, "", nil, false))
	if !slices.Equal(skillIDs(public), []string{memstore.FixtureApproval, "only-on-paper"}) {
		t.Fatalf("public skills %v", skillIDs(public))
	}
	cases := []struct {
		key    string
		skills []string
	}{
		{"key-acme", []string{memstore.FixtureApproval}},
		{"key-initech", nil}, // may start nothing
	}
	for _, tc := range cases {
		card := decodeCard(t, on.extendedCard(t, tc.key, ""))
		if !slices.Equal(skillIDs(card), tc.skills) || card.Skills == nil {
			t.Errorf("%s: skills %v, want %v (never null)", tc.key, skillIDs(card), tc.skills)
		}
		if card.Name != public.Name || !reflect.DeepEqual(card.SupportedInterfaces, public.SupportedInterfaces) ||
			!reflect.DeepEqual(card.Capabilities, public.Capabilities) {
			t.Errorf("%s: the extended host card differs from the public one beyond skills", tc.key)
		}
	}
	// A routing value still selects an agent, also with ExtendedCard.
	if card := decodeCard(t, on.extendedCard(t, "key-acme", on.routing.Derive("agent-bo"))); card.Name != "Bo" {
		t.Errorf("per-agent card with ExtendedCard on: %q", card.Name)
	}
}

// During a secret rotation a value minted under the previous secret still
// resolves, and the card it returns names the current value.
func TestPerAgentCardNamesCurrentValue(t *testing.T) {
	oldSecret, newSecret := bytes.Repeat([]byte("o"), 32), bytes.Repeat([]byte("n"), 32)
	old, err := isolation.NewRoutingKeys(oldSecret, "host-test-1")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := isolation.NewRoutingKeys(newSecret, "host-test-1", isolation.WithPreviousSecret(oldSecret))
	if err != nil {
		t.Fatal(err)
	}
	e := newRESTEnv(t, func(c *testConfig) { c.Routing = rotated })
	got := decodeCard(t, e.extendedCard(t, "key-acme", old.Derive("agent-ada")))
	want := rotated.Derive("agent-ada")
	for _, in := range got.SupportedInterfaces {
		if in.Tenant != want {
			t.Fatalf("tenant %q, want the current value %q", in.Tenant, want)
		}
	}
}
