package a2a

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// countingSigner counts the cards it signs.
type countingSigner struct {
	CardSigner
	mu    sync.Mutex
	cards [][]byte
}

func (c *countingSigner) Sign(card []byte) (wire.AgentCardSignature, error) {
	c.mu.Lock()
	c.cards = append(c.cards, card)
	c.mu.Unlock()
	return c.CardSigner.Sign(card)
}

func (c *countingSigner) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cards)
}

// testCardSigner is an ES256 signer: its signatures are randomized, so
// two responses with equal bytes were signed once.
func testCardSigner(t testing.TB) (*cardsig.Signer, *cardsig.Verifier) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsig.NewSigner(key, cardsig.SignerOptions{KeyID: "host-card-key"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{s.PublicKey()}})
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func withCardSigner(s CardSigner) restEnvOption {
	return func(c *testConfig) { c.CardSigner = s; c.ExtendedCard = true }
}

// rpcResult is the raw result member of a JSON-RPC success response.
func rpcResult(t testing.TB, body []byte) []byte {
	t.Helper()
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Result == nil {
		t.Fatalf("not a JSON-RPC result (%v): %s", err, body)
	}
	return env.Result
}

// Every card served — public with and without A2A-Version, the caller's
// extended view and an agent's card over HTTP+JSON and JSON-RPC — carries
// exactly one signature that verifies over the bytes served (A2A 1.0
// §8.4; OpenWOP interop map, a2a.card signatures[]).
func TestServedCardsAreSigned(t *testing.T) {
	s, v := testCardSigner(t)
	e := newRESTEnv(t, withCardSigner(s))
	agent := e.routing.Derive("agent-ada")
	served := map[string][]byte{}
	rest := func(name string, c restCall) {
		res := e.do(t, c)
		if res.status != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", name, res.status, res.body)
		}
		served[name] = res.body
	}
	rest("public card", restCall{method: http.MethodGet, path: restEnvCardPath, noVersion: true})
	rest("public card, A2A-Version 1.0", restCall{method: http.MethodGet, path: restEnvCardPath})
	rest("extended card, HTTP+JSON", restCall{method: http.MethodGet, path: "/extendedAgentCard", key: "key-acme"})
	rest("extended card, HTTP+JSON, no A2A-Version", restCall{method: http.MethodGet, path: "/extendedAgentCard", key: "key-acme", noVersion: true})
	rest("extended card of globex, HTTP+JSON", restCall{method: http.MethodGet, path: "/extendedAgentCard", key: "key-globex"})
	rest("agent card, HTTP+JSON", restCall{method: http.MethodGet, path: "/" + agent + "/extendedAgentCard", key: "key-acme"})
	for name, params := range map[string]any{
		"extended card, JSON-RPC": nil,
		"agent card, JSON-RPC":    map[string]any{"tenant": agent},
	} {
		for _, version := range []string{"1.0", ""} {
			res := e.rawRPC(t, t.Context(), "key-acme", version, rpcBody(1, methodGetExtendedAgentCard, params))
			served[name+", A2A-Version "+version] = rpcResult(t, res.body)
		}
	}
	for name, body := range served {
		kid, err := v.Verify(body)
		if err != nil || kid != "host-card-key" {
			t.Errorf("%s: %q %v\n%s", name, kid, err, body)
			continue
		}
		var card wire.AgentCard
		if err := json.Unmarshal(body, &card); err != nil || len(card.Signatures) != 1 {
			t.Errorf("%s: %d signatures (%v)", name, len(card.Signatures), err)
		}
	}
	if !bytes.Equal(served["public card"], served["public card, A2A-Version 1.0"]) {
		t.Error("the public card differs with A2A-Version")
	}
	// The two bindings serve one agent card: one signature.
	var viaREST, viaRPC wire.AgentCard
	_ = json.Unmarshal(served["agent card, HTTP+JSON"], &viaREST)
	_ = json.Unmarshal(served["agent card, JSON-RPC, A2A-Version 1.0"], &viaRPC)
	if viaREST.Signatures[0].Signature != viaRPC.Signatures[0].Signature {
		t.Error("the agent card was signed once per binding")
	}
}

// A card is signed once per version, however often it is served: the
// public card once, whatever the requests and handlers; each extended
// view and agent card once. ETag and 304 work on the signed bytes.
func TestCardSignedOncePerVersion(t *testing.T) {
	inner, v := testCardSigner(t)
	s := &countingSigner{CardSigner: inner}
	e := newRESTEnv(t, withCardSigner(s))
	if s.count() != 1 {
		t.Fatalf("%d signatures after New and AgentCard, want the public card's", s.count())
	}
	first := cardFetch(t, e, "", nil, true)
	etag := first.header.Get("ETag")
	for range 3 {
		if again := cardFetch(t, e, "", nil, true); !bytes.Equal(again.body, first.body) || again.header.Get("ETag") != etag {
			t.Fatal("the public card changed between requests")
		}
	}
	// A second handler serves the same signed bytes: the signature is the
	// server's, not the handler's.
	w := httptest.NewRecorder()
	e.srv.AgentCard().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://internal.invalid:8080"+restEnvCardPath, nil))
	if !bytes.Equal(w.Body.Bytes(), first.body) {
		t.Fatal("a second AgentCard handler signed again")
	}
	notModified := cardFetch(t, e, "", map[string]string{"If-None-Match": etag}, true)
	if notModified.status != http.StatusNotModified || len(notModified.body) != 0 {
		t.Fatalf("If-None-Match: HTTP %d %s", notModified.status, notModified.body)
	}
	agent := e.routing.Derive("agent-ada")
	for range 3 {
		for _, c := range []restCall{
			{method: http.MethodGet, path: "/extendedAgentCard", key: "key-acme"},
			{method: http.MethodGet, path: "/extendedAgentCard", key: "key-initech"},
			{method: http.MethodGet, path: "/" + agent + "/extendedAgentCard", key: "key-acme"},
		} {
			res := e.do(t, c)
			if _, err := v.Verify(res.body); err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
		}
	}
	// acme may start every routed workflow: its view is the public card,
	// already signed. initech may start none: its view has no skills.
	if s.count() != 3 {
		t.Fatalf("%d signatures, want 3: the public card (acme's view too), initech's view, Ada's card", s.count())
	}
	// What was signed is each card without signatures.
	for _, card := range s.cards {
		if bytes.Contains(card, []byte(`"signatures"`)) {
			t.Errorf("signed a card with signatures: %s", card)
		}
	}
}

