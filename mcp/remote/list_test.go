package remote

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/outbound"
)

func names[T any](items []*T, name func(*T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func toolNames(ts []*mcp.Tool) []string { return names(ts, func(t *mcp.Tool) string { return t.Name }) }

// TestToolsProjectedThroughAdmission: of what the server lists, only the
// tools admitted with their current definition are visible; the others
// are refused before anything naming them is sent.
func TestToolsProjectedThroughAdmission(t *testing.T) {
	s := newServer(t)
	s.addTool(tool("echo", "text"))
	s.addTool(tool("unadmitted", "text"))
	s.addTool(tool("changed", "text"))
	a := admission(s, tool("echo", "text"), tool("changed", "before"), tool("gone", "text"))
	f := newFixture(t, s, a)
	sess := f.connect(t, context.Background(), runID, "echo")
	got, err := sess.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := toolNames(got); !slices.Equal(n, []string{"echo"}) {
		t.Fatalf("visible tools %q, want [echo]", n)
	}
	if got[0].Description != "Echoes <text> back." || got[0].InputSchema == nil {
		t.Fatalf("tool %+v", got[0])
	}
	s.reset()
	if tl, err := sess.admitted(context.Background(), "echo"); err != nil || tl.Name != "echo" {
		t.Fatalf("admitted(echo) = %v, %v", tl, err)
	}
	for name, problem := range map[string]Problem{"unadmitted": NotAdmitted, "changed": Changed, "gone": NotListed} {
		_, err := sess.admitted(context.Background(), name)
		var ae *AdmissionError
		if !errors.As(err, &ae) || *ae != (AdmissionError{Alias: "echo", Kind: "tool", Name: name, Problem: problem}) {
			t.Fatalf("admitted(%s) = %v, want %s", name, err, problem)
		}
		wantProjection(t, err, http.StatusForbidden, outbound.CodeForbidden, map[string]any{"protocol": "mcp", "runId": runID})
	}
	if n := s.count("tools/call"); n != 0 {
		t.Fatalf("%d tools/call reached the server", n)
	}
}

// TestSchemaChangeHidesTool: a tool whose input schema changes after
// admission disappears from the list and is refused, until the host
// admits it again with the new digest.
func TestSchemaChangeHidesTool(t *testing.T) {
	s := newServer(t)
	s.addTool(tool("echo", "text"))
	f := newFixture(t, s, admission(s, tool("echo", "text")))
	sess := f.connect(t, context.Background(), runID, "echo")
	if got, err := sess.Tools(context.Background()); err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	s.mcp.RemoveTools("echo")
	s.addTool(tool("echo", "message")) // the same name, another input schema
	// A new session (the host's next run) sees the server as it is now; no
	// cache hint was given, so nothing is served from a cache.
	sess = f.connect(t, context.Background(), runID+"B", "echo")
	s.reset()
	got, err := sess.Tools(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("visible %q, %v; want none", toolNames(got), err)
	}
	var ae *AdmissionError
	if _, err := sess.admitted(context.Background(), "echo"); !errors.As(err, &ae) || ae.Problem != Changed {
		t.Fatalf("%v, want Changed", err)
	}
	if n := s.count("tools/call"); n != 0 {
		t.Fatalf("%d tools/call reached the server", n)
	}
	// Admitted again: visible.
	if err := f.client.Admit(admission(s, tool("echo", "message"))); err != nil {
		t.Fatal(err)
	}
	sess = f.connect(t, context.Background(), runID+"C", "echo")
	if got, err := sess.Tools(context.Background()); err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
}

// TestAmbiguousNameMatchesNothing: a name listed twice matches no
// admission, whichever definition was admitted.
func TestAmbiguousNameMatchesNothing(t *testing.T) {
	items := markAmbiguous([]listed{{name: "a", digest: "1"}, {name: "b", digest: "2"}, {name: "a", digest: "3"}})
	if items[0].digest != "" || items[1].digest != "2" || items[2].digest != "" {
		t.Fatalf("%+v", items)
	}
}

func TestToolsPagination(t *testing.T) {
	s := newServer(t, withPageSize(2))
	var all []*mcp.Tool
	for _, n := range []string{"t1", "t2", "t3", "t4", "t5"} {
		s.addTool(tool(n, "x"))
		all = append(all, tool(n, "x"))
	}
	f := newFixture(t, s, admission(s, all...))
	sess := f.connect(t, context.Background(), runID, "echo")
	s.reset()
	got, err := sess.Tools(context.Background())
	if err != nil || !slices.Equal(toolNames(got), []string{"t1", "t2", "t3", "t4", "t5"}) {
		t.Fatalf("%q %v", toolNames(got), err)
	}
	if n := s.count("tools/list"); n != 3 {
		t.Fatalf("%d pages fetched, want 3", n)
	}
	// MaxPages 2 cannot hold the list.
	f = newFixture(t, s, admission(s, all...), withAdmission(func(a *Admission) { a.Limits.MaxPages = 2 }))
	sess = f.connect(t, context.Background(), runID, "echo")
	_, err = sess.Tools(context.Background())
	var le *ListError
	if !errors.As(err, &le) || le.Method != "tools/list" || le.InputRequired {
		t.Fatalf("%v, want a *ListError", err)
	}
	wantProjection(t, err, http.StatusBadRequest, outbound.CodeValidation, map[string]any{"protocol": "mcp", "runId": runID})
}

func TestToolsRepeatedCursor(t *testing.T) {
	s := newServer(t)
	f := newFixture(t, s, admission(s))
	sess := f.connect(t, context.Background(), runID, "echo")
	s.setHandler(rpcAnswer(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":$ID,"result":{"tools":[],"nextCursor":"again","ttlMs":60000}}`))
	_, err := sess.Tools(context.Background())
	var le *ListError
	if !errors.As(err, &le) || le.Problem != "the server repeated a pagination cursor" {
		t.Fatalf("%v", err)
	}
	if n := s.count("tools/list"); n != 2 {
		t.Fatalf("%d pages fetched, want 2", n)
	}
}

// TestListInputRequiredNeverCached: a list answered with input_required is
// refused and never cached.
func TestListInputRequiredNeverCached(t *testing.T) {
	s := newServer(t)
	f := newFixture(t, s, admission(s))
	sess := f.connect(t, context.Background(), runID, "echo")
	s.setHandler(rpcAnswer(http.StatusOK, "application/json",
		`{"jsonrpc":"2.0","id":$ID,"result":{"resultType":"input_required","inputRequests":{"i":{"method":"elicitation/create","params":{"message":"who?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"s","ttlMs":60000}}`))
	for range 2 {
		_, err := sess.Tools(context.Background())
		var le *ListError
		if !errors.As(err, &le) || !le.InputRequired {
			t.Fatalf("%v, want an input-required *ListError", err)
		}
		wantProjection(t, err, http.StatusUnprocessableEntity, outbound.CodeCapabilityRequired, map[string]any{"protocol": "mcp", "runId": runID})
	}
	if n := s.count("tools/list"); n != 2 {
		t.Fatalf("%d tools/list, want 2: an interim result was cached", n)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	s := newServer(t)
	res := &mcp.Resource{URI: "file:///doc.txt", Name: "doc", MIMEType: "text/plain"}
	other := &mcp.Resource{URI: "file:///other.txt", Name: "other"}
	for _, r := range []*mcp.Resource{res, other} {
		s.mcp.AddResource(r, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	}
	prompt := &mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}}
	s.mcp.AddPrompt(prompt, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	s.mcp.AddPrompt(&mcp.Prompt{Name: "unadmitted"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	a := admission(s)
	a.Resources = []AdmittedResource{{URI: res.URI, Digest: ResourceDigest(res)}, {URI: other.URI, Digest: ResourceDigest(&mcp.Resource{URI: other.URI, Name: "renamed"})}}
	a.Prompts = []AdmittedPrompt{{Name: "greet", Digest: PromptDigest(prompt)}}
	f := newFixture(t, s, a)
	sess := f.connect(t, context.Background(), runID, "echo")
	rs, err := sess.Resources(context.Background())
	if err != nil || len(rs) != 1 || rs[0].URI != res.URI {
		t.Fatalf("resources %v %v", rs, err)
	}
	ps, err := sess.Prompts(context.Background())
	if err != nil || len(ps) != 1 || ps[0].Name != "greet" {
		t.Fatalf("prompts %v %v", ps, err)
	}
}

// cacheFixture is a server caching its lists for ttlMs in scope, with two
// admitted tools, and a client over it with a settable clock.
func cacheFixture(t *testing.T, ttlMs int, scope string, opts ...fixtureOpt) (*server, *fixture) {
	t.Helper()
	s := newServer(t, withCache(ttlMs, scope))
	s.addTool(tool("echo", "text"))
	f := newFixture(t, s, admission(s, tool("echo", "text")), opts...)
	return s, f
}

// listsOnWire lists the tools of a new session of alias for run and
// returns how many tools/list reached the server.
func listsOnWire(t *testing.T, s *server, f *fixture, run, alias string) int {
	t.Helper()
	sess := f.connect(t, context.Background(), run, alias)
	before := s.count("tools/list")
	if got, err := sess.Tools(context.Background()); err != nil || len(got) != 1 {
		t.Fatalf("%v %v", toolNames(got), err)
	}
	return s.count("tools/list") - before
}

func TestCacheServesWithinTTL(t *testing.T) {
	s, f := cacheFixture(t, 60_000, "private")
	if n := listsOnWire(t, s, f, runID, "echo"); n != 1 {
		t.Fatalf("first list: %d requests", n)
	}
	// Another run of the same principal under the same credential.
	if n := listsOnWire(t, s, f, runID+"B", "echo"); n != 0 {
		t.Fatalf("second list within ttlMs: %d requests, want none", n)
	}
	f.clock.advance(59_999 * time.Millisecond)
	if n := listsOnWire(t, s, f, runID+"C", "echo"); n != 0 {
		t.Fatalf("just before ttlMs: %d requests, want none", n)
	}
	f.clock.advance(time.Millisecond)
	if n := listsOnWire(t, s, f, runID+"D", "echo"); n != 1 {
		t.Fatalf("at ttlMs: %d requests, want 1", n)
	}
}

func TestCacheCeilingAndZeroTTL(t *testing.T) {
	s, f := cacheFixture(t, 60_000, "public", withOptions(func(o *Options) { o.ListTTL = 10 * time.Second }))
	listsOnWire(t, s, f, runID, "echo")
	f.clock.advance(10 * time.Second)
	if n := listsOnWire(t, s, f, runID+"B", "echo"); n != 1 {
		t.Fatalf("past the client's ceiling: %d requests, want 1", n)
	}
	s, f = cacheFixture(t, 0, "public")
	listsOnWire(t, s, f, runID, "echo")
	if n := listsOnWire(t, s, f, runID+"B", "echo"); n != 1 {
		t.Fatalf("ttlMs 0: %d requests, want 1", n)
	}
}

// TestCacheBypassesGoSDK: with the client's cache disabled, every list
// reaches the server although the server allows caching — go-sdk's own
// per-session cache (blind to whose credential fetched a list) never
// serves.
func TestCacheBypassesGoSDK(t *testing.T) {
	s, f := cacheFixture(t, 60_000, "public", withOptions(func(o *Options) { o.ListTTL = -1 }))
	sess := f.connect(t, context.Background(), runID, "echo")
	for range 3 {
		if _, err := sess.Tools(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.count("tools/list"); n != 3 {
		t.Fatalf("%d tools/list for three lists, want 3", n)
	}
}

// TestCacheKeyedByAuthorization: a list is never served to another
// tenant, workspace, principal, credential or credential value — private
// or public alike.
func TestCacheKeyedByAuthorization(t *testing.T) {
	for _, scope := range []string{"private", "public"} {
		t.Run(scope, func(t *testing.T) {
			s, f := cacheFixture(t, 60_000, scope, withCredential("key-a", "alpha"))
			base, _ := f.client.Admission("echo")
			admit := func(alias string, mod func(*Admission)) {
				a := base
				a.Alias = alias
				mod(&a)
				if err := f.client.Admit(a); err != nil {
					t.Fatal(err)
				}
			}
			f.creds.set("key-b", "Bearer beta")
			admit("other-tenant", func(a *Admission) { a.Tenant = "globex" })
			admit("other-workspace", func(a *Admission) { a.Workspace = "ws-2" })
			admit("other-principal", func(a *Admission) { a.Principal = "user-2" })
			admit("other-credential", func(a *Admission) { a.Credential.Name = "key-b" })
			admit("same-key", func(*Admission) {})

			if n := listsOnWire(t, s, f, runID, "echo"); n != 1 {
				t.Fatalf("first: %d", n)
			}
			for _, alias := range []string{"other-tenant", "other-workspace", "other-principal", "other-credential"} {
				if n := listsOnWire(t, s, f, runID+alias, alias); n != 1 {
					t.Fatalf("%s: %d requests, want 1: a list crossed authorization contexts", alias, n)
				}
			}
			if n := listsOnWire(t, s, f, runID+"same", "same-key"); n != 0 {
				t.Fatalf("the same key under another alias: %d requests, want 0", n)
			}
			// The credential behind key-a rotates: a new authorization context.
			f.creds.set("key-a", "Bearer alpha-2")
			if n := listsOnWire(t, s, f, runID+"rotated", "echo"); n != 1 {
				t.Fatalf("after rotation: %d requests, want 1", n)
			}
			// The host says key-a's authorization changed: stale at once.
			f.client.InvalidateCredential(CredentialRef{Name: "key-a", Owner: "host", Scope: "tools"})
			if n := listsOnWire(t, s, f, runID+"invalidated", "echo"); n != 1 {
				t.Fatalf("after InvalidateCredential: %d requests, want 1", n)
			}
			// key-b's list was not touched.
			if n := listsOnWire(t, s, f, runID+"b2", "other-credential"); n != 0 {
				t.Fatalf("another credential's list was dropped: %d requests", n)
			}
		})
	}
}

func TestCacheBounded(t *testing.T) {
	now := testNow
	c := newListCache(func() time.Time { return now }, time.Minute, 2)
	k := func(p string) cacheKey { return cacheKey{principal: p, method: "tools/list"} }
	c.put(k("a"), nil, 30_000)
	c.put(k("b"), nil, 60_000)
	c.put(k("c"), nil, 60_000) // full: "a", nearest its expiry, goes
	if _, ok := c.get(k("a")); ok || c.len() != 2 {
		t.Fatalf("a kept; %d entries", c.len())
	}
	now = now.Add(time.Minute)
	c.put(k("d"), nil, 60_000) // full of expired entries: they go
	if c.len() != 1 {
		t.Fatalf("%d entries, want 1", c.len())
	}
	if _, ok := c.get(k("d")); !ok {
		t.Fatal("d missing")
	}
}

func (c *listCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
