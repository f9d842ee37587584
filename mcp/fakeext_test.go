package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// fakeExtension is an Extension seen only through the mount's contract,
// for the mount's own tests (streams, panics, hand-offs, routing); package
// mcp/ext, the real one, has its own tests. Its native tools are call's
// cases; its other methods answer {"resultType":"complete"} with the
// method's name.
type fakeExtension struct {
	caps  mount.Capabilities
	tools []mount.Tool
	call  func(ctx context.Context, tc *mount.ToolCall) (mount.ToolOutcome, error)
}

func (x *fakeExtension) Capabilities() mount.Capabilities { return x.caps }

func (x *fakeExtension) Serve(_ context.Context, _ mount.Env, method string, _ *mount.Call) ([]byte, error) {
	return []byte(`{"resultType":"complete","served":` + quote(method) + `}`), nil
}

func (x *fakeExtension) ListTools(context.Context, interop.Subject) ([]mount.Tool, error) {
	return x.tools, nil
}

func (x *fakeExtension) CallTool(ctx context.Context, _ mount.Env, tc *mount.ToolCall) (mount.ToolOutcome, error) {
	return x.call(ctx, tc)
}

// withExtension plugs x into the mount.
func withExtension(x *fakeExtension) func(*testConfig) {
	return func(c *testConfig) { c.Extension = x }
}

// notifyProgress sends one notifications/progress of tc, as mcp/ext does.
func notifyProgress(tc *mount.ToolCall, progress float64, message string) {
	params := fmt.Sprintf(`{"progressToken":%s,"progress":%g,"message":%s}`, tc.Meta["progressToken"], progress, quote(message))
	tc.Notifier.Notify("notifications/progress", json.RawMessage(params))
}

// textResult is a CallToolResult of one text block.
func textResult(text string) mount.ToolOutcome {
	return mount.ToolOutcome{Result: []byte(`{"resultType":"complete","content":[{"type":"text","text":` + quote(text) + `}],"isError":false}`)}
}

// TestEnvOpenState: what the mount lends an extension opens a host grant
// for its own request only, a run grant only where the extension may
// resume runs (a native tool), and refuses everything else with the
// mount's one -32602.
func TestEnvOpenState(t *testing.T) {
	e := newEnv(t)
	env := e.srv.env()
	digest := [32]byte{1}
	seal := func(g sealed.Grant) string {
		t.Helper()
		g.RequestDigest = digest
		state, err := env.Seal(alice, g)
		if err != nil {
			t.Fatal(err)
		}
		return state
	}
	ctx := testCtx(t)
	claims, err := env.OpenState(ctx, alice, seal(sealed.Grant{Round: 1, InputKeys: []string{"k"}, HostState: []byte("s")}), digest, false)
	if err != nil || claims.RunID != "" || string(claims.HostState) != "s" || claims.Round != 1 {
		t.Fatalf("host grant: %+v %v", claims, err)
	}
	run, _, err := e.store.CreateRun(ctx, alice, interop.CreateRunRequest{WorkflowID: "waits", Inputs: []byte(`{}`), Transport: interop.TransportMCP})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.OpenState(ctx, alice, seal(sealed.Grant{Round: 1, RunID: run.ID, InterruptIDs: []string{run.ID + "~i"}}), digest, false); !errors.Is(err, errInvalidState) {
		t.Fatalf("a run grant where runs are not resumed: %v", err)
	}
	claims, err = env.OpenState(ctx, alice, seal(sealed.Grant{Round: 1, RunID: run.ID, InterruptIDs: []string{run.ID + "~i"}}), digest, true)
	if err != nil || claims.RunID != run.ID {
		t.Fatalf("run grant: %+v %v", claims, err)
	}
	for name, open := range map[string]func() error{
		"other request": func() error {
			_, err := env.OpenState(ctx, alice, seal(sealed.Grant{Round: 1, InputKeys: []string{"k"}}), [32]byte{2}, true)
			return err
		},
		"other caller": func() error {
			_, err := env.OpenState(ctx, subject(tenantA, "bob"), seal(sealed.Grant{Round: 1, InputKeys: []string{"k"}}), digest, true)
			return err
		},
		"forged": func() error {
			_, err := env.OpenState(ctx, alice, "rs1.forged", digest, true)
			return err
		},
	} {
		if err := open(); !errors.Is(err, errInvalidState) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := env.OpenState(ctx, alice, seal(sealed.Grant{Round: DefaultMaxRounds + 1, InputKeys: []string{"k"}}), digest, true); err == nil || !strings.Contains(string(err.(*Error).Data), "mcp_mrtr_rounds_exceeded") {
		t.Fatalf("past the ceiling: %v", err)
	}
	if env.ListTTLMs() != DefaultListTTL.Milliseconds() || env.Logger() == nil {
		t.Fatal("list TTL or logger")
	}
}
