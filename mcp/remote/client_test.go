package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
)

func TestNewRefuses(t *testing.T) {
	g, err := egress.NewGuard(egress.GuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{Revision, "2025-11-25"}, Preferred: Revision, Floor: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	a2a, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	ok := Admission{Alias: "s", Endpoint: "https://mcp.example/mcp"}
	good := Deps{Policy: mcpPolicy(t), Events: newSink(), Guard: g, MaxRounds: 5, Admissions: []Admission{ok}}
	if _, err := New(good, Options{}); err != nil {
		t.Fatalf("a valid configuration: %v", err)
	}
	digest := strings.Repeat("a", 64)
	for name, tc := range map[string]struct {
		mod  func(*Deps, *Options)
		want string
	}{
		"no policy":           {func(d *Deps, _ *Options) { d.Policy = nil }, "Deps.Policy is required"},
		"a2a policy":          {func(d *Deps, _ *Options) { d.Policy = a2a }, "must be the MCP policy"},
		"legacy revision":     {func(d *Deps, _ *Options) { d.Policy = legacy }, `offers revision "2025-11-25"`},
		"no events":           {func(d *Deps, _ *Options) { d.Events = nil }, "Deps.Events is required"},
		"no guard":            {func(d *Deps, _ *Options) { d.Guard = nil }, "Deps.Guard is required"},
		"no rounds":           {func(d *Deps, _ *Options) { d.MaxRounds = 0 }, "Deps.MaxRounds"},
		"too many rounds":     {func(d *Deps, _ *Options) { d.MaxRounds = 17 }, "Deps.MaxRounds"},
		"negative timeout":    {func(_ *Deps, o *Options) { o.ConnectTimeout = -1 }, "must not be negative"},
		"negative limits":     {func(_ *Deps, o *Options) { o.Limits.MaxPages = -1 }, "Options.Limits"},
		"no alias":            {func(d *Deps, _ *Options) { d.Admissions[0].Alias = "" }, "Alias is required"},
		"twice":               {func(d *Deps, _ *Options) { d.Admissions = append(d.Admissions, ok) }, "admitted twice"},
		"no endpoint":         {func(d *Deps, _ *Options) { d.Admissions[0].Endpoint = "" }, "Endpoint is required"},
		"relative endpoint":   {func(d *Deps, _ *Options) { d.Admissions[0].Endpoint = "/mcp" }, "absolute http or https"},
		"ws endpoint":         {func(d *Deps, _ *Options) { d.Admissions[0].Endpoint = "ws://mcp.example/" }, "absolute http or https"},
		"userinfo":            {func(d *Deps, _ *Options) { d.Admissions[0].Endpoint = "https://u:p@mcp.example/" }, "userinfo"},
		"fragment":            {func(d *Deps, _ *Options) { d.Admissions[0].Endpoint = "https://mcp.example/#x" }, "fragment"},
		"revision":            {func(d *Deps, _ *Options) { d.Admissions[0].Revision = "2026-02-30" }, "Revision must be an MCP revision"},
		"tool without name":   {func(d *Deps, _ *Options) { d.Admissions[0].Tools = []AdmittedTool{{Digest: digest}} }, "Tools[0]: a name is required"},
		"tool twice":          {func(d *Deps, _ *Options) { d.Admissions[0].Tools = []AdmittedTool{{"a", digest}, {"a", digest}} }, `Tools[1]: "a" is admitted twice`},
		"uppercase digest":    {func(d *Deps, _ *Options) { d.Admissions[0].Tools = []AdmittedTool{{"a", strings.ToUpper(digest)}} }, "Tools[0]: Digest"},
		"resource digest":     {func(d *Deps, _ *Options) { d.Admissions[0].Resources = []AdmittedResource{{"file:///a", "x"}} }, "Resources[0]: Digest"},
		"prompt without name": {func(d *Deps, _ *Options) { d.Admissions[0].Prompts = []AdmittedPrompt{{Digest: digest}} }, "Prompts[0]: a name"},
		"credential":          {func(d *Deps, _ *Options) { d.Admissions[0].Credential.Name = "k" }, "Credential needs Deps.Credentials"},
		"admission limits":    {func(d *Deps, _ *Options) { d.Admissions[0].Limits.Timeout = -time.Second }, "Limits must not be negative"},
	} {
		t.Run(name, func(t *testing.T) {
			d, o := good, Options{}
			d.Admissions = []Admission{ok}
			tc.mod(&d, &o)
			_, err := New(d, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}

func TestAdmitRevokeAdmission(t *testing.T) {
	s := newServer(t)
	f := newFixture(t, s, admission(s))
	if err := f.client.Admit(Admission{Alias: "bad", Endpoint: "ftp://x.example"}); err == nil {
		t.Fatal("a malformed admission was admitted")
	}
	a := Admission{Alias: "two", Endpoint: "https://mcp.example/mcp", Revision: "2025-06-18", Tools: []AdmittedTool{{"t", strings.Repeat("0", 64)}}}
	if err := f.client.Admit(a); err != nil {
		t.Fatalf("a revision below the floor is well formed: %v", err)
	}
	a.Tools[0].Name = "changed-by-caller"
	got, ok := f.client.Admission("two")
	if !ok || got.Tools[0].Name != "t" {
		t.Fatalf("%+v: the admission shares the caller's slices", got)
	}
	got.Tools[0].Name = "changed-by-reader"
	if again, _ := f.client.Admission("two"); again.Tools[0].Name != "t" {
		t.Fatal("Admission returns the registered slices")
	}
	if !f.client.Revoke("two") || f.client.Revoke("two") {
		t.Fatal("Revoke")
	}
	if _, err := f.client.Connect(context.Background(), runID, "two"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("a revoked server: %v", err)
	}
	if f.client.MaxRounds() != 4 {
		t.Fatal("MaxRounds")
	}
}

// TestProjectError covers the rows not proven by the exchanges above.
func TestProjectError(t *testing.T) {
	d := func(extra ...any) map[string]any {
		m := map[string]any{"protocol": "mcp", "runId": runID}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	rpc := func(code int64, data string) error {
		return fmt.Errorf("calling \"tools/call\": %w", &jsonrpc.Error{Code: code, Message: "server words", Data: []byte(data)})
	}
	rounds := &RoundsError{Alias: "echo", Tool: "ask", MaxRounds: 4}
	if !errors.Is(rounds, ErrRoundsExceeded) {
		t.Fatal("a *RoundsError is not ErrRoundsExceeded")
	}
	e := wantProjection(t, rounds, http.StatusUnprocessableEntity, outbound.CodeMRTRRoundsExceeded, d("maxRounds", 4))
	if e.Message != "the MCP server asked for input more times than the host allows" {
		t.Fatal(e.Message)
	}
	wantProjection(t, fmt.Errorf("call: %w", rounds), http.StatusUnprocessableEntity, outbound.CodeMRTRRoundsExceeded, d("maxRounds", 4))
	wantProjection(t, rpc(-32022, `{"supported":["2026-07-28","bad",7],"requested":"x"}`), http.StatusBadRequest, outbound.CodeVersionUnsupported,
		d("remoteCode", int64(-32022), "supportedVersions", []string{"2026-07-28"}))
	wantProjection(t, &PeerError{Alias: "echo", Method: "server/discover", Code: -32022}, http.StatusBadRequest, outbound.CodeVersionUnsupported, d("remoteCode", int64(-32022)))
	for code, want := range map[int64][2]any{
		-32602: {400, outbound.CodeValidation}, -32600: {400, outbound.CodeValidation}, -32700: {400, outbound.CodeValidation},
		-32020: {400, outbound.CodeValidation}, -32601: {422, outbound.CodeCapabilityRequired}, -32021: {422, outbound.CodeCapabilityRequired},
		-32042: {422, outbound.CodeCredentialRequired}, -32002: {404, outbound.CodeNotFound},
		-32603: {503, outbound.CodeRunnerUnavailable}, -32000: {503, outbound.CodeRunnerUnavailable}, 12345: {503, outbound.CodeRunnerUnavailable},
	} {
		e := wantProjection(t, rpc(code, ""), want[0].(int), want[1].(string), d("remoteCode", code))
		if strings.Contains(e.Message, "server words") {
			t.Fatalf("%d: the server's text reached the message", code)
		}
	}
	// go-sdk's own transport rejection (-32005) is no server's error.
	rejected := fmt.Errorf("sending: %w: %w", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, context.DeadlineExceeded)
	wantProjection(t, rejected, http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, d())
	wantProjection(t, context.Canceled, http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, d())
	wantProjection(t, &StatusError{StatusCode: 429}, http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, d())
	wantProjection(t, &RevisionError{Want: Revision}, http.StatusInternalServerError, outbound.CodeInternal, d())
	if ProjectError(runID, nil) != nil {
		t.Fatal("nil")
	}
	if e := ProjectError("", ErrUnknownServer); len(e.Details) != 1 {
		t.Fatalf("details %v without a run", e.Details)
	}
}