// a2a-go's card resolver reads a signed card, signature included.
func TestSignedCardResolvedByA2AGo(t *testing.T) {
	s, v := testCardSigner(t)
	e := newRESTEnv(t, withCardSigner(s))
	srv := httptest.NewServer(e.mux)
	defer srv.Close()
	card, err := agentcard.NewResolver(srv.Client()).Resolve(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "Test host" || len(card.Signatures) != 1 || card.Signatures[0].Protected == "" {
		t.Fatalf("resolved %+v", card)
	}
	served := cardFetch(t, e, "", nil, true)
	var want wire.AgentCard
	if err := json.Unmarshal(served.body, &want); err != nil {
		t.Fatal(err)
	}
	if card.Signatures[0].Signature != want.Signatures[0].Signature {
		t.Fatal("the resolver read another signature")
	}
	if _, err := v.Verify(served.body); err != nil {
		t.Fatal(err)
	}
}

// failingSigner fails or panics on every card.
type failingSigner struct{ panics bool }

func (f failingSigner) Sign([]byte) (wire.AgentCardSignature, error) {
	if f.panics {
		panic("signer secret sk-5ign3r")
	}
	return wire.AgentCardSignature{}, errors.New("kms unreachable")
}

// A signer that fails or panics serves no card unsigned: the public card
// answers 500, the extended and agent cards the internal error of their
// binding, each logged once without the panic's value.
func TestCardSignerFailure(t *testing.T) {
	const restInternal = `{"error":{"code":500,"status":"INTERNAL","message":"internal error","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`
	const rpcInternal = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`
	for name, signer := range map[string]failingSigner{"fails": {}, "panics": {panics: true}} {
		t.Run(name, func(t *testing.T) {
			logs := &logCapture{}
			e := newRESTEnv(t, withCardSigner(signer), func(c *testConfig) { c.Logger = slog.New(slog.NewJSONHandler(logs, nil)) })
			agent := e.routing.Derive("agent-ada")
			for _, c := range []restCall{
				{method: http.MethodGet, path: restEnvCardPath},
				{method: http.MethodGet, path: "/extendedAgentCard", key: "key-acme"},
				{method: http.MethodGet, path: "/" + agent + "/extendedAgentCard", key: "key-acme"},
			} {
				res := e.do(t, c)
				if res.status != http.StatusInternalServerError || string(res.body) != restInternal {
					t.Errorf("%s: HTTP %d %s", c.path, res.status, res.body)
				}
			}
			for _, params := range []any{nil, map[string]any{"tenant": agent}} {
				res := e.rawRPC(t, t.Context(), "key-acme", "1.0", rpcBody(1, methodGetExtendedAgentCard, params))
				if res.status != http.StatusOK || string(res.body) != rpcInternal {
					t.Errorf("JSON-RPC %v: HTTP %d %s", params, res.status, res.body)
				}
			}
			out := logs.String()
			if strings.Contains(out, "sk-5ign3r") {
				t.Error("the panic's value reached the log")
			}
			want := "kms unreachable"
			if signer.panics {
				want = "card signer"
			}
			// Once per card asked for: the public card when its handler
			// was built, then each extended card request.
			if n := strings.Count(out, want); n != 5 {
				t.Errorf("%q logged %d times, want 5:\n%s", want, n, out)
			}
		})
	}
}

// Without a CardSigner no card has a signatures member (the golden cards
// of card_public_test.go and card_extended_test.go are the bytes).
func TestCardsUnsignedWithoutSigner(t *testing.T) {
	e := newRESTEnv(t, func(c *testConfig) { c.ExtendedCard = true })
	for _, c := range []restCall{
		{method: http.MethodGet, path: restEnvCardPath},
		{method: http.MethodGet, path: "/extendedAgentCard", key: "key-acme"},
	} {
		if res := e.do(t, c); res.status != http.StatusOK || bytes.Contains(res.body, []byte("signatures")) {
			t.Errorf("%s: HTTP %d %s", c.path, res.status, res.body)
		}
	}
}

// BenchmarkExtendedCard is GetExtendedAgentCard over HTTP+JSON, without
// and with a CardSigner: what a signed card costs per request once its
// version is signed (encoding the card and hashing it to find the
// signature).
func BenchmarkExtendedCard(b *testing.B) {
	s, _ := testCardSigner(b)
	for name, opt := range map[string]restEnvOption{
		"unsigned": func(c *testConfig) { c.ExtendedCard = true },
		"signed":   withCardSigner(s),
	} {
		b.Run(name, func(b *testing.B) {
			e := newRESTEnv(b, opt)
			c := restCall{method: http.MethodGet, path: "/extendedAgentCard", key: "key-acme"}
			b.ReportAllocs()
			for b.Loop() {
				if res := e.do(b, c); res.status != http.StatusOK {
					b.Fatalf("HTTP %d", res.status)
				}
			}
		})
	}
}
