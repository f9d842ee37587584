package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// The acceptance of the host as an MCP client, end to end against real
// servers: go-sdk v1.8.0's mcp.Server (mcppeers.StartGo) and the
// TypeScript SDK's @modelcontextprotocol/server 2.4.0 (mcppeers.StartNode:
// skipped without Node.js, failed instead under WOPINTEROP_REQUIRE_PEERS=1).
// Each drives the client as a host does — New, Connect, Tools, Call —
// and checks what reached the server and what reached the run's log.

// realPeer starts one kind of real MCP server.
type realPeer struct {
	name  string
	start func(testing.TB, mcppeers.Script) *mcppeers.Server
}

var realPeers = []realPeer{{"go-sdk", mcppeers.StartGo}, {"typescript-sdk", mcppeers.StartNode}}

// e2eMaxRounds is the host's mcp facet mrtr.maxRounds in these tests.
const e2eMaxRounds = 3

// listedDigests is what a host reviewing the server's listing admits: the
// digest of each tool as the server lists it now, by name. It lists
// through a client of its own, so nothing of it reaches the tests' logs
// or caches.
func listedDigests(t *testing.T, p *mcppeers.Server, auth string) map[string]string {
	t.Helper()
	var opts []fixtureOpt
	if auth != "" {
		opts = append(opts, withCredential("review-key", auth))
	}
	f := e2eFixture(t, p, nil, opts...)
	sess := f.connect(t, context.Background(), "acme/REVIEWAAAAAAAAAAAAAAAAAAAA", "peer")
	items, err := sess.list(context.Background(), toolsList)
	if err != nil {
		t.Fatalf("listing: %v", err)
	}
	out := map[string]string{}
	for _, it := range items {
		out[it.name] = it.digest
	}
	return out
}

// admitted admits the named tools with the digests given.
func admitted(digests map[string]string, names ...string) []AdmittedTool {
	var out []AdmittedTool
	for _, n := range names {
		out = append(out, AdmittedTool{Name: n, Digest: digests[n]})
	}
	return out
}

// e2eFixture is a client over p admitting tools under the alias "peer",
// with the host's ceiling e2eMaxRounds.
func e2eFixture(t *testing.T, p *mcppeers.Server, tools []AdmittedTool, opts ...fixtureOpt) *fixture {
	t.Helper()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{p.Base}})
	if err != nil {
		t.Fatal(err)
	}
	a := Admission{Alias: "peer", Endpoint: p.URL, Tenant: "acme", Principal: "user-1", Tools: tools}
	f := &fixture{sink: newSink(), creds: &staticCredentials{values: map[string]string{}}, clock: &clock{now: testNow}}
	d := Deps{Policy: mcpPolicy(t), Events: f.sink, Guard: g, Credentials: f.creds, Admissions: []Admission{a}, MaxRounds: e2eMaxRounds}
	o := Options{Now: f.clock.Now}
	for _, opt := range opts {
		opt(&d, &o)
	}
	if f.client, err = New(d, o); err != nil {
		t.Fatal(err)
	}
	return f
}

// validateLog checks every event on runID's log with the library's own
// check, the store's envelope filled in, and returns the log's
// negotiation.decided records.
func validateLog(t *testing.T, f *fixture, runID string) []record {
	t.Helper()
	var decided []record
	for i, ev := range f.sink.events(runID) {
		ev.EventID, ev.RunID, ev.Sequence = fmt.Sprintf("evt-%026d", i), runID, int64(i)
		if ev.Timestamp.IsZero() {
			ev.Timestamp = testNow
		}
		if err := ev.Validate(); err != nil {
			t.Errorf("event %d (%s) %s: %v", i, ev.Type, ev.Payload, err)
		}
		if ev.Type == interop.EventNegotiationDecided {
			var r record
			if err := json.Unmarshal(ev.Payload, &r); err != nil {
				t.Fatal(err)
			}
			decided = append(decided, r)
		}
	}
	return decided
}

// callsOf counts the tools/call of tool the server received.
func callsOf(p *mcppeers.Server, tool string) int {
	n := 0
	for _, q := range p.Calls("tools/call") {
		if q.ToolName == tool {
			n++
		}
	}
	return n
}

