package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

const runID = "tenant-a/run-1"

// wantNothingSent fails when any request reached the agent's interface.
func wantNothingSent(t *testing.T, a *agent) {
	t.Helper()
	if got := a.requests(); len(got) != 0 {
		t.Fatalf("%d requests reached the agent's interface, want none: %+v", len(got), got[0].path)
	}
}

func TestConnectAccepted(t *testing.T) {
	a := newAgent(t)
	a.serveCard(t, testCard(a))
	f := newFixture(t, a)
	conn, err := f.client.Connect(context.Background(), runID, "summarizer")
	if err != nil {
		t.Fatal(err)
	}
	if conn.RunID != runID || conn.Version != "1.0" || conn.Tenant != "" || !conn.Streaming ||
		conn.Interface == nil || conn.Interface.URL != a.rpcURL() || conn.Card.Name != "Summarizer" || conn.remote == nil || conn.deps == nil {
		t.Fatalf("conn %+v", conn)
	}
	if !reflect.DeepEqual(conn.Admission.Limits, (Limits{}).withDefaults()) {
		t.Fatalf("limits %+v, want the defaults filled", conn.Admission.Limits)
	}
	r, raw := f.sink.onlyRecord(t, runID)
	want := record{Protocol: "a2a", Outcome: "accepted", At: "2026-05-01T12:00:00Z", Version: "1.0", Floor: "1.0", Requested: "1.0", Reason: "ok",
		PeerDigest: sha(a.srv.URL)}
	if r != want {
		t.Fatalf("record %+v\nwant   %+v", r, want)
	}
	host := strings.TrimPrefix(a.srv.URL, "http://")
	if strings.Contains(string(raw), host) || strings.Contains(string(raw), "127.0.0.1") {
		t.Fatalf("the record names the peer in clear: %s", raw)
	}
	wantNothingSent(t, a)
}

