package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/outbound"
)

// wantWire fails unless the server received exactly the JSON-RPC methods
// want, every one as a POST at MCP-Protocol-Version 2026-07-28.
func wantWire(t *testing.T, s *server, want ...string) {
	t.Helper()
	got := s.requests()
	var methods []string
	for _, r := range got {
		methods = append(methods, r.method)
		if r.httpMethod != http.MethodPost || r.version != Revision {
			t.Errorf("%s %q reached the server at MCP-Protocol-Version %q", r.httpMethod, r.method, r.version)
		}
	}
	if !reflect.DeepEqual(methods, want) {
		t.Fatalf("the server received %q, want %q", methods, want)
	}
}

// wantProjection checks the whole OpenWOP error ProjectError makes of err.
func wantProjection(t *testing.T, err error, status int, code string, details map[string]any) *outbound.Error {
	t.Helper()
	e := ProjectError(runID, err)
	if e == nil || e.Status != status || e.Code != code || !reflect.DeepEqual(e.Details, details) || e.Message == "" {
		t.Fatalf("projection %+v, want %d %s %v", e, status, code, details)
	}
	if !errors.Is(e, err) && e.Err != err {
		t.Fatal("the projection lost its cause")
	}
	return e
}

func TestConnectAccepted(t *testing.T) {
	s := newServer(t)
	s.addTool(tool("echo", "text"))
	f := newFixture(t, s, admission(s, tool("echo", "text")))
	sess := f.connect(t, context.Background(), runID, "echo")
	if sess.RunID != runID || sess.Version != Revision || sess.MaxRounds != 4 || sess.call == nil || sess.deps == nil ||
		sess.deps.events == nil || sess.deps.now == nil || sess.deps.log == nil || sess.link == nil {
		t.Fatalf("session %+v", sess)
	}
	if !reflect.DeepEqual(sess.Admission.Limits, (Limits{}).withDefaults()) {
		t.Fatalf("limits %+v, want the defaults filled", sess.Admission.Limits)
	}
	r, raw := f.sink.onlyRecord(t, runID)
	want := record{Protocol: "mcp", Outcome: "accepted", At: "2026-09-01T12:00:00Z", Version: Revision, Floor: Revision,
		Requested: Revision, Reason: "ok", PeerDigest: sha(s.http.URL)}
	if r != want {
		t.Fatalf("record %+v\nwant   %+v", r, want)
	}
	if host := strings.TrimPrefix(s.http.URL, "http://"); strings.Contains(string(raw), host) || strings.Contains(string(raw), "127.0.0.1") {
		t.Fatalf("the record names the server in clear: %s", raw)
	}
	// Connect sent server/discover and nothing else.
	wantWire(t, s, "server/discover")
	var body struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(s.requests()[0].body, &body); err != nil {
		t.Fatal(err)
	}
	// The capabilities are the ones stated: elicitation in both modes, no
	// deprecated roots, no sampling.
	if got := string(body.Params.Meta["io.modelcontextprotocol/clientCapabilities"]); got != `{"elicitation":{"form":{},"url":{}}}` {
		t.Fatalf("clientCapabilities %s", got)
	}
}

// TestConnectBelowFloorRefused: a server offering only 2025-06-18 is
// refused below the floor. The server received server/discover at
// 2026-07-28 and nothing else — not go-sdk's fallback, the legacy
// initialize handshake, which the transport refuses before the network.
func TestConnectBelowFloorRefused(t *testing.T) {
	s := newServer(t, withVersions("2025-06-18"))
	f := newFixture(t, s, admission(s))
	_, err := f.client.Connect(context.Background(), runID, "echo")
	var oe *outbound.Error
	if !errors.As(err, &oe) {
		t.Fatalf("%v, want an *outbound.Error", err)
	}
	body, _ := json.Marshal(map[string]any{"error": oe.Code, "message": oe.Message, "details": oe.Details})
	const wantBody = `{"details":{"protocol":"mcp","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"},"error":"interop_version_unsupported","message":"the peer offers no protocol version this host accepts"}`
	if oe.Status != http.StatusBadRequest || string(body) != wantBody {
		t.Fatalf("%d %s\nwant 400 %s", oe.Status, body, wantBody)
	}
	var ne *NegotiationError
	if !errors.As(err, &ne) || ne.Alias != "echo" || ne.Reason != "below-floor" {
		t.Fatalf("cause %v, want a below-floor *NegotiationError", err)
	}
	if ProjectError(runID, err) != oe {
		t.Fatal("ProjectError does not return the refusal as it is")
	}
	r, _ := f.sink.onlyRecord(t, runID)
	want := record{Protocol: "mcp", Outcome: "refused", At: "2026-09-01T12:00:00Z", Floor: Revision, Requested: Revision,
		Reason: "below-floor", PeerDigest: sha(s.http.URL)}
	if r != want {
		t.Fatalf("record %+v\nwant   %+v", r, want)
	}
	wantWire(t, s, "server/discover")
}

