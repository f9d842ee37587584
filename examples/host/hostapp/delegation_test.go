package hostapp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a/delegate"
	"github.com/wopinterop/wopinterop/internal/a2apeers"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// withAgent admits peer as alias (-a2a-agent) and lets the client reach
// it (-peer-allow).
func withAgent(alias string, peer *a2apeers.Peer) hostOption {
	return func(c *config) {
		c.Agents = append(c.Agents, agentSpec{Alias: alias, CardURL: peer.CardURL})
		c.PeerAllow = append(c.PeerAllow, peer.URL)
	}
}

// delegated is the decoded outputs of a delegate-remote run.
type delegated struct {
	Agent        string          `json:"agent"`
	Skill        string          `json:"skill"`
	RemoteTaskID string          `json:"remoteTaskId"`
	Acceptance   string          `json:"acceptance"`
	Artifacts    []wire.Artifact `json:"artifacts"`
}

// artifactTexts are the texts of an artifact's parts.
func artifactTexts(a wire.Artifact) []string {
	var out []string
	for _, p := range a.Parts {
		out = append(out, p.Text())
	}
	return out
}

// delegateRun starts delegate-remote as acme and returns its run id.
func (h *testHost) delegateRun(inputs string) string {
	h.t.Helper()
	return h.start(acmeKey, delegateWorkflowID, inputs).RunID
}

// completedDelegation waits for a delegate-remote run to complete and
// returns its outputs, after checking its log (runLog) and its one
// accepted negotiation record.
func (h *testHost) completedDelegation(runID string, peer *a2apeers.Peer) delegated {
	h.t.Helper()
	events, records := h.runLog(runID, strings.TrimPrefix(peer.URL, "http://"))
	if rec := onlyRecord(h.t, records); rec.Outcome != "accepted" || rec.Version != "1.0" {
		h.t.Fatalf("record %+v", rec)
	}
	if last := events[len(events)-1]; last.Type != "run.completed" {
		h.t.Fatalf("run ends with %s %s", last.Type, last.Payload)
	}
	snap := decode[snapshot](h.t, h.get(projected(runID), acmeKey))
	var out delegated
	dec := json.NewDecoder(bytes.NewReader(snap.Outputs))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		h.t.Fatalf("outputs %s: %v", snap.Outputs, err)
	}
	if out.Acceptance != string(delegate.AcceptancePendingVerification) || out.RemoteTaskID == "" {
		h.t.Fatalf("outputs %s", snap.Outputs)
	}
	var ids []string
	for _, a := range snap.Artifacts {
		ids = append(ids, a.ArtifactID)
	}
	for _, a := range out.Artifacts {
		if !slices.Contains(ids, string(a.ID)) {
			h.t.Fatalf("output artifact %s is not among the run's artifacts %v", a.ID, ids)
		}
	}
	return out
}