// TestConnectPrefersJSONRPC: of the interfaces of the negotiated version
// JSON-RPC is chosen, whatever the card order; another version's interface
// is never chosen.
func TestConnectPrefersJSONRPC(t *testing.T) {
	a := newAgent(t)
	card := testCard(a)
	card.SupportedInterfaces = []*wire.AgentInterface{
		{URL: a.srv.URL + "/grpc", ProtocolBinding: wire.TransportProtocolGRPC, ProtocolVersion: "1.0"},
		{URL: a.srv.URL + "/rest", ProtocolBinding: wire.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
		{URL: a.srv.URL + "/rpc03", ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
		{URL: a.srv.URL + "/rpc", ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "1.0", Tenant: "t-9"},
	}
	a.serveCard(t, card)
	f := newFixture(t, a)
	conn, err := f.client.Connect(context.Background(), runID, "summarizer")
	if err != nil {
		t.Fatal(err)
	}
	if conn.Interface.URL != a.srv.URL+"/rpc" || conn.Tenant != "t-9" {
		t.Fatalf("chose %+v", conn.Interface)
	}
	// Only HTTP+JSON: that one.
	card.SupportedInterfaces = card.SupportedInterfaces[:3]
	a.serveCard(t, card)
	conn, err = f.client.Connect(context.Background(), runID, "summarizer")
	if err != nil {
		t.Fatal(err)
	}
	if conn.Interface.URL != a.srv.URL+"/rest" {
		t.Fatalf("chose %+v", conn.Interface)
	}
}

func TestConnectUnknownAlias(t *testing.T) {
	a := newAgent(t)
	a.serveCard(t, testCard(a))
	f := newFixture(t, a)
	_, err := f.client.Connect(context.Background(), runID, a.cardURL())
	if !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("%v, want ErrUnknownAgent", err)
	}
	if got := a.all(); len(got) != 0 {
		t.Fatalf("an unknown alias reached the network: %d requests", len(got))
	}
	if evs := f.sink.events(runID); len(evs) != 0 {
		t.Fatalf("records %v for an unknown alias", evs)
	}
	wantProjection(t, err, http.StatusBadRequest, outbound.CodeValidation, map[string]any{"protocol": "a2a", "runId": runID})
}

// wantProjection checks the whole OpenWOP error ProjectError makes of err.
func wantProjection(t *testing.T, err error, status int, code string, details map[string]any) *outbound.Error {
	t.Helper()
	e := ProjectError(runID, err)
	if e == nil || e.Status != status || e.Code != code || !reflect.DeepEqual(e.Details, details) || e.Message == "" {
		t.Fatalf("projection %+v, want %d %s %v", e, status, code, details)
	}
	if !errors.Is(e, err) && e.Err != err {
		t.Fatalf("the projection lost its cause")
	}
	return e
}

func TestConnectCardSizeCap(t *testing.T) {
	a := newAgent(t)
	f := newFixture(t, a, withLimits(Limits{MaxCardBytes: 4096}))
	card := testCard(a)
	base, _ := json.Marshal(card)
	// Exactly the limit passes (padded with JSON whitespace).
	a.serveRawCard(append(base, []byte(strings.Repeat(" ", 4096-len(base)))...))
	if _, err := f.client.Connect(context.Background(), runID, "summarizer"); err != nil {
		t.Fatalf("a card of exactly MaxCardBytes: %v", err)
	}
	// One byte more does not.
	a.serveRawCard(append(base, []byte(strings.Repeat(" ", 4097-len(base)))...))
	_, err := f.client.Connect(context.Background(), runID+"x", "summarizer")
	var ce *CardError
	if !errors.As(err, &ce) || !errors.Is(err, egress.ErrTooLarge) || ce.Alias != "summarizer" {
		t.Fatalf("%v, want a *CardError over the size limit", err)
	}
	if evs := f.sink.events(runID + "x"); len(evs) != 0 {
		t.Fatal("a refused card was negotiated")
	}
	wantProjection(t, err, http.StatusBadRequest, outbound.CodeValidation, map[string]any{"protocol": "a2a", "runId": runID})
}

func TestConnectMalformedCard(t *testing.T) {
	a := newAgent(t)
	f := newFixture(t, a)
	for name, body := range map[string]string{
		"not JSON":          `{"name":`,
		"no interfaces":     `{"name":"x","skills":[]}`,
		"interface no url":  `{"name":"x","skills":[],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		"no skills":         `{"name":"x","supportedInterfaces":[{"url":"` + a.rpcURL() + `","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		"folded member":     `{"name":"x","Skills":[],"supportedInterfaces":[{"url":"` + a.rpcURL() + `","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		"duplicate member":  `{"name":"x","name":"y","skills":[],"supportedInterfaces":[{"url":"` + a.rpcURL() + `","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		"two skills one id": `{"name":"x","skills":[{"id":"a"},{"id":"a"}],"supportedInterfaces":[{"url":"` + a.rpcURL() + `","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		"wrong type":        `{"name":7,"skills":[],"supportedInterfaces":[]}`,
	} {
		a.serveRawCard([]byte(body))
		_, err := f.client.Connect(context.Background(), runID, "summarizer")
		var ce *CardError
		if !errors.As(err, &ce) || ce.Err != nil || !strings.Contains(ce.Problem, "malformed") {
			t.Errorf("%s: %v, want a malformed *CardError", name, err)
		}
	}
	if evs := f.sink.events(runID); len(evs) != 0 {
		t.Fatal("a malformed card was negotiated")
	}
	wantNothingSent(t, a)
}

// fakeVerifier is a CardVerifier that answers err and records its calls.
type fakeVerifier struct {
	err   error
	calls int
	raw   []byte
}

func (v *fakeVerifier) VerifyCard(_ context.Context, raw []byte, card *wire.AgentCard) error {
	v.calls++
	v.raw = raw
	if card == nil {
		return errors.New("no card")
	}
	return v.err
}

func TestConnectSignature(t *testing.T) {
	signed := func(a *agent) *wire.AgentCard {
		c := testCard(a)
		c.Signatures = []wire.AgentCardSignature{{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "c2ln"}}
		return c
	}
	bad := errors.New("signature does not verify")
	for _, tc := range []struct {
		name       string
		require    bool
		keys       bool
		verifyErr  error
		signed     bool
		wantUnsign bool
		wantErr    bool
		wantCalls  int
	}{
		{name: "required, unsigned", require: true, keys: true, wantErr: true, wantUnsign: true},
		{name: "required, verifier refuses", require: true, keys: true, signed: true, verifyErr: bad, wantErr: true, wantCalls: 1},
		{name: "required, verified", require: true, keys: true, signed: true, wantCalls: 1},
		{name: "not required, signed, keys refuse", keys: true, signed: true, verifyErr: bad, wantErr: true, wantCalls: 1},
		{name: "not required, signed, no keys", signed: true},
		{name: "not required, unsigned, keys", keys: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t)
			card := testCard(a)
			if tc.signed {
				card = signed(a)
			}
			a.serveCard(t, card)
			v := &fakeVerifier{err: tc.verifyErr}
			f := newFixture(t, a, withAdmission(func(ad *Admission) {
				ad.RequireSignature = tc.require
				if tc.keys {
					ad.CardKeys = v
				}
			}))
			_, err := f.client.Connect(context.Background(), runID, "summarizer")
			if v.calls != tc.wantCalls {
				t.Fatalf("verifier called %d times, want %d", v.calls, tc.wantCalls)
			}
			if tc.wantCalls > 0 && !strings.Contains(string(v.raw), `"signatures"`) {
				t.Fatal("the verifier did not get the card's bytes as fetched")
			}
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *SignatureError
			if !errors.As(err, &se) || se.Unsigned != tc.wantUnsign || se.Alias != "summarizer" {
				t.Fatalf("%v, want a *SignatureError (unsigned %v)", err, tc.wantUnsign)
			}
			if tc.verifyErr != nil && !errors.Is(err, tc.verifyErr) {
				t.Fatal("the verifier's error is lost")
			}
			if evs := f.sink.events(runID); len(evs) != 0 {
				t.Fatal("a refused card was negotiated")
			}
			wantNothingSent(t, a)
			wantProjection(t, err, http.StatusForbidden, outbound.CodeForbidden, map[string]any{"protocol": "a2a", "runId": runID})
		})
	}
}

func TestConnectReadmission(t *testing.T) {
	a := newAgent(t)
	f := newFixture(t, a)
	// The skill's description changed since it was admitted.
	changed := testCard(a)
	changed.Skills[0].Description += " Now also translates."
	a.serveCard(t, changed)
	_, err := f.client.Connect(context.Background(), runID, "summarizer")
	var re *ReadmissionError
	if !errors.As(err, &re) || re.Alias != "summarizer" || re.Skill != "summarize" || re.Missing {
		t.Fatalf("%v, want a *ReadmissionError for the changed skill", err)
	}
	if !strings.Contains(err.Error(), `"summarizer"`) || !strings.Contains(err.Error(), `"summarize"`) {
		t.Fatalf("%q does not name the alias and the skill", err)
	}
	// The skill is gone.
	gone := testCard(a)
	gone.Skills = []wire.AgentSkill{{ID: "translate", Name: "Translate", Tags: []string{}}}
	a.serveCard(t, gone)
	_, err = f.client.Connect(context.Background(), runID, "summarizer")
	if !errors.As(err, &re) || !re.Missing || re.Skill != "summarize" {
		t.Fatalf("%v, want a *ReadmissionError for the missing skill", err)
	}
	if evs := f.sink.events(runID); len(evs) != 0 {
		t.Fatal("a card needing re-admission was negotiated")
	}
	wantNothingSent(t, a)
	wantProjection(t, err, http.StatusForbidden, outbound.CodeForbidden, map[string]any{"protocol": "a2a", "runId": runID})
	// The same skill served with other spacing and member order is the
	// same skill.
	a.serveRawCard([]byte(`{"supportedInterfaces":[{"protocolVersion":"1.0","url":"` + a.rpcURL() + `","protocolBinding":"JSONRPC"}],
	  "skills":[{"outputModes":["text/plain","application/json"],"name":"Summarize","id":"summarize",
	  "description":"Summarizes a document \u003cin\u003e one paragraph \u0026 nothing more.","tags":["text","r\u00e9sum\u00e9"],
	  "examples":["Summarize this"],"inputModes":["text/plain"]}],"name":"Summarizer","capabilities":{}}`))
	if _, err := f.client.Connect(context.Background(), runID+"b", "summarizer"); err != nil {
		t.Fatalf("the same skill respelled: %v", err)
	}
}

// TestConnectRefusedBelowFloor: a peer offering only 0.3 — in a 1.0 card
// or in the 0.3 card shape — is refused below-floor, with exactly one
// record on the run's log, the OpenWOP error naming the run, and not one
// request to the peer's interface.
func TestConnectRefusedBelowFloor(t *testing.T) {
	for name, serve := range map[string]func(a *agent){
		"1.0 card, 0.3 interfaces": func(a *agent) {
			c := testCard(a, "0.3")
			a.serveCard(t, c)
		},
		"0.3 card": func(a *agent) {
			a.serveRawCard([]byte(`{"name":"Summarizer","protocolVersion":"0.3.0","url":"` + a.rpcURL() + `","preferredTransport":"JSONRPC",
			  "additionalInterfaces":[{"url":"` + a.rpcURL() + `","transport":"JSONRPC"}],"capabilities":{"streaming":true},
			  "securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}},"security":[{"bearer":[]}],
			  "skills":[{"id":"summarize","name":"Summarize","description":"Summarizes a document <in> one paragraph & nothing more.",
			  "tags":["text","résumé"],"examples":["Summarize this"],"inputModes":["text/plain"],"outputModes":["text/plain","application/json"]}]}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			a := newAgent(t)
			serve(a)
			a.setRPC(rpcReply(completedTask))
			f := newFixture(t, a, withCredential("Bearer", "tok"))
			_, err := f.client.Connect(context.Background(), runID, "summarizer")
			var oe *outbound.Error
			if !errors.As(err, &oe) {
				t.Fatalf("%v, want an *outbound.Error", err)
			}
			want := outbound.VersionUnsupported("a2a", runID, nil)
			if oe.Status != http.StatusBadRequest || oe.Code != outbound.CodeVersionUnsupported || oe.Message != want.Message ||
				!reflect.DeepEqual(oe.Details, map[string]any{"protocol": "a2a", "runId": runID}) {
				t.Fatalf("error %+v", oe)
			}
			var ne *NegotiationError
			if !errors.As(err, &ne) || ne.Reason != "below-floor" || !errors.Is(err, wire.ErrVersionNotSupported) {
				t.Fatalf("cause %v", oe.Err)
			}
			if p := ProjectError(runID, err); p != oe {
				t.Fatal("ProjectError changed an outbound error")
			}
			r, raw := f.sink.onlyRecord(t, runID)
			if r.Outcome != "refused" || r.Reason != "below-floor" || r.Version != "" || r.Requested != "" || r.Floor != "1.0" || r.PeerDigest != sha(a.srv.URL) {
				t.Fatalf("record %s", raw)
			}
			wantNothingSent(t, a)
		})
	}
}

func TestConnectNegotiation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    []string
		downgrade bool
		offers    []wire.ProtocolVersion
		cred      bool
		outcome   string
		version   string
		requested string
		reason    string
	}{
		{name: "preferred offered", policy: []string{"1.1", "1.0"}, offers: []wire.ProtocolVersion{"1.0", "1.1"}, outcome: "accepted", version: "1.1", requested: "1.1", reason: "ok"},
		{name: "patch ignored", offers: []wire.ProtocolVersion{"1.0.3"}, outcome: "accepted", version: "1.0", requested: "1.0", reason: "ok"},
		{name: "downgrade, authenticated", policy: []string{"1.1", "1.0"}, downgrade: true, offers: []wire.ProtocolVersion{"1.0"}, cred: true, outcome: "accepted", version: "1.0", requested: "1.0", reason: "ok"},
		{name: "downgrade, unauthenticated", policy: []string{"1.1", "1.0"}, downgrade: true, offers: []wire.ProtocolVersion{"1.0"}, outcome: "refused", requested: "1.0", reason: "unauthenticated"},
		{name: "downgrade not allowed", policy: []string{"1.1", "1.0"}, offers: []wire.ProtocolVersion{"1.0"}, cred: true, outcome: "refused", requested: "1.0", reason: "unsupported"},
		{name: "unknown version", offers: []wire.ProtocolVersion{"2.0"}, outcome: "refused", reason: "unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t)
			a.serveCard(t, testCard(a, tc.offers...))
			opts := []fixtureOpt{withPolicy(a2aPolicy(t, tc.downgrade, tc.policy...))}
			if tc.cred {
				opts = append(opts, withCredential("Bearer", "tok"))
			}
			f := newFixture(t, a, opts...)
			conn, err := f.client.Connect(context.Background(), runID, "summarizer")
			r, _ := f.sink.onlyRecord(t, runID)
			if r.Outcome != tc.outcome || r.Version != tc.version || r.Requested != tc.requested || r.Reason != tc.reason {
				t.Fatalf("record %+v", r)
			}
			if tc.outcome == "accepted" {
				if err != nil || conn.Version != tc.version {
					t.Fatalf("%v, conn %+v", err, conn)
				}
				return
			}
			if !errors.Is(err, wire.ErrVersionNotSupported) {
				t.Fatalf("%v, want a version refusal", err)
			}
			wantNothingSent(t, a)
		})
	}
}

// TestConnectOnlyGRPC: a card without a binding the library speaks is an
// unsupported negotiation, recorded.
func TestConnectOnlyGRPC(t *testing.T) {
	a := newAgent(t)
	c := testCard(a)
	c.SupportedInterfaces[0].ProtocolBinding = wire.TransportProtocolGRPC
	a.serveCard(t, c)
	f := newFixture(t, a)
	_, err := f.client.Connect(context.Background(), runID, "summarizer")
	if !errors.Is(err, wire.ErrVersionNotSupported) {
		t.Fatal(err)
	}
	if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "refused" || r.Reason != "unsupported" || r.PeerDigest != sha(a.srv.URL) {
		t.Fatalf("record %+v", r)
	}
}

// TestConnectRecordFailureSendsNothing: a negotiation the run's log does
// not take is not acted on.
func TestConnectRecordFailureSendsNothing(t *testing.T) {
	a := newAgent(t)
	a.serveCard(t, testCard(a))
	f := newFixture(t, a)
	f.sink.refuse = errors.New("log down")
	_, err := f.client.Connect(context.Background(), runID, "summarizer")
	if err == nil || !strings.Contains(err.Error(), "log down") {
		t.Fatalf("%v, want the sink's error", err)
	}
	wantProjection(t, err, http.StatusInternalServerError, outbound.CodeInternal, map[string]any{"protocol": "a2a", "runId": runID})
}

func TestConnectCredentialFailure(t *testing.T) {
	a := newAgent(t)
	a.serveCard(t, testCard(a))
	f := newFixture(t, a, withCredential("Bearer", "tok"))
	f.creds.err = errors.New("vault sealed: SECRET-XYZ")
	_, err := f.client.Connect(context.Background(), runID, "summarizer")
	if !errors.Is(err, ErrCredential) {
		t.Fatalf("%v, want ErrCredential", err)
	}
	e := wantProjection(t, err, http.StatusNotFound, outbound.CodeCredentialNotFound, map[string]any{"protocol": "a2a", "runId": runID})
	if strings.Contains(e.Message, "SECRET") {
		t.Fatal("the projection relays the host's error text")
	}
	if evs := f.sink.events(runID); len(evs) != 0 {
		t.Fatal("negotiated without the credential")
	}
}

func TestNewValidates(t *testing.T) {
	a := newAgent(t)
	g, _ := egress.NewGuard(egress.GuardOptions{})
	good := admission(a)
	for name, tc := range map[string]struct {
		mod  func(d *Deps)
		want string
	}{
		"no policy":           {func(d *Deps) { d.Policy = nil }, "Deps.Policy is required"},
		"mcp policy":          {func(d *Deps) { d.Policy = mcpPolicy(t) }, "must be the A2A policy"},
		"no events":           {func(d *Deps) { d.Events = nil }, "Deps.Events is required"},
		"no guard":            {func(d *Deps) { d.Guard = nil }, "Deps.Guard is required"},
		"no alias":            {func(d *Deps) { d.Admissions[0].Alias = "" }, "Alias is required"},
		"duplicate alias":     {func(d *Deps) { d.Admissions = append(d.Admissions, good) }, "admitted twice"},
		"relative card URL":   {func(d *Deps) { d.Admissions[0].CardURL = "/card.json" }, "absolute http or https"},
		"ftp card URL":        {func(d *Deps) { d.Admissions[0].CardURL = "ftp://agent.example/card" }, "absolute http or https"},
		"userinfo":            {func(d *Deps) { d.Admissions[0].CardURL = "https://u:p@agent.example/card" }, "userinfo"},
		"fragment":            {func(d *Deps) { d.Admissions[0].CardURL = "https://agent.example/card#x" }, "fragment"},
		"uppercase digest":    {func(d *Deps) { d.Admissions[0].Skills[0].Digest = strings.ToUpper(good.Skills[0].Digest) }, "lowercase hex SHA-256"},
		"short digest":        {func(d *Deps) { d.Admissions[0].Skills[0].Digest = "abc" }, "lowercase hex SHA-256"},
		"skill without id":    {func(d *Deps) { d.Admissions[0].Skills[0].ID = "" }, "ID is required"},
		"skill twice":         {func(d *Deps) { d.Admissions[0].Skills = append(d.Admissions[0].Skills, good.Skills[0]) }, "admitted twice"},
		"signature, no keys":  {func(d *Deps) { d.Admissions[0].RequireSignature = true }, "RequireSignature needs CardKeys"},
		"credential, no deps": {func(d *Deps) { d.Admissions[0].Credential = CredentialRef{Name: "k"} }, "Credential needs Deps.Credentials"},
		"negative limit":      {func(d *Deps) { d.Admissions[0].Limits.MaxCardBytes = -1 }, "must not be negative"},
	} {
		d := Deps{Policy: a2aPolicy(t, false), Events: newSink(), Guard: g, Admissions: []Admission{cloneAdmission(good)}}
		tc.mod(&d)
		_, err := New(d, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	c, err := New(Deps{Policy: a2aPolicy(t, false), Events: newSink(), Guard: g, Admissions: []Admission{good}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A runtime admission is validated too, and replaces the old one.
	bad := good
	bad.CardURL = "agent.example"
	if err := c.Admit(bad); err == nil {
		t.Fatal("Admit took a relative card URL")
	}
	next := good
	next.CardURL = "https://agent.example/v2/card.json"
	if err := c.Admit(next); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Admission("summarizer"); got.CardURL != next.CardURL {
		t.Fatalf("Admit did not replace: %q", got.CardURL)
	}
	if !c.Revoke("summarizer") || c.Revoke("summarizer") {
		t.Fatal("Revoke")
	}
	if _, err := c.Connect(context.Background(), runID, "summarizer"); !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("a revoked agent: %v", err)
	}
}

func mcpPolicy(t *testing.T) *negotiate.Policy {
	p, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{"2026-07-28"}, Preferred: "2026-07-28", Floor: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConnectNeedsARun(t *testing.T) {
	a := newAgent(t)
	a.serveCard(t, testCard(a))
	f := newFixture(t, a)
	if _, err := f.client.Connect(context.Background(), "", "summarizer"); err == nil {
		t.Fatal("connected for no run")
	}
	if len(a.all()) != 0 || len(f.sink.hostEvents()) != 0 {
		t.Fatal("a connection for no run reached the network or the sink")
	}
}

// TestCardMemoryFollowsBytes: a card server that announces a gigabyte and
// sends a few bytes costs a few bytes, not what it announced.
func TestCardMemoryFollowsBytes(t *testing.T) {
	a := newAgent(t)
	a.setCard(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"name":"Summarizer",`))
	})
	f := newFixture(t, a, withLimits(Limits{MaxCardBytes: 2 << 30}))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := f.client.Connect(context.Background(), runID, "summarizer")
	runtime.ReadMemStats(&after)
	var ce *CardError
	if !errors.As(err, &ce) {
		t.Fatalf("%v, want a *CardError for the cut body", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("fetching a %d-byte body allocated %d bytes", 21, grew)
	}
}

// An admission whose credential has expired is refused before the
// credential is resolved or anything reaches the agent's interfaces.
func TestConnectCredentialExpired(t *testing.T) {
	a := newAgent(t)
	a.serveCard(t, testCard(a))
	f := newFixture(t, a, withCredential("Bearer", "tok"), withAdmission(func(ad *Admission) {
		ad.Credential.Expiry = time.Now().Add(-time.Minute)
	}))
	_, err := f.client.Connect(context.Background(), runID, "summarizer")
	if !errors.Is(err, ErrCredential) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("%v, want an expired ErrCredential", err)
	}
	wantProjection(t, err, http.StatusNotFound, outbound.CodeCredentialNotFound, map[string]any{"protocol": "a2a", "runId": runID})
	if n := len(a.requests()); n != 0 {
		t.Fatalf("%d requests reached the agent's interfaces", n)
	}
	if evs := f.sink.events(runID); len(evs) != 0 {
		t.Fatal("negotiated with an expired credential")
	}
}