// TestConnectServerWithoutDiscover: a server that does not know
// server/discover (method not found, or a bare 404) speaks only revisions
// before 2026-07-28: refused below the floor, with only server/discover on
// the wire.
func TestConnectServerWithoutDiscover(t *testing.T) {
	for name, h := range map[string]http.Handler{
		"method not found": rpcAnswer(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32601,"message":"Method not found: server/discover"}}`),
		"bare 404":         rpcAnswer(http.StatusNotFound, "text/plain", "404 page not found"),
		"ts legacy 400":    rpcAnswer(http.StatusBadRequest, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Unsupported protocol version (supported versions: 2025-06-18)"}}`),
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t)
			s.setHandler(h)
			f := newFixture(t, s, admission(s))
			_, err := f.client.Connect(context.Background(), runID, "echo")
			var ne *NegotiationError
			if !errors.As(err, &ne) || ne.Reason != "below-floor" {
				t.Fatalf("%v, want a below-floor refusal", err)
			}
			if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "refused" || r.Reason != "below-floor" || r.Requested != Revision {
				t.Fatalf("record %+v", r)
			}
			wantWire(t, s, "server/discover")
		})
	}
}

// TestConnect32022NamesOnlyNewer: a -32022 naming only revisions the
// client does not speak is refused as unsupported.
func TestConnect32022(t *testing.T) {
	s := newServer(t)
	s.setHandler(rpcAnswer(http.StatusBadRequest, "application/json",
		`{"jsonrpc":"2.0","id":$ID,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2027-01-01"],"requested":"2026-07-28"}}}`))
	f := newFixture(t, s, admission(s))
	_, err := f.client.Connect(context.Background(), runID, "echo")
	var ne *NegotiationError
	if !errors.As(err, &ne) || ne.Reason != "unsupported" {
		t.Fatalf("%v, want an unsupported refusal", err)
	}
	if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "refused" || r.Reason != "unsupported" {
		t.Fatalf("record %+v", r)
	}
	wantWire(t, s, "server/discover")
}