// delegationLeg drives the delegate-remote workflow against one real
// agent: send → completed → the admitted artifacts as the run's output,
// chunked artifacts reassembled, an input request answered through the
// run's interrupt, one declined (the remote task cancelled), a remote
// failure.
func delegationLeg(t *testing.T, peer *a2apeers.Peer) {
	h := newTestHost(t, withAgent("scripted", peer))
	skill := "scripted"

	t.Run("complete", func(t *testing.T) {
		h.t = t
		out := h.completedDelegation(h.delegateRun(`{"agent":"scripted","text":"complete"}`), peer)
		if out.Agent != "scripted" || out.Skill != skill || len(out.Artifacts) != 1 || out.Artifacts[0].ID != a2apeers.ResultID ||
			!slices.Equal(artifactTexts(out.Artifacts[0]), []string{a2apeers.CompletedText}) {
			t.Fatalf("outputs %+v", out)
		}
	})
	t.Run("chunked artifacts", func(t *testing.T) {
		h.t = t
		out := h.completedDelegation(h.delegateRun(`{"agent":"scripted","skill":"scripted","text":"artifacts:2"}`), peer)
		if len(out.Artifacts) != 2 {
			t.Fatalf("outputs %+v", out)
		}
		for i, a := range out.Artifacts {
			want := []string{"artifact " + itoa(int64(i+1)) + " chunk 1", "artifact " + itoa(int64(i+1)) + " chunk 2"}
			if !slices.Equal(artifactTexts(a), want) {
				t.Fatalf("artifact %d: %v, want %v", i, artifactTexts(a), want)
			}
		}
	})
	t.Run("input request answered", func(t *testing.T) {
		h.t = t
		runID := h.delegateRun(`{"agent":"scripted","text":"ask-input"}`)
		h.waitStatus(acmeKey, projected(runID), "waiting-input")
		snap := decode[snapshot](t, h.get(projected(runID), acmeKey))
		if len(snap.Interrupts) != 1 || snap.Interrupts[0].Kind != "clarification" || snap.Interrupts[0].NodeID != "delegate" ||
			snap.Interrupts[0].Message != "The remote agent asks: "+a2apeers.QuestionText {
			t.Fatalf("interrupts %+v", snap.Interrupts)
		}
		// Nothing went back to the agent before the user answered.
		before := len(peer.Calls())
		r := h.post(strings.TrimPrefix(snap.Interrupts[0].ResolveURL, h.url), acmeKey, `{"resumeValue":{"text":"forty-two"}}`)
		wantStatus(t, r, http.StatusOK)
		out := h.completedDelegation(runID, peer)
		if len(out.Artifacts) != 1 || out.Artifacts[0].ID != a2apeers.EchoID || !slices.Equal(artifactTexts(out.Artifacts[0]), []string{"forty-two"}) {
			t.Fatalf("outputs %+v", out)
		}
		answers := 0
		for _, c := range peer.Calls()[before:] {
			if c.Method == "SendMessage" || c.Method == "SendStreamingMessage" {
				answers++
			}
		}
		if answers != 1 {
			t.Fatalf("%d messages after the answer, want the one answer", answers)
		}
	})
	t.Run("input request declined", func(t *testing.T) {
		h.t = t
		runID := h.delegateRun(`{"agent":"scripted","text":"ask-input"}`)
		h.waitStatus(acmeKey, projected(runID), "waiting-input")
		snap := decode[snapshot](t, h.get(projected(runID), acmeKey))
		sub := interop.Subject{Tenant: tenantAcme, Principal: "key:" + tenantAcme, Authenticated: true}
		if _, err := h.store.ResolveInterrupt(context.Background(), sub, interop.ResolveRequest{
			RunID: runID, InterruptID: snap.Interrupts[0].InterruptID, Outcome: interop.OutcomeDecline,
		}); err != nil {
			t.Fatal(err)
		}
		events, _ := h.runLog(runID)
		if last := events[len(events)-1]; last.Type != "run.failed" || last.str("error.code") != codeInputDeclined {
			t.Fatalf("run ends with %s %s", last.Type, last.Payload)
		}
		if !slices.ContainsFunc(peer.Calls(), func(c a2apeers.Request) bool { return c.Method == "CancelTask" && c.TaskID != "" }) {
			t.Fatal("the remote task of a declined input request was not cancelled")
		}
	})
	for _, tc := range []struct{ name, inputs, code string }{
		{"remote failure", `{"agent":"scripted","text":"fail"}`, codeRemoteFailed},
		{"remote rejection", `{"agent":"scripted","text":"reject"}`, codeRemoteFailed},
		{"authentication required", `{"agent":"scripted","text":"auth-required"}`, codeCredentialRequired},
		{"skill not admitted", `{"agent":"scripted","skill":"other","text":"complete"}`, codeValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			before := len(peer.Calls())
			runID := h.delegateRun(tc.inputs)
			events, _ := h.runLog(runID)
			last := events[len(events)-1]
			if last.Type != "run.failed" || last.str("error.code") != tc.code {
				t.Fatalf("run ends with %s %s, want run.failed %s", last.Type, last.Payload, tc.code)
			}
			if tc.code == codeValidation && len(peer.Calls()) != before {
				t.Fatal("a step outside the admission reached the agent")
			}
			if tc.code == codeCredentialRequired && !slices.ContainsFunc(peer.Calls()[before:], func(c a2apeers.Request) bool { return c.Method == "CancelTask" }) {
				t.Fatal("a task waiting for authentication was left behind, not cancelled")
			}
		})
	}
}

func TestDelegateRemoteGo(t *testing.T) {
	delegationLeg(t, a2apeers.StartGo(t, a2apeers.Script{}))
}

// TestDelegateRemoteNode is the same leg against @a2a-js/sdk's server
// (skipped without Node, required in CI).
func TestDelegateRemoteNode(t *testing.T) {
	delegationLeg(t, a2apeers.StartNode(t, a2apeers.Script{}))
}