// TestE2E: list projected by the admission, a call, an elicitation round
// trip, the rounds ceiling, cancellation — one session of one run.
func TestE2E(t *testing.T) {
	for _, peer := range realPeers {
		t.Run(peer.name, func(t *testing.T) {
			p := peer.start(t, mcppeers.Script{})
			digests := listedDigests(t, p, "")
			f := e2eFixture(t, p, admitted(digests, mcppeers.Echo, mcppeers.NeedsInput, mcppeers.NeedsInputLoop, mcppeers.Slow))
			ctx := WithTraceContext(t.Context(), interop.TraceContext{TraceParent: traceparent})
			sess := f.connect(t, ctx, runID, "peer")

			// Discovery is not permission: fails is listed, not admitted.
			tools, err := sess.Tools(ctx)
			got := toolNames(tools)
			slices.Sort(got)
			if err != nil || !slices.Equal(got, []string{mcppeers.Echo, mcppeers.NeedsInput, mcppeers.NeedsInputLoop, mcppeers.Slow}) {
				t.Fatalf("Tools = %q, %v", got, err)
			}
			if _, ok := digests[mcppeers.Fails]; !ok {
				t.Fatalf("the server does not list %s: %v", mcppeers.Fails, digests)
			}
			_, err = sess.Call(ctx, CallRequest{Tool: mcppeers.Fails})
			var ae *AdmissionError
			if !errors.As(err, &ae) || ae.Problem != NotAdmitted || callsOf(p, mcppeers.Fails) != 0 {
				t.Fatalf("calling an unadmitted tool: %v; %d sent", err, callsOf(p, mcppeers.Fails))
			}

			t.Run("call", func(t *testing.T) {
				out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Echo, Arguments: json.RawMessage(`{"text":"hi"}`)})
				if err != nil || out.Calls != 1 || len(out.Result.Content) != 1 || out.Result.Content[0].Text != `{"text":"hi"}` ||
					!jsonEqual(out.Result.Structured, `{"text":"hi"}`) || out.Reconciliation != "" {
					t.Fatalf("Call = %+v (%+v), %v", out, out.Result, err)
				}
			})

			t.Run("elicitation", func(t *testing.T) {
				var seen []InputRound
				decide := func(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
					seen = append(seen, r)
					return map[string]*mcp.ElicitResult{mcppeers.NeedsInputKey: {Action: "accept", Content: map[string]any{"name": "Ada"}}}, nil
				}
				out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.NeedsInput, Elicitation: formOnly, Decide: decide})
				if err != nil || out.Calls != 2 || out.Rounds != 1 || !out.StateEchoed ||
					out.Result.Content[0].Text != fmt.Sprintf(mcppeers.GreetingFormat, "Ada") {
					t.Fatalf("Call = %+v, %v", out, err)
				}
				if len(seen) != 1 || len(seen[0].Requests) != 1 || seen[0].Requests[0].ID != mcppeers.NeedsInputKey || seen[0].Requests[0].Mode != "form" {
					t.Fatalf("the decider saw %+v", seen)
				}
				var retry struct{ RequestState string }
				calls := p.Calls("tools/call")
				if err := json.Unmarshal(calls[len(calls)-1].Params, &retry); err != nil || retry.RequestState != mcppeers.NeedsInputState {
					t.Fatalf("the retry's requestState %q (%v)", retry.RequestState, err)
				}
			})

			t.Run("rounds ceiling", func(t *testing.T) {
				decisions := 0
				decide := func(context.Context, InputRound) (map[string]*mcp.ElicitResult, error) {
					decisions++
					return map[string]*mcp.ElicitResult{mcppeers.LoopKey: {Action: "accept", Content: map[string]any{"name": "Ada"}}}, nil
				}
				out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.NeedsInputLoop, Elicitation: formOnly, Decide: decide})
				var re *RoundsError
				if !errors.As(err, &re) || re.MaxRounds != e2eMaxRounds || out.Reconciliation != outbound.FailedPossibleEffect {
					t.Fatalf("Call = %+v, %v", out, err)
				}
				e := ProjectError(runID, err)
				want := &outbound.Error{Status: http.StatusUnprocessableEntity, Code: "mcp_mrtr_rounds_exceeded",
					Message: "the MCP server asked for input more times than the host allows",
					Details: map[string]any{"protocol": "mcp", "runId": runID, "maxRounds": e2eMaxRounds}, Err: err}
				if !reflect.DeepEqual(e, want) {
					t.Fatalf("projection %+v\nwant       %+v", e, want)
				}
				// At most maxRounds + 1 reach the server: exactly that many,
				// as the tool never stops asking; the round past the ceiling
				// is refused before the decider or the server sees it.
				if n := callsOf(p, mcppeers.NeedsInputLoop); n != e2eMaxRounds+1 || out.Calls != n || decisions != e2eMaxRounds {
					t.Fatalf("the server saw %d tools/call, the outcome %+v, %d decisions", n, out, decisions)
				}
			})

			t.Run("cancellation", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				go func() {
					p.WaitSlow(t, 0, false)
					cancel()
				}()
				out, err := sess.Call(cctx, CallRequest{Tool: mcppeers.Slow})
				if !errors.Is(err, context.Canceled) || out.Reconciliation != outbound.CancelRequestedRemoteUnknown || out.Calls != 1 {
					t.Fatalf("Call = %+v, %v", out, err)
				}
				waitCancelNotified(t, p)
				if n := callsOf(p, mcppeers.Slow); n != 1 {
					t.Fatalf("%d slow calls, want 1: a cancelled call is never sent again", n)
				}
			})

			// One negotiation.decided (accepted) for the one Connect; the
			// rounds ceiling and the cancellation each left a
			// reconciliation record; everything on the log validates.
			decided := validateLog(t, f, runID)
			if len(decided) != 1 || decided[0].Outcome != "accepted" || decided[0].Version != Revision {
				t.Fatalf("negotiation records %+v", decided)
			}
			if n := len(runEvents(f, EventReconciled)); n != 2 {
				t.Fatalf("%d reconciliation records, want 2: %+v", n, f.sink.events(runID))
			}
		})
	}
}

