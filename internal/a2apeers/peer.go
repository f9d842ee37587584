package a2apeers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// Paths every peer serves under its base URL.
const (
	CardPath    = "/.well-known/agent-card.json" // A2A 1.0 §8.2 well-known card location
	JSONRPCPath = "/jsonrpc"                     // the JSON-RPC interface
	RESTPath    = "/rest"                        // the HTTP+JSON interface
)

// Bindings a recorded request arrived on.
const (
	BindingCard    = "card"
	BindingJSONRPC = string(wire.TransportProtocolJSONRPC)
	BindingREST    = string(wire.TransportProtocolHTTPJSON)
)

// Peer is a running A2A peer on loopback. Every server behind it is closed
// by the test's cleanup.
type Peer struct {
	// URL is the base URL; the card lists its interfaces under it.
	URL string
	// CardURL is URL + CardPath.
	CardURL string
	// Card is the card the peer serves; nil when it is in a shape a2a-go's
	// AgentCard cannot hold (StartLegacy03 with LegacyCard03).
	Card *wire.AgentCard
	// CardJSON is the card exactly as served.
	CardJSON []byte

	rec *recorder
}

// Request is one HTTP request a peer received, recorded before the peer
// acted on it.
type Request struct {
	// Binding is BindingCard, BindingJSONRPC or BindingREST, from the path;
	// "" for a path the peer does not serve.
	Binding    string
	HTTPMethod string
	Path       string
	// Method is the A2A operation ("SendMessage", "GetTask", ...): the
	// JSON-RPC method, or the operation an HTTP+JSON route names (A2A 1.0
	// §11.3). "" for the card or an unreadable body.
	Method        string
	Version       string // the A2A-Version header (A2A 1.0 §3.6.2)
	Authorization string
	Extensions    string // the A2A-Extensions header (A2A 1.0 §3.6.3)
	// Tenant is params.tenant (JSON-RPC) or the path's tenant prefix
	// (HTTP+JSON), A2A 1.0 §AgentInterface.tenant.
	Tenant string
	// MessageID is the sent message's messageId, for a send.
	MessageID string
	// TaskID is the task the call names: params.id, the route's id, or
	// the sent message's taskId.
	TaskID string
	Header http.Header
	Body   []byte
}

// Requests returns every request the peer received, card fetches
// included, in arrival order.
func (p *Peer) Requests() []Request { return p.rec.all(false) }

// Calls returns the protocol calls the peer received: Requests without
// the card fetches.
func (p *Peer) Calls() []Request { return p.rec.all(true) }

// recorder keeps the requests of one peer.
type recorder struct {
	mu   sync.Mutex
	reqs []Request
}

func (r *recorder) all(callsOnly bool) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Request, 0, len(r.reqs))
	for _, q := range r.reqs {
		if callsOnly && q.Binding == BindingCard {
			continue
		}
		out = append(out, q)
	}
	return out
}

// record wraps next: each request is read whole, recorded, and handed on
// with its body intact.
func (r *recorder) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		q := Request{
			HTTPMethod:    req.Method,
			Path:          req.URL.Path,
			Version:       req.Header.Get("A2A-Version"),
			Authorization: req.Header.Get("Authorization"),
			Extensions:    req.Header.Get("A2A-Extensions"),
			Header:        req.Header.Clone(),
			Body:          body,
		}
		switch p := req.URL.Path; {
		case p == CardPath:
			q.Binding = BindingCard
		case p == JSONRPCPath || strings.HasPrefix(p, JSONRPCPath+"/"):
			q.Binding = BindingJSONRPC
			readJSONRPC(&q)
		case p == RESTPath || strings.HasPrefix(p, RESTPath+"/"):
			q.Binding = BindingREST
			readREST(&q, strings.TrimPrefix(p, RESTPath))
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, q)
		r.mu.Unlock()
		next.ServeHTTP(w, req)
	})
}

// sent is the part of a send's params the recorder reads.
type sent struct {
	Tenant  string `json:"tenant"`
	Message *struct {
		MessageID string `json:"messageId"`
		TaskID    string `json:"taskId"`
	} `json:"message"`
}