// TestDelegateRemoteAdmission: the workflow exists only with -a2a-agent;
// its agent is one of the admitted aliases (never a URL); the skills were
// pinned at start and logged with their digests; the bearer of
// -a2a-bearer-file reaches the agent and never the log.
func TestDelegateRemoteAdmission(t *testing.T) {
	plain := newTestHost(t)
	if r := plain.post("/runs", acmeKey, `{"workflowId":"`+delegateWorkflowID+`"}`); r.Status != http.StatusNotFound {
		t.Fatalf("delegate-remote without -a2a-agent: %d %s", r.Status, r.Body)
	}

	const token = "peer-token-0123456789"
	peer := a2apeers.StartGo(t, a2apeers.Script{BearerToken: token})
	h := newTestHost(t, withAgent("scripted", peer), func(c *config) { c.PeerBearer = token })
	if !regexp.MustCompile(`msg="remote agent admitted" agent=scripted skills="scripted=[0-9a-f]{64}" credential=true`).MatchString(h.logs.String()) {
		t.Fatalf("the start log does not pin the skills:\n%s", h.logs.String())
	}
	rr, dec := h.mcp(mcpReq{Key: acmeKey, Method: "tools/list"})
	wantStatus(t, rr, http.StatusOK)
	if !slices.Contains(mcpTools(dec.Result), delegateWorkflowID) {
		t.Errorf("delegate-remote is not an MCP tool: %v", mcpTools(dec.Result))
	}
	for _, inputs := range []string{`{"agent":"` + peer.URL + `"}`, `{"agent":"other"}`, `{}`} {
		r := h.post("/runs", acmeKey, `{"workflowId":"`+delegateWorkflowID+`","inputs":`+inputs+`}`)
		wantError(t, r, http.StatusBadRequest, codeValidation)
	}
	out := h.completedDelegation(h.delegateRun(`{"agent":"scripted","text":"complete"}`), peer)
	if len(out.Artifacts) != 1 {
		t.Fatalf("outputs %+v", out)
	}
	for _, c := range peer.Calls() {
		if c.Authorization != "Bearer "+token {
			t.Fatalf("%s carried Authorization %q", c.Method, c.Authorization)
		}
	}
	if strings.Contains(h.logs.String(), token) {
		t.Fatal("the bearer token reached the log")
	}
}

// TestDelegateRemoteCancelled: a delegate-remote run cancelled while the
// remote task waits for input cancels the remote task too.
func TestDelegateRemoteCancelled(t *testing.T) {
	peer := a2apeers.StartGo(t, a2apeers.Script{})
	h := newTestHost(t, withAgent("scripted", peer))
	runID := h.delegateRun(`{"agent":"scripted","text":"ask-input"}`)
	h.waitStatus(acmeKey, projected(runID), "waiting-input")
	wantStatus(t, h.post(projected(runID)+"/cancel", acmeKey, `{"reason":"changed my mind"}`), http.StatusOK)
	events, _ := h.runLog(runID)
	if last := events[len(events)-1]; last.Type != "run.cancelled" {
		t.Fatalf("run ends with %s", last.Type)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !slices.ContainsFunc(peer.Calls(), func(c a2apeers.Request) bool { return c.Method == "CancelTask" }) {
		if time.Now().After(deadline) {
			t.Fatalf("the remote task was not cancelled: %+v", peer.Calls())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDelegationStartRefusals: an -a2a-agent whose card cannot be read at
// start stops the host; bad flags are usage errors that never echo a
// token.
func TestDelegationStartRefusals(t *testing.T) {
	peer := a2apeers.StartGo(t, a2apeers.Script{})
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	keys, _ := parseKeys(defaultKeys)
	auth := newBearerKeys(keys)
	_, err := newHandler(config{Store: store, Auth: auth, BaseURL: "http://host.test", Workflows: store, Tenants: auth.Tenants(),
		Agents: []agentSpec{{Alias: "scripted", CardURL: peer.CardURL}}}) // no -peer-allow
	if err == nil || !strings.Contains(err.Error(), "-a2a-agent scripted") || !strings.Contains(err.Error(), "refused by the egress guard") ||
		strings.Contains(err.Error(), strings.TrimPrefix(peer.URL, "http://")) {
		t.Fatalf("%v, want the agent refused by the guard without its address", err)
	}
	if len(peer.Requests()) != 0 {
		t.Fatal("the refused agent was reached")
	}

	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("two words"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-a2a-agent", "noequals"}, "want alias=CARD_URL"},
		{[]string{"-a2a-agent", "bad alias=https://a.example/card"}, "want alias=CARD_URL"},
		{[]string{"-a2a-agent", "a=ftp://a.example/card"}, "absolute http(s) URL"},
		{[]string{"-a2a-agent", "a=https://a.example/card", "-a2a-agent", "a=https://b.example/card"}, `alias "a" is given twice`},
		{[]string{"-peer-allow", "127.0.0.1:9"}, "invalid -peer-allow"},
		{[]string{"-a2a-bearer-file", filepath.Join(t.TempDir(), "missing")}, "invalid -a2a-bearer-file"},
		{[]string{"-a2a-bearer-file", tokenFile}, "invalid -a2a-bearer-file: the file must hold one token"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &stdout, &stderr, nil); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want usage and %q", tt.args, code, stderr.String(), tt.want)
		}
		if strings.Contains(stderr.String(), "two words") {
			t.Errorf("%v: the token file's contents reached stderr", tt.args)
		}
	}
	if got, err := parseAllow(" http://127.0.0.1:9999 ,"); err != nil || !slices.Equal(got, []string{"http://127.0.0.1:9999"}) {
		t.Fatalf("parseAllow: %v %v", got, err)
	}
}