// TestE2EBelowFloor: a server offering only 2025-06-18 is refused below
// the floor: the whole projection, exactly one refused record on the
// run's log, and nothing but server/discover sent. (The TypeScript SDK's
// server/discover always reports 2026-07-28, so it cannot be this server.)
func TestE2EBelowFloor(t *testing.T) {
	for name, start := range map[string]func(*testing.T) *mcppeers.Server{
		"legacy server": func(t *testing.T) *mcppeers.Server { return mcppeers.StartLegacy(t, mcppeers.Legacy20250618) },
		"go-sdk 2025-06-18": func(t *testing.T) *mcppeers.Server {
			return mcppeers.StartGo(t, mcppeers.Script{Revisions: []string{"2025-06-18"}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := start(t)
			f := e2eFixture(t, p, nil)
			sess, err := f.client.Connect(context.Background(), runID, "peer")
			if sess != nil {
				t.Fatal("a session below the floor")
			}
			e := ProjectError(runID, err)
			want := &outbound.Error{Status: http.StatusBadRequest, Code: "interop_version_unsupported",
				Message: "the peer offers no protocol version this host accepts",
				Details: map[string]any{"protocol": "mcp", "runId": runID}}
			if e == nil || e.Status != want.Status || e.Code != want.Code || e.Message != want.Message || !reflect.DeepEqual(e.Details, want.Details) {
				t.Fatalf("projection %+v\nwant       %+v", e, want)
			}
			var ne *NegotiationError
			if !errors.As(err, &ne) || ne.Reason != "below-floor" {
				t.Fatalf("cause %v", err)
			}
			decided := validateLog(t, f, runID)
			if len(f.sink.events(runID)) != 1 || len(decided) != 1 || decided[0].Outcome != "refused" || decided[0].Reason != "below-floor" ||
				decided[0].Requested != Revision {
				t.Fatalf("run log %+v", f.sink.events(runID))
			}
			reqs := p.Requests()
			if len(reqs) != 1 || reqs[0].Method != "server/discover" || reqs[0].ProtocolVersion != Revision {
				t.Fatalf("the server received %+v; want only server/discover at %s", reqs, Revision)
			}
		})
	}
}

// TestE2EListChanged: a tool added by a list change stays invisible and
// uncallable until the host admits it; a schema change hides an admitted
// tool; a session that does not listen keeps serving its cached list
// within ttlMs.
func TestE2EListChanged(t *testing.T) {
	for _, peer := range realPeers {
		t.Run(peer.name, func(t *testing.T) {
			p := peer.start(t, mcppeers.Script{ListCache: mcppeers.PrivateList()})
			digests := listedDigests(t, p, "")
			f := e2eFixture(t, p, admitted(digests, mcppeers.Echo))
			ctx := t.Context()
			sess := f.connect(t, ctx, runID, "peer")
			// A second client that does not listen: its cache is told
			// nothing.
			deaf := e2eFixture(t, p, admitted(digests, mcppeers.Echo), withOptions(func(o *Options) { o.NoListChanges = true }))
			deafSess := deaf.connect(t, ctx, runID, "peer")
			for _, s := range []*Session{sess, sess, deafSess} {
				if tools, err := s.Tools(ctx); err != nil || !slices.Equal(toolNames(tools), []string{mcppeers.Echo}) {
					t.Fatalf("Tools = %q, %v", toolNames(tools), err)
				}
			}
			if n := len(p.Calls("tools/list")); n != 3 { // the review's, sess's (then cached), deafSess's
				t.Fatalf("%d tools/list, want 3", n)
			}
			waitListening(t, sess, 1)

			// A tool is added: the server notifies, the next list is
			// fetched, and the tool is neither shown nor callable.
			added := &mcp.Tool{Name: "added", Description: "Added while the host listened.", InputSchema: json.RawMessage(`{"type":"object"}`)}
			p.SetTools(append(mcppeers.DefaultTools(), added))
			waitHeard(t, sess, 1)
			lists := len(p.Calls("tools/list"))
			tools, err := sess.Tools(ctx)
			if err != nil || !slices.Equal(toolNames(tools), []string{mcppeers.Echo}) || len(p.Calls("tools/list")) != lists+1 {
				t.Fatalf("after the change: Tools = %q, %v; tools/list %d -> %d", toolNames(tools), err, lists, len(p.Calls("tools/list")))
			}
			items, err := sess.list(ctx, toolsList)
			if err != nil || !slices.ContainsFunc(items, func(it listed) bool { return it.name == "added" }) {
				t.Fatalf("the server's list %+v, %v", items, err)
			}
			_, err = sess.Call(ctx, CallRequest{Tool: "added"})
			var ae *AdmissionError
			if !errors.As(err, &ae) || ae.Problem != NotAdmitted || callsOf(p, "added") != 0 {
				t.Fatalf("calling the added tool: %v; %d sent", err, callsOf(p, "added"))
			}
			// The deaf session's cache still serves its list, within ttlMs.
			if _, err := deafSess.Tools(ctx); err != nil || len(p.Calls("tools/list")) != lists+1 {
				t.Fatalf("the deaf session fetched: %v, tools/list %d", err, len(p.Calls("tools/list")))
			}

			// Admitted with its digest, the next session shows and calls it.
			var addedDigest string
			for _, it := range items {
				if it.name == "added" {
					addedDigest = it.digest
				}
			}
			a, _ := f.client.Admission("peer")
			a.Tools = append(a.Tools, AdmittedTool{Name: "added", Digest: addedDigest})
			if err := f.client.Admit(a); err != nil {
				t.Fatal(err)
			}
			sess2 := f.connect(t, ctx, runID, "peer")
			tools, err = sess2.Tools(ctx)
			got := toolNames(tools)
			slices.Sort(got)
			if err != nil || !slices.Equal(got, []string{"added", mcppeers.Echo}) {
				t.Fatalf("after admission: Tools = %q, %v", got, err)
			}
			if out, err := sess2.Call(ctx, CallRequest{Tool: "added", Arguments: json.RawMessage(`{"a":1}`)}); err != nil || callsOf(p, "added") != 1 {
				t.Fatalf("calling the admitted tool: %+v, %v", out, err)
			}

			// An admitted tool's definition changes: hidden and refused,
			// nothing sent.
			waitListening(t, sess2, 1)
			heard := listenerOf(t, sess2).heard.Load()
			changed := append(mcppeers.DefaultTools(), added)
			changed[0].Description += " Now with more."
			p.SetTools(changed)
			waitHeard(t, sess2, heard+1)
			if tools, err := sess2.Tools(ctx); err != nil || !slices.Equal(toolNames(tools), []string{"added"}) {
				t.Fatalf("after the schema change: Tools = %q, %v", toolNames(tools), err)
			}
			echoes := callsOf(p, mcppeers.Echo)
			if _, err := sess2.Call(ctx, CallRequest{Tool: mcppeers.Echo}); !errors.As(err, &ae) || ae.Problem != Changed || callsOf(p, mcppeers.Echo) != echoes {
				t.Fatalf("calling the changed tool: %v; %d sent", err, callsOf(p, mcppeers.Echo)-echoes)
			}
			validateLog(t, f, runID)
		})
	}
}

// listAuthorizations is the Authorization of each tools/list the server
// received after the first skip.
func listAuthorizations(p *mcppeers.Server, skip int) []string {
	var out []string
	for _, q := range p.Calls("tools/list")[skip:] {
		out = append(out, q.Authorization)
	}
	return out
}

// TestE2ECache: two principals never share a private list, and a rotated
// credential (same reference, new value) is a new authorization context.
func TestE2ECache(t *testing.T) {
	own := func(name string) []*mcp.Tool {
		return []*mcp.Tool{{Name: name, Description: "Listed for one caller.", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	}
	for _, peer := range realPeers {
		t.Run(peer.name, func(t *testing.T) {
			p := peer.start(t, mcppeers.Script{ListCache: mcppeers.PrivateList(), CallerTools: map[string][]*mcp.Tool{
				"tok-alice": own("alice_tool"), "tok-alice-2": own("alice_tool"), "tok-bob": own("bob_tool"),
			}})
			aliceTools, bobTools := listedDigests(t, p, "tok-alice"), listedDigests(t, p, "tok-bob")
			both := admitted(aliceTools, mcppeers.Echo, "alice_tool")
			both = append(both, admitted(bobTools, "bob_tool")...)
			f := e2eFixture(t, p, nil, func(d *Deps, _ *Options) {
				base := d.Admissions[0]
				alice, bob := base, base
				alice.Alias, alice.Principal, alice.Tools, alice.Credential = "alice", "alice", both, CredentialRef{Name: "alice-key", Owner: "alice"}
				bob.Alias, bob.Principal, bob.Tools, bob.Credential = "bob", "bob", both, CredentialRef{Name: "bob-key", Owner: "bob"}
				d.Admissions = []Admission{alice, bob}
			})
			f.creds.set("alice-key", "Bearer tok-alice")
			f.creds.set("bob-key", "Bearer tok-bob")
			ctx := t.Context()
			aliceSess, bobSess := f.connect(t, ctx, runID, "alice"), f.connect(t, ctx, runID, "bob")
			lists := len(p.Calls("tools/list"))

			names := func(s *Session) []string {
				t.Helper()
				tools, err := s.Tools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got := toolNames(tools)
				slices.Sort(got)
				return got
			}
			if got := names(aliceSess); !slices.Equal(got, []string{"alice_tool", mcppeers.Echo}) {
				t.Fatalf("alice sees %q", got)
			}
			if got := names(bobSess); !slices.Equal(got, []string{"bob_tool", mcppeers.Echo}) {
				t.Fatalf("bob sees %q: alice's private list was shared", got)
			}
			names(aliceSess) // cached
			if got := listAuthorizations(p, lists); !slices.Equal(got, []string{"Bearer tok-alice", "Bearer tok-bob"}) {
				t.Fatalf("tools/list on the wire under %q", got)
			}

			// The credential rotates under the same reference: the cached
			// list was fetched under the old value and is not served.
			f.creds.set("alice-key", "Bearer tok-alice-2")
			if got := names(aliceSess); !slices.Equal(got, []string{"alice_tool", mcppeers.Echo}) {
				t.Fatalf("alice sees %q after the rotation", got)
			}
			if got := listAuthorizations(p, lists); !slices.Equal(got, []string{"Bearer tok-alice", "Bearer tok-bob", "Bearer tok-alice-2"}) {
				t.Fatalf("after the rotation, tools/list on the wire under %q", got)
			}
			// The host says the credential changed: dropped whatever its
			// value.
			f.client.InvalidateCredential(CredentialRef{Name: "alice-key", Owner: "alice"})
			names(aliceSess)
			names(bobSess) // bob's list is not alice's credential's
			if got := listAuthorizations(p, lists); len(got) != 4 || got[3] != "Bearer tok-alice-2" {
				t.Fatalf("after InvalidateCredential, tools/list on the wire under %q", got)
			}
		})
	}
}
