package a2a

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// A chat client answers an approval in plain text. A reply whose whole
// text, trimmed, is exactly one of the actions the open approval offers
// resolves it as the data part {"action": text} would; any other text is
// refused as before, changing nothing.
func TestCoreMultiTurnTextReplyToApproval(t *testing.T) {
	cases := []struct {
		name  string
		parts []*wire.Part
		want  string // what the workflow saw; "" when refused
	}{
		{"accept", []*wire.Part{wire.NewTextPart("accept")}, `accept {"action":"accept"}`},
		{"reject, padded", []*wire.Part{wire.NewTextPart("  reject\n")}, `decline {"action":"reject"}`},
		{"another offered action", []*wire.Part{wire.NewTextPart("refine")}, `accept {"action":"refine"}`},
		{"a data part wins over the text", []*wire.Part{wire.NewTextPart("accept"), wire.NewDataPart(map[string]any{"action": "reject"})}, `decline {"action":"reject"}`},
		{"case differs", []*wire.Part{wire.NewTextPart("Accept")}, ""},
		{"more than the action", []*wire.Part{wire.NewTextPart("accept please")}, ""},
		{"an action not offered", []*wire.Part{wire.NewTextPart("ask")}, ""},
		{"split over two parts", []*wire.Part{wire.NewTextPart("acc"), wire.NewTextPart("ept")}, ""},
		{"empty", []*wire.Part{wire.NewTextPart("  ")}, ""},
	}
	env := newCoreEnv(t, withRouted(probeOutcome))
	c := asCaller(coreTenantA, "alice")
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := env.send(t, c, textMessage(fmt.Sprintf("m-start-%d", i), "go"))
			reply := userMessage(fmt.Sprintf("m-reply-%d", i), tc.parts...)
			reply.TaskID = first.ID
			if tc.want == "" {
				before := env.run(t, c.subject, first.ID)
				_, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: reply})
				wantError(t, err, codeInvalidParams, "resumeValue")
				assertRunUnchanged(t, env, c.subject, before)
				return
			}
			done := env.send(t, c, reply)
			if got, _ := env.rec.get(string(first.ID)); got != tc.want {
				t.Fatalf("workflow saw %v, want %s", got, tc.want)
			}
			if done.Status.State != wire.TaskStateCompleted || len(done.History) != 2 || done.History[1].ID != reply.ID {
				t.Fatalf("state %s, history %+v", done.Status.State, done.History)
			}
		})
	}
}

// The plain-text reply, sent by a2a-go's own client on both bindings,
// resolves the conformance approval: "accept" completes it, "reject"
// fails it, other text is an invalid-params refusal the client reads as
// such.
func TestTextReplyWithA2AGoClient(t *testing.T) {
	e := newRESTEnv(t)
	mux := httptest.NewServer(e.mux)
	t.Cleanup(mux.Close)
	rpc := newRPCEnv(t)
	rpcSrv := httptest.NewServer(rpc.mux)
	t.Cleanup(rpcSrv.Close)
	restURL, _ := url.Parse(mux.URL + restEnvPrefix)
	// a2a-go's REST client reads a google.rpc.Status by its ErrorInfo
	// reason only, and INVALID_ARGUMENT carries none (an A2A -32602 has no
	// reason), so it reports ErrInternalError with the refusal's message.
	transports := map[string]struct {
		tr      a2aclient.Transport
		key     string
		skill   string
		refused error
	}{
		"HTTP+JSON": {a2aclient.NewRESTTransport(restURL, mux.Client()), "key-acme", "", wire.ErrInternalError},
		"JSON-RPC":  {a2aclient.NewJSONRPCTransport(rpcSrv.URL+rpcPath, rpcSrv.Client()), rpcKeyAcme, memstore.FixtureApproval, wire.ErrInvalidParams},
	}
	for name, p := range transports {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			params := peerParams(p.key)
			start := func() *wire.Task {
				t.Helper()
				m := wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("please approve"))
				if p.skill != "" {
					m.Metadata = map[string]any{"skillId": p.skill}
				}
				res, err := p.tr.SendMessage(ctx, params, &wire.SendMessageRequest{Message: m})
				task, ok := res.(*wire.Task)
				if err != nil || !ok || task.Status.State != wire.TaskStateInputRequired {
					t.Fatalf("start: %#v %v", res, err)
				}
				return task
			}
			reply := func(task *wire.Task, text string) (*wire.Task, error) {
				m := wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart(text))
				m.TaskID = task.ID
				res, err := p.tr.SendMessage(ctx, params, &wire.SendMessageRequest{Message: m})
				if err != nil {
					return nil, err
				}
				return res.(*wire.Task), nil
			}
			for text, state := range map[string]wire.TaskState{"accept": wire.TaskStateCompleted, "reject": wire.TaskStateFailed} {
				task := start()
				done, err := reply(task, text)
				if err != nil || done.ID != task.ID || done.ContextID != task.ContextID || done.Status.State != state {
					t.Errorf("%q: %+v %v, want %s", text, done, err, state)
				}
			}
			task := start()
			if _, err := reply(task, "yes please"); !errors.Is(err, p.refused) || !strings.Contains(err.Error(), "the answer was refused") {
				t.Errorf("other text: %v, want %v", err, p.refused)
			}
			if got, err := p.tr.GetTask(ctx, params, &wire.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != wire.TaskStateInputRequired {
				t.Errorf("after the refused text: %+v %v", got, err)
			}
		})
	}
}