// TestConnectPinnedRevision: a pinned revision the policy refuses is
// refused before anything is sent, and recorded with what was asked for;
// a pinned revision the server does not list is refused after discovery.
func TestConnectPinnedRevision(t *testing.T) {
	t.Run("below the floor", func(t *testing.T) {
		s := newServer(t)
		f := newFixture(t, s, admission(s), withAdmission(func(a *Admission) { a.Revision = "2025-06-18" }))
		_, err := f.client.Connect(context.Background(), runID, "echo")
		wantProjection(t, err, http.StatusBadRequest, outbound.CodeVersionUnsupported, map[string]any{"protocol": "mcp", "runId": runID})
		r, _ := f.sink.onlyRecord(t, runID)
		want := record{Protocol: "mcp", Outcome: "refused", At: "2026-09-01T12:00:00Z", Floor: Revision, Requested: "2025-06-18",
			Reason: "below-floor", PeerDigest: sha(s.http.URL)}
		if r != want {
			t.Fatalf("record %+v\nwant   %+v", r, want)
		}
		if got := s.requests(); len(got) != 0 {
			t.Fatalf("%d requests reached the server, want none", len(got))
		}
	})
	t.Run("not offered by the host", func(t *testing.T) {
		s := newServer(t)
		f := newFixture(t, s, admission(s), withAdmission(func(a *Admission) { a.Revision = "2027-01-01" }))
		_, err := f.client.Connect(context.Background(), runID, "echo")
		var ne *NegotiationError
		if !errors.As(err, &ne) || ne.Reason != "unsupported" {
			t.Fatalf("%v", err)
		}
		if r, _ := f.sink.onlyRecord(t, runID); r.Requested != "2027-01-01" || r.Reason != "unsupported" {
			t.Fatalf("record %+v", r)
		}
		if got := s.requests(); len(got) != 0 {
			t.Fatalf("%d requests reached the server, want none", len(got))
		}
	})
	t.Run("listed", func(t *testing.T) {
		s := newServer(t)
		f := newFixture(t, s, admission(s), withAdmission(func(a *Admission) { a.Revision = Revision }))
		sess := f.connect(t, context.Background(), runID, "echo")
		if sess.Version != Revision || sess.Admission.Revision != Revision {
			t.Fatalf("session %+v", sess)
		}
		if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "accepted" || r.Requested != Revision {
			t.Fatalf("record %+v", r)
		}
		wantWire(t, s, "server/discover")
	})
}

// TestConnectUnauthenticated: an exchange without a credential is
// recorded and lands on the preferred revision; no lower revision can be
// chosen, since New refuses a policy offering one.
func TestConnectUnauthenticated(t *testing.T) {
	s := newServer(t, withVersions("2026-07-28", "2025-11-25", "2025-06-18"))
	f := newFixture(t, s, admission(s))
	sess := f.connect(t, context.Background(), runID, "echo")
	if sess.Version != Revision {
		t.Fatalf("version %s", sess.Version)
	}
	if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "accepted" || r.Version != Revision || r.Reason != "ok" {
		t.Fatalf("record %+v", r)
	}
	for _, r := range s.requests() {
		if r.header.Get("Authorization") != "" {
			t.Fatal("an unauthenticated exchange presented a credential")
		}
	}
	wantWire(t, s, "server/discover")
}

func TestConnectPresentsCredential(t *testing.T) {
	s := newServer(t)
	s.addTool(tool("echo", "text"))
	f := newFixture(t, s, admission(s, tool("echo", "text")), withCredential("server-key", "s3cret"))
	sess := f.connect(t, context.Background(), runID, "echo")
	if _, err := sess.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Rotated: the next request presents the new value.
	f.creds.set("server-key", "Bearer rotated")
	if _, err := sess.call.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	var auths []string
	for _, r := range s.requests() {
		auths = append(auths, r.header.Get("Authorization"))
	}
	if want := []string{"Bearer s3cret", "Bearer s3cret", "Bearer rotated"}; !reflect.DeepEqual(auths, want) {
		t.Fatalf("Authorization %q, want %q", auths, want)
	}
	if r, raw := f.sink.onlyRecord(t, runID); r.Outcome != "accepted" || strings.Contains(string(raw), "s3cret") {
		t.Fatalf("record %s", raw)
	}
}

