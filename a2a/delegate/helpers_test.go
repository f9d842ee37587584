package delegate

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// sink records what the client hands the host: run events by run, host
// events.
type sink struct {
	mu     sync.Mutex
	runs   map[string][]interop.RunEvent
	host   []interop.HostEvent
	refuse error // AppendRunEvent's answer, when set
}

func newSink() *sink { return &sink{runs: map[string][]interop.RunEvent{}} }

func (s *sink) AppendRunEvent(_ context.Context, runID string, ev interop.RunEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse != nil {
		return s.refuse
	}
	s.runs[runID] = append(s.runs[runID], ev)
	return nil
}

func (s *sink) PublishHostEvent(_ context.Context, _ string, ev interop.HostEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.host = append(s.host, ev)
	return nil
}

func (s *sink) events(runID string) []interop.RunEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]interop.RunEvent(nil), s.runs[runID]...)
}

func (s *sink) hostEvents() []interop.HostEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]interop.HostEvent(nil), s.host...)
}

// record is a decoded negotiation.decided payload.
type record struct {
	Protocol   string `json:"protocol"`
	Outcome    string `json:"outcome"`
	At         string `json:"at"`
	Version    string `json:"version"`
	Floor      string `json:"floor"`
	Requested  string `json:"requested"`
	Reason     string `json:"reason"`
	PeerDigest string `json:"peerDigest"`
}

// onlyRecord returns the one negotiation.decided record on runID's log,
// failing unless the log holds exactly that and nothing went to host
// events.
func (s *sink) onlyRecord(t *testing.T, runID string) (record, []byte) {
	t.Helper()
	evs := s.events(runID)
	if len(evs) != 1 || evs[0].Type != interop.EventNegotiationDecided {
		t.Fatalf("run log %v, want exactly one negotiation.decided", evs)
	}
	if h := s.hostEvents(); len(h) != 0 {
		t.Fatalf("%d host events, want none: the record belongs on the run's log", len(h))
	}
	var r record
	dec := json.NewDecoder(strings.NewReader(string(evs[0].Payload)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("record %s: %v", evs[0].Payload, err)
	}
	return r, evs[0].Payload
}

// seen is one request an agent received.
type seen struct {
	method string
	path   string
	header http.Header
	body   []byte
}

// agent is a scripted remote agent on loopback: it serves a card at
// /card.json and answers everything else with rpc (or 404). It records
// every request.
type agent struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []seen
	card func(w http.ResponseWriter, r *http.Request)
	rpc  func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newAgent(t *testing.T) *agent {
	a := &agent{}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *agent) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.reqs = append(a.reqs, seen{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body})
	card, rpc := a.card, a.rpc
	a.mu.Unlock()
	switch {
	case r.URL.Path == "/card.json" && card != nil:
		card(w, r)
	case r.URL.Path != "/card.json" && rpc != nil:
		rpc(w, r, body)
	default:
		http.NotFound(w, r)
	}
}

// requests returns the requests the agent received at paths other than
// the card's.
func (a *agent) requests() []seen {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []seen
	for _, s := range a.reqs {
		if s.path != "/card.json" {
			out = append(out, s)
		}
	}
	return out
}

func (a *agent) all() []seen {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seen(nil), a.reqs...)
}

func (a *agent) setCard(h func(w http.ResponseWriter, r *http.Request)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.card = h
}

func (a *agent) setRPC(h func(w http.ResponseWriter, r *http.Request, body []byte)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rpc = h
}

// serveCard makes the agent serve card as JSON.
func (a *agent) serveCard(t *testing.T, card *wire.AgentCard) {
	t.Helper()
	raw, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	a.serveRawCard(raw)
}

func (a *agent) serveRawCard(raw []byte) {
	a.setCard(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
	})
}

func (a *agent) cardURL() string { return a.srv.URL + "/card.json" }
func (a *agent) rpcURL() string  { return a.srv.URL + "/rpc" }

// testSkill is the skill the test cards offer.
func testSkill() wire.AgentSkill {
	return wire.AgentSkill{
		ID:          "summarize",
		Name:        "Summarize",
		Description: "Summarizes a document <in> one paragraph & nothing more.",
		Tags:        []string{"text", "résumé"},
		Examples:    []string{"Summarize this"},
		InputModes:  []string{"text/plain"},
		OutputModes: []string{"text/plain", "application/json"},
	}
}

