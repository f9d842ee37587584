package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// brokenVault refuses to seal: a registration with a secret fails.
type brokenVault struct{ *push.MemoryVault }

func (brokenVault) Seal(context.Context, push.Secret) (string, error) {
	return "", errors.New("vault sealed shut")
}

// brokenConfigs is a config store that is down.
type brokenConfigs struct{ *push.MemoryConfigs }

var errConfigsDown = errors.New("config database unreachable")

func (brokenConfigs) Put(context.Context, push.Record, int) (push.Record, bool, error) {
	return push.Record{}, false, errConfigsDown
}

func (brokenConfigs) List(context.Context, string) ([]push.Record, error) {
	return nil, errConfigsDown
}

// withPushStores replaces the push vault, config store and per-task limit
// (after withPush).
func withPushStores(vault push.Vault, configs push.ConfigStore, maxPerTask int) rpcOption {
	return func(c *testConfig) {
		opts := *c.Push
		opts.Vault, opts.Configs, opts.MaxConfigsPerTask = vault, configs, maxPerTask
		c.Push = &opts
	}
}

// inlineSend is SendMessage with configuration.taskPushNotificationConfig.
func inlineSend(msg map[string]any, url string) string {
	return rpcBody(1, methodSendMessage, map[string]any{
		"message":       msg,
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": url, "token": pushSecretToken}},
	})
}

// TestInlinePushRefusedChangesNothing: a config sent with SendMessage whose
// registration fails — a vault that cannot seal, a config store that is
// down, a task already holding the most configs — refuses the message
// before it is applied: no task is created, no interrupt is answered,
// nothing is appended.
func TestInlinePushRefusedChangesNothing(t *testing.T) {
	rc := newPushReceiver(t)
	for _, tc := range []struct {
		name    string
		vault   push.Vault
		configs push.ConfigStore
		max     int
		// full registers a config on the open task first, filling it.
		full   bool
		code   int
		reason string
		field  string
	}{
		{name: "vault fails", vault: brokenVault{push.NewMemoryVault()}, code: codeInternal, reason: "INTERNAL_ERROR"},
		{name: "config store down", configs: brokenConfigs{push.NewMemoryConfigs()}, code: codeInternal, reason: "INTERNAL_ERROR"},
		{name: "task full", max: 1, full: true, code: codeInvalidParams, field: "configuration.taskPushNotificationConfig.id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRPCEnv(t, withPush(t, newPushSetup(), rc.srv.URL), withPushStores(tc.vault, tc.configs, tc.max))
			startPush(t, e)
			open := rpcTask(t, e.do(t, acme(rpcBody(1, methodSendMessage, map[string]any{"message": rpcMessage("m-open", memstore.FixtureApproval, "x")}))), true)
			if tc.full {
				if res := e.do(t, acme(rpcBody(2, methodCreatePushConfig, map[string]any{"taskId": string(open.ID), "url": rc.srv.URL + "/first"}))); strings.Contains(string(res.body), `"error"`) {
					t.Fatalf("first config: %s", res.body)
				}
			}
			sub := rpcSubjects()[rpcKeyAcme]
			before := e.run(t, sub, string(open.ID))
			runs := e.count(t, sub)

			for _, body := range []string{
				inlineSend(rpcMessage("m-new", memstore.FixtureNoop, "x"), rc.srv.URL+"/new"),
				inlineSend(acceptMessage("m-accept", string(open.ID)), rc.srv.URL+"/accept"),
			} {
				res := e.do(t, acme(body))
				if tc.full && strings.Contains(body, "m-new") {
					// A new task has room for its config.
					rpcTask(t, res, true)
					runs++
					continue
				}
				out := wantRPCError(t, res, http.StatusOK, tc.code, tc.reason)
				if tc.field != "" && (len(out.Error.Data) != 1 || !strings.Contains(string(res.body), `"field":"`+tc.field+`"`)) {
					t.Fatalf("refusal %s, want field %s", res.body, tc.field)
				}
			}
			if n := e.count(t, sub); n != runs {
				t.Fatalf("%d runs after refused messages, want %d", n, runs)
			}
			after := e.run(t, sub, string(open.ID))
			if after.Status != before.Status || !after.Status.Suspended() || after.LastSequence != before.LastSequence {
				t.Fatalf("the task changed behind a refusal: %s seq %d, was %s seq %d", after.Status, after.LastSequence, before.Status, before.LastSequence)
			}
		})
	}
}

// refusingResolver is a store whose ResolveInterrupt refuses: the write a
// reserved config precedes fails.
type refusingResolver struct{ interop.RunStore }

func (refusingResolver) ResolveInterrupt(context.Context, interop.Subject, interop.ResolveRequest) (interop.Run, error) {
	return interop.Run{}, interop.ErrAlreadyResolved
}

// TestInlinePushReleasedWhenTheWriteFails: when the message itself is
// refused by the store after the config was reserved, the reservation is
// released: the sealed secret is discarded and the task's slot is free.
func TestInlinePushReleasedWhenTheWriteFails(t *testing.T) {
	rc := newPushReceiver(t)
	vault := push.NewMemoryVault()
	e := newRPCEnv(t, withPush(t, newPushSetup(), rc.srv.URL), withPushStores(vault, nil, 1),
		func(c *testConfig) { c.Store = refusingResolver{c.Store} })
	startPush(t, e)
	open := rpcTask(t, e.do(t, acme(rpcBody(1, methodSendMessage, map[string]any{"message": rpcMessage("m-open", memstore.FixtureApproval, "x")}))), true)
	res := e.do(t, acme(inlineSend(acceptMessage("m-accept", string(open.ID)), rc.srv.URL+"/accept")))
	wantRPCError(t, res, http.StatusOK, -32004, "UNSUPPORTED_OPERATION")
	if vault.Len() != 0 {
		t.Fatalf("the vault keeps %d secrets of a refused message", vault.Len())
	}
	// The slot is free again: the task takes its one config.
	created := e.do(t, acme(rpcBody(2, methodCreatePushConfig, map[string]any{"taskId": string(open.ID), "url": rc.srv.URL + "/after", "token": pushSecretToken})))
	var out struct {
		Result *wire.PushConfig `json:"result"`
	}
	if err := json.Unmarshal(created.body, &out); err != nil || out.Result == nil {
		t.Fatalf("a config after the released reservation: %s", created.body)
	}
}

// count is the number of runs sub can list.
func (e *rpcEnv) count(t testing.TB, sub interop.Subject) int {
	t.Helper()
	page, err := e.store.ListRuns(context.Background(), sub, interop.ListRunsQuery{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Total
}

// run reads a run for sub.
func (e *rpcEnv) run(t testing.TB, sub interop.Subject, id string) interop.Run {
	t.Helper()
	run, err := e.store.GetRun(context.Background(), sub, id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}