func TestConnectCredentialFailures(t *testing.T) {
	t.Run("unresolvable", func(t *testing.T) {
		s := newServer(t)
		f := newFixture(t, s, admission(s), withCredential("server-key", "s3cret"))
		f.creds.err = errors.New("vault sealed")
		_, err := f.client.Connect(context.Background(), runID, "echo")
		if !errors.Is(err, ErrCredential) {
			t.Fatalf("%v", err)
		}
		wantProjection(t, err, http.StatusNotFound, outbound.CodeCredentialNotFound, map[string]any{"protocol": "mcp", "runId": runID})
		if len(s.requests()) != 0 || len(f.sink.events(runID)) != 0 {
			t.Fatal("an unresolvable credential reached the network or the log")
		}
	})
	t.Run("expired", func(t *testing.T) {
		s := newServer(t)
		f := newFixture(t, s, admission(s), withCredential("server-key", "s3cret"),
			withAdmission(func(a *Admission) { a.Credential.Expiry = testNow }))
		_, err := f.client.Connect(context.Background(), runID, "echo")
		if !errors.Is(err, ErrCredentialExpired) {
			t.Fatalf("%v", err)
		}
		wantProjection(t, err, http.StatusUnprocessableEntity, outbound.CodeCredentialRequired, map[string]any{"protocol": "mcp", "runId": runID})
		if len(s.requests()) != 0 {
			t.Fatal("an expired credential reached the network")
		}
	})
	t.Run("challenged", func(t *testing.T) {
		s := newServer(t)
		s.setHandler(rpcAnswer(http.StatusUnauthorized, "text/plain", "no"))
		f := newFixture(t, s, admission(s))
		_, err := f.client.Connect(context.Background(), runID, "echo")
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 401 {
			t.Fatalf("%v, want a *StatusError 401", err)
		}
		wantProjection(t, err, http.StatusUnprocessableEntity, outbound.CodeCredentialRequired, map[string]any{"protocol": "mcp", "runId": runID})
		if evs := f.sink.events(runID); len(evs) != 0 {
			t.Fatalf("records %v without an answer to negotiate from", evs)
		}
	})
}

func TestConnectUnknownAlias(t *testing.T) {
	s := newServer(t)
	f := newFixture(t, s, admission(s))
	_, err := f.client.Connect(context.Background(), runID, s.endpoint())
	if !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("%v", err)
	}
	if len(s.requests()) != 0 || len(f.sink.events(runID)) != 0 {
		t.Fatal("an unknown alias reached the network or the log")
	}
	wantProjection(t, err, http.StatusBadRequest, outbound.CodeValidation, map[string]any{"protocol": "mcp", "runId": runID})
	if _, err := f.client.Connect(context.Background(), "", "echo"); err == nil {
		t.Fatal("Connect without a run")
	}
}

// TestConnectEgress: the egress guard refuses a private endpoint the host
// did not allowlist, and a redirect is never followed; neither is a
// negotiation.
func TestConnectEgress(t *testing.T) {
	t.Run("private endpoint", func(t *testing.T) {
		s := newServer(t)
		g, err := egress.NewGuard(egress.GuardOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, s, admission(s), func(d *Deps, _ *Options) { d.Guard = g })
		_, err = f.client.Connect(context.Background(), runID, "echo")
		var re *egress.RefusedError
		if !errors.As(err, &re) {
			t.Fatalf("%v, want an *egress.RefusedError", err)
		}
		if strings.Contains(err.Error(), "127.0.0.1") {
			t.Fatalf("the error names the endpoint: %v", err)
		}
		wantProjection(t, err, http.StatusForbidden, outbound.CodeForbidden, map[string]any{"protocol": "mcp", "runId": runID})
		if len(s.requests()) != 0 || len(f.sink.events(runID)) != 0 {
			t.Fatal("a refused destination reached the network or the log")
		}
	})
	t.Run("redirect", func(t *testing.T) {
		s := newServer(t)
		target := newServer(t)
		s.setHandler(http.RedirectHandler(target.endpoint(), http.StatusTemporaryRedirect))
		f := newFixture(t, s, admission(s))
		_, err := f.client.Connect(context.Background(), runID, "echo")
		var re *egress.RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("%v, want an *egress.RedirectError", err)
		}
		wantProjection(t, err, http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, map[string]any{"protocol": "mcp", "runId": runID})
		if len(target.requests()) != 0 || len(f.sink.events(runID)) != 0 {
			t.Fatal("the redirect was followed or negotiated")
		}
	})
}

// TestConnectRecordRefused: a record the run's log refuses fails Connect.
func TestConnectRecordRefused(t *testing.T) {
	s := newServer(t)
	f := newFixture(t, s, admission(s))
	f.sink.refuse = errors.New("log closed")
	if _, err := f.client.Connect(context.Background(), runID, "echo"); err == nil || !strings.Contains(err.Error(), "log closed") {
		t.Fatalf("%v", err)
	}
}