// testCard is a 1.0 card with one JSON-RPC interface at the agent.
func testCard(a *agent, versions ...wire.ProtocolVersion) *wire.AgentCard {
	if len(versions) == 0 {
		versions = []wire.ProtocolVersion{"1.0"}
	}
	c := &wire.AgentCard{
		Name:               "Summarizer",
		Description:        "A test agent",
		Version:            "3.1.4",
		Capabilities:       wire.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []wire.AgentSkill{testSkill()},
	}
	for _, v := range versions {
		c.SupportedInterfaces = append(c.SupportedInterfaces, &wire.AgentInterface{URL: a.rpcURL(), ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: v})
	}
	return c
}

// admission admits the agent's skill as its test card shows it.
func admission(a *agent) Admission {
	s := testSkill()
	return Admission{
		Alias:   "summarizer",
		CardURL: a.cardURL(),
		Skills:  []AdmittedSkill{{ID: s.ID, Digest: SkillDigest(&s)}},
	}
}

// staticCredentials answers every reference with one credential.
type staticCredentials struct {
	scheme, value string
	err           error
	mu            sync.Mutex
	calls         int
}

func (c *staticCredentials) Credential(context.Context, CredentialRef) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return c.scheme, c.value, c.err
}

// a2aPolicy is the host's A2A policy: 1.0 only, unless versions are given
// (the first is preferred, the last the floor).
func a2aPolicy(t testing.TB, downgrade bool, versions ...string) *negotiate.Policy {
	t.Helper()
	if len(versions) == 0 {
		versions = []string{"1.0"}
	}
	p, err := negotiate.NewPolicy(negotiate.Config{
		Protocol: negotiate.A2A, Offered: versions, Preferred: versions[0], Floor: versions[len(versions)-1],
		AllowDowngrade: downgrade,
		Now:            func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fixture is a client over one agent.
type fixture struct {
	agent  *agent
	sink   *sink
	client *Client
	creds  *staticCredentials
}

type fixtureOpt func(*Deps, *Options)

func withPolicy(p *negotiate.Policy) fixtureOpt {
	return func(d *Deps, _ *Options) { d.Policy = p }
}

func withCredential(scheme, value string) fixtureOpt {
	return func(d *Deps, _ *Options) {
		d.Credentials = &staticCredentials{scheme: scheme, value: value}
		for i := range d.Admissions {
			d.Admissions[i].Credential = CredentialRef{Name: "agent-key"}
		}
	}
}

func withAdmission(f func(*Admission)) fixtureOpt {
	return func(d *Deps, _ *Options) {
		for i := range d.Admissions {
			f(&d.Admissions[i])
		}
	}
}

func withLimits(l Limits) fixtureOpt {
	return func(_ *Deps, o *Options) { o.Limits = l }
}

func newFixture(t *testing.T, a *agent, opts ...fixtureOpt) *fixture {
	t.Helper()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{a.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	s := newSink()
	d := Deps{Policy: a2aPolicy(t, false), Events: s, Guard: g, Admissions: []Admission{admission(a)}}
	o := Options{}
	for _, opt := range opts {
		opt(&d, &o)
	}
	c, err := New(d, o)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{agent: a, sink: s, client: c}
	f.creds, _ = d.Credentials.(*staticCredentials)
	return f
}

// rpcReply answers a JSON-RPC request with result, echoing its id.
func rpcReply(result string) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}
}

// rawReply answers with status and body; "$ID" in body is the request's id.
func rawReply(status int, contentType, body string) func(w http.ResponseWriter, r *http.Request, reqBody []byte) {
	return func(w http.ResponseWriter, r *http.Request, reqBody []byte) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(reqBody, &req)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, strings.ReplaceAll(body, "$ID", string(req.ID)))
	}
}

const completedTask = `{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED"}}}`

func sendReq(text string) *wire.SendMessageRequest {
	return &wire.SendMessageRequest{Message: &wire.Message{ID: "msg-1", Role: wire.MessageRoleUser, Parts: wire.ContentParts{wire.NewTextPart(text)}}}
}
