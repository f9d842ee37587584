package delegate

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopinterop/wopinterop/egress"
)

// echoExecutor is a trivial a2a-go agent: each message becomes a task that
// completes with one artifact echoing the message's text. It records the
// tenant each execution saw.
type echoExecutor struct {
	mu      sync.Mutex
	tenants []string
}

func (e *echoExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	e.mu.Lock()
	e.tenants = append(e.tenants, ec.Tenant)
	e.mu.Unlock()
	return func(yield func(wire.Event, error) bool) {
		if !yield(wire.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		text := ""
		if len(ec.Message.Parts) > 0 {
			text = ec.Message.Parts[0].Text()
		}
		art := wire.NewArtifactEvent(ec, wire.NewTextPart("echo: "+text))
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCompleted, nil), nil)
	}
}

func (e *echoExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCanceled, nil), nil)
	}
}

// realPeer is an a2a-go a2asrv server on loopback: the card at
// /.well-known/agent-card.json, JSON-RPC at /rpc, HTTP+JSON under /rest.
// It records the A2A-Version of every request to an interface.
type realPeer struct {
	srv      *httptest.Server
	exec     *echoExecutor
	mu       sync.Mutex
	versions []string
}

func newRealPeer(t *testing.T, card func(base string) *wire.AgentCard) *realPeer {
	p := &realPeer{exec: &echoExecutor{}}
	handler := a2asrv.NewHandler(p.exec)
	mux := http.NewServeMux()
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(handler))
	mux.Handle("/rest/", http.StripPrefix("/rest", a2asrv.NewRESTHandler(handler)))
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			p.mu.Lock()
			p.versions = append(p.versions, r.Header.Get("A2A-Version"))
			p.mu.Unlock()
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card(p.srv.URL)))
	return p
}

func realCard(binding wire.TransportProtocol, path, tenant string) func(base string) *wire.AgentCard {
	return func(base string) *wire.AgentCard {
		return &wire.AgentCard{
			Name: "Echo", Description: "echoes", Version: "1.0.0",
			SupportedInterfaces: []*wire.AgentInterface{{URL: base + path, ProtocolBinding: binding, ProtocolVersion: "1.0", Tenant: tenant}},
			Capabilities:        wire.AgentCapabilities{Streaming: true},
			DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []wire.AgentSkill{{ID: "echo", Name: "Echo", Description: "echoes", Tags: []string{"test"}}},
		}
	}
}

func (p *realPeer) connect(t *testing.T, c *wire.AgentCard) *Conn {
	t.Helper()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{p.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	s := c.Skills[0]
	cl, err := New(Deps{Policy: a2aPolicy(t, false), Events: newSink(), Guard: g, Admissions: []Admission{{
		Alias: "echo", CardURL: p.srv.URL + "/.well-known/agent-card.json",
		Skills: []AdmittedSkill{{ID: s.ID, Digest: SkillDigest(&s)}},
	}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := cl.Connect(context.Background(), runID, "echo")
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestRealPeerA2AGo drives a real a2a-go server through the Conn's remote,
// over both bindings: SendMessage to a completed task with its artifact,
// then the stream of a second message; every request carries the
// negotiated version, and the interface's tenant reaches the agent.
func TestRealPeerA2AGo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		binding wire.TransportProtocol
		path    string
	}{
		{"JSON-RPC", wire.TransportProtocolJSONRPC, "/rpc"},
		{"HTTP+JSON", wire.TransportProtocolHTTPJSON, "/rest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			card := realCard(tc.binding, tc.path, "")
			if tc.binding == wire.TransportProtocolJSONRPC {
				// a2a-go's HTTP+JSON server routes no tenant (its
				// NewRESTHandler ignores the prefix); JSON-RPC carries it
				// in params.
				card = realCard(tc.binding, tc.path, "acme")
			}
			p := newRealPeer(t, card)
			conn := p.connect(t, card(p.srv.URL))
			if conn.Interface.ProtocolBinding != tc.binding {
				t.Fatalf("chose %+v", conn.Interface)
			}
			res, err := conn.remote.SendMessage(context.Background(), sendReq("hello"))
			if err != nil {
				t.Fatal(err)
			}
			task, ok := res.(*wire.Task)
			if !ok || task.Status.State != wire.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "echo: hello" {
				t.Fatalf("result %#v", res)
			}
			got, err := conn.remote.GetTask(context.Background(), &wire.GetTaskRequest{ID: task.ID})
			if err != nil || got.ID != task.ID {
				t.Fatalf("GetTask: %v", err)
			}
			var states []wire.TaskState
			for ev, err := range conn.remote.SendStreamingMessage(context.Background(), &wire.SendMessageRequest{Message: &wire.Message{ID: "msg-2", Role: wire.MessageRoleUser, Parts: wire.ContentParts{wire.NewTextPart("again")}}}) {
				if err != nil {
					t.Fatal(err)
				}
				switch e := ev.(type) {
				case *wire.Task:
					states = append(states, e.Status.State)
				case *wire.TaskStatusUpdateEvent:
					states = append(states, e.Status.State)
				}
			}
			if len(states) == 0 || states[len(states)-1] != wire.TaskStateCompleted {
				t.Fatalf("stream states %v", states)
			}
			_, err = conn.remote.GetTask(context.Background(), &wire.GetTaskRequest{ID: "no-such-task"})
			if !errors.Is(err, wire.ErrTaskNotFound) {
				t.Fatalf("unknown task: %v", err)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, v := range p.versions {
				if v != "1.0" {
					t.Fatalf("A2A-Version %q on a request", v)
				}
			}
			if len(p.versions) < 4 {
				t.Fatalf("%d requests seen", len(p.versions))
			}
			if tc.binding == wire.TransportProtocolJSONRPC {
				p.exec.mu.Lock()
				defer p.exec.mu.Unlock()
				for _, tenant := range p.exec.tenants {
					if tenant != "acme" {
						t.Fatalf("the agent saw tenant %q", tenant)
					}
				}
			}
		})
	}
}