func (s sent) fill(q *Request) {
	if s.Tenant != "" {
		q.Tenant = s.Tenant
	}
	if s.Message != nil {
		q.MessageID = s.Message.MessageID
		if q.TaskID == "" {
			q.TaskID = s.Message.TaskID
		}
	}
}

// readJSONRPC fills what a JSON-RPC request names; an unreadable body
// leaves the fields empty.
func readJSONRPC(q *Request) {
	var env struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(q.Body, &env) != nil {
		return
	}
	q.Method = env.Method
	var params struct {
		sent
		ID string `json:"id"`
	}
	if json.Unmarshal(env.Params, &params) == nil {
		q.TaskID = params.ID
		params.sent.fill(q)
	}
}

// readREST fills what an HTTP+JSON route names (A2A 1.0 §11.3): the
// segments before the first operation segment are the tenant.
func readREST(q *Request, path string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	i := 0
	for i < len(segs) && !isRESTOperation(segs[i]) {
		i++
	}
	if i == len(segs) {
		return
	}
	q.Tenant = strings.Join(segs[:i], "/")
	op, rest := segs[i], segs[i+1:]
	switch {
	case op == "message:send":
		q.Method = "SendMessage"
	case op == "message:stream":
		q.Method = "SendStreamingMessage"
	case op == "extendedAgentCard":
		q.Method = "GetExtendedAgentCard"
	case len(rest) == 0:
		q.Method = "ListTasks"
	case len(rest) == 1:
		id, action, _ := strings.Cut(rest[0], ":")
		q.TaskID = id
		q.Method = map[string]string{"": "GetTask", "cancel": "CancelTask", "subscribe": "SubscribeToTask"}[action]
	default:
		q.TaskID = rest[0]
		q.Method = map[string]string{
			http.MethodPost: "CreateTaskPushNotificationConfig", http.MethodDelete: "DeleteTaskPushNotificationConfig",
		}[q.HTTPMethod]
		if q.HTTPMethod == http.MethodGet {
			q.Method = "ListTaskPushNotificationConfigs"
			if len(rest) > 2 {
				q.Method = "GetTaskPushNotificationConfig"
			}
		}
	}
	var body sent
	if json.Unmarshal(q.Body, &body) == nil {
		body.fill(q)
	}
}

func isRESTOperation(seg string) bool {
	return seg == "tasks" || seg == "extendedAgentCard" || strings.HasPrefix(seg, "message:")
}

// serve starts handler on loopback behind the recorder. build receives the
// base URL before the first request is accepted, so a card can name it.
// The server and every connection to it are closed by t's cleanup, after
// stop (when non-nil) has ended the work the peer still runs.
func serve(t testing.TB, build func(base string) (http.Handler, *Peer), stop func()) *Peer {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	h, p := build(base)
	p.URL, p.CardURL, p.rec = base, base+CardPath, rec
	srv.Config.Handler = rec.record(h)
	srv.Start()
	t.Cleanup(func() {
		if stop != nil {
			stop()
		}
		srv.CloseClientConnections()
		srv.Close()
	})
	return p
}

// signCard returns raw, a card's JSON without a signatures member, with
// one: s's signature over raw, every other byte kept, so the signature
// covers exactly the bytes served around it.
func signCard(t testing.TB, raw []byte, s *cardsig.Signer) []byte {
	t.Helper()
	if bytes.Contains(raw, []byte(`"signatures"`)) {
		t.Fatal("a2apeers: the card to sign already has signatures")
	}
	sig, err := s.Sign(raw)
	if err != nil {
		t.Fatalf("a2apeers: sign the card: %v", err)
	}
	end := bytes.LastIndexByte(raw, '}')
	out := append(bytes.Clone(raw[:end]), `,"signatures":`...)
	out = append(out, mustJSON([]wire.AgentCardSignature{sig})...)
	return append(out, raw[end:]...)
}

// cardHandler serves body as the agent card.
func cardHandler(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}

// mustCard decodes a card the package wrote.
func mustCard(t testing.TB, raw []byte) *wire.AgentCard {
	t.Helper()
	var c wire.AgentCard
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("a2apeers: decode the card: %v", err)
	}
	return &c
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values marshalled here are the package's own
	}
	return b
}
