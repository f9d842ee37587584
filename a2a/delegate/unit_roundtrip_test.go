package delegate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/outbound"
	"github.com/wopinterop/wopinterop/workunit"
)

// The work-unit round trip: our client delegates a step carrying a unit to
// this module's own A2A server, over memstore, whose workflow opens the
// unit it was sent and returns a result unit.

// The unit host: tenant acme, one caller, one workflow.
const (
	unitTenant   = "acme"
	unitKey      = "key-acme"
	unitWorkflow = "unit-review"
	// unitKind and verdictKind are the kinds of the unit sent and of the
	// result units.
	unitKind    = "com.example.invoice.review"
	verdictKind = "com.example.invoice.verdict"
)

var unitCaller = interop.Subject{Tenant: unitTenant, Principal: "alice", Authenticated: true}

// How the workflow answers, chosen by the "reply" member of the unit's
// body ("at" is the byte a tampered result changes).
const (
	replyVerdict  = "verdict"         // a result unit naming the unit sent
	replyNone     = "none"            // a text artifact, no result unit
	replyTampered = "tampered-result" // a result unit with byte "at" (-1: a digest digit) changed
	replyOther    = "other-result"    // a result unit naming another unit
	replyTwo      = "two-results"     // two artifacts, each with a result unit
)

// unitHost is the RunStore of the unit host: memstore behind the check a
// host makes when a run starts from a unit — it opens the unit and
// refuses the run when it does not open (workunit package documentation,
// §Where a host checks), so a refused unit creates no run and the caller
// gets invalid params. It keeps every unit that opened.
type unitHost struct {
	interop.RunStore
	mu     sync.Mutex
	opened []workunit.Envelope
}

func (h *unitHost) CreateRun(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	env, err := workunit.FromMessage(req.Message)
	if err != nil {
		return interop.Run{}, false, &interop.InputError{Field: "message.parts", Reason: err.Error()}
	}
	h.mu.Lock()
	h.opened = append(h.opened, env)
	h.mu.Unlock()
	return h.RunStore.CreateRun(ctx, s, req)
}

func (h *unitHost) lastOpened(t *testing.T) workunit.Envelope {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.opened) == 0 {
		t.Fatal("no unit reached the host")
	}
	return h.opened[len(h.opened)-1]
}

// runs counts acme's runs.
func (h *unitHost) runs(t *testing.T) int {
	t.Helper()
	page, err := h.RunStore.ListRuns(context.Background(), unitCaller, interop.ListRunsQuery{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	return page.Total
}

// reviewUnit is the workflow: it opens the unit the run's first message
// carries and answers as its body's "reply" says.
func reviewUnit(store *memstore.Store) func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	return func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
		run, err := store.GetRun(ctx, unitCaller, rc.RunID())
		if err != nil {
			return nil, err
		}
		sent, err := workunit.FromMessage(&run.Messages[0])
		if err != nil {
			return nil, memstore.Fail(err.Error())
		}
		var body struct {
			Reply string `json:"reply"`
			At    int    `json:"at"`
		}
		if err := json.Unmarshal(sent.Unit().Body, &body); err != nil {
			return nil, err
		}
		verdict := func(resultOf string) interop.Part {
			result, err := workunit.Seal(workunit.Unit{Kind: verdictKind, ResultOf: resultOf, Body: json.RawMessage(`{"approved":true}`)})
			if err != nil {
				panic(err) // a fixed, valid unit
			}
			return result.InteropPart()
		}
		publish := func(id string, parts ...interop.Part) error {
			return rc.PublishArtifact(interop.Artifact{ID: id, Name: id, Parts: parts}, false, true)
		}
		switch body.Reply {
		case replyVerdict:
			err = publish("verdict", verdict(sent.Digest()))
		case replyNone:
			err = publish("note", interop.Part{Kind: interop.PartText, Text: "reviewed"})
		case replyTampered:
			p := verdict(sent.Digest())
			if body.At < 0 {
				meta := p.Metadata[workunit.ExtensionURI].(map[string]any)
				d := []byte(meta["sha256"].(string))
				d[0] = "01"[boolIndex(d[0] == '0')]
				meta["sha256"] = string(d)
			} else {
				p.Raw[body.At] ^= 0x01
			}
			err = publish("verdict", p)
		case replyOther:
			err = publish("verdict", verdict(strings.Repeat("ab", 32)))
		case replyTwo:
			if err = publish("verdict", verdict(sent.Digest())); err == nil {
				err = publish("verdict-2", verdict(sent.Digest()))
			}
		default:
			return nil, memstore.Fail("no reply named")
		}
		if err != nil {
			return nil, err
		}
		return json.RawMessage(`{"received":"` + sent.Digest() + `"}`), nil
	}
}

// tap sits between the client and the unit host: it records every call
// (its body and A2A-Extensions as the server received them) and can
// change a send's body, drop the request's A2A-Extensions, or drop the
// response's.
type tap struct {
	next http.Handler

	mu              sync.Mutex
	editSend        func(body []byte) []byte
	dropActivation  bool
	dropEcho        bool
	calls           []tapCall
	cardFetches     int
	lastSendRequest []byte
}

type tapCall struct {
	path       string
	extensions []string
	send       bool
}

func (p *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/.well-known/agent-card.json" {
		p.mu.Lock()
		p.cardFetches++
		p.mu.Unlock()
		p.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	send := isSend(r.URL.Path, body)
	p.mu.Lock()
	edit, dropActivation, dropEcho := p.editSend, p.dropActivation, p.dropEcho
	if send && edit != nil {
		body = edit(body)
	}
	if dropActivation {
		r.Header.Del("A2A-Extensions")
	}
	p.calls = append(p.calls, tapCall{path: r.URL.Path, extensions: r.Header.Values("A2A-Extensions"), send: send})
	if send {
		p.lastSendRequest = body
	}
	p.mu.Unlock()
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if dropEcho {
		w = &dropEchoWriter{ResponseWriter: w}
	}
	p.next.ServeHTTP(w, r)
}

func (p *tap) set(f func(p *tap)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *tap) snapshot() (calls []tapCall, lastSend []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls), p.lastSendRequest
}

// isSend reports whether a call sends a message: SendMessage or
// SendStreamingMessage, over either binding.
func isSend(path string, body []byte) bool {
	if strings.HasSuffix(path, "/message:send") || strings.HasSuffix(path, "/message:stream") {
		return true
	}
	var env struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &env)
	return env.Method == "SendMessage" || env.Method == "SendStreamingMessage"
}

// dropEchoWriter removes the response's A2A-Extensions before the header
// is written, keeping the stream flushable.
type dropEchoWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *dropEchoWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Del("A2A-Extensions")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *dropEchoWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *dropEchoWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush() //nolint:errcheck // a stream that cannot flush fails its client
}

func (w *dropEchoWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// unitFixture is the unit host on loopback behind a tap, and a Client
// that admits it.
type unitFixture struct {
	host   *unitHost
	tap    *tap
	url    string
	client *Client
	sink   *sink
}

// newUnitFixture starts the unit host — the card declaring the extension
// when declare is set, offering only binding — and a Client admitting it.
func newUnitFixture(t *testing.T, declare bool, binding wire.TransportProtocol) *unitFixture {
	t.Helper()
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Register(unitTenant, memstore.WorkflowDef{
		Workflow: interop.Workflow{ID: unitWorkflow, Name: "Review", Description: "Reviews the unit a message carries."},
		Run:      reviewUnit(store),
	}); err != nil {
		t.Fatal(err)
	}
	host := &unitHost{RunStore: store}
	mux := http.NewServeMux()
	tp := &tap{next: mux}
	ts := httptest.NewServer(tp)
	t.Cleanup(ts.Close)
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	opts := a2a.Options{
		HTTPJSONURL: ts.URL + "/rest", AgentCardURL: ts.URL + "/.well-known/agent-card.json",
		Card:      a2a.CardConfig{Name: "Unit host", Description: "Reviews work units.", Version: "1.0.0"},
		Streaming: true, DurableTasks: true, BlockTimeout: 10 * time.Second,
	}
	if declare {
		opts.Extensions = []wire.AgentExtension{workunit.AgentExtension()}
	}
	srv, err := a2a.New(a2a.Deps{
		Store: host, Policy: policy,
		Subjects: interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
			if r.Header.Get("Authorization") != "Bearer "+unitKey {
				return interop.Subject{}, interop.ErrUnauthenticated
			}
			return unitCaller, nil
		}),
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Map:     mapping.Builtin(), JSONRPCURL: ts.URL + "/rpc",
		Routed: []interop.Workflow{{ID: unitWorkflow, Name: "Review", Description: "Reviews the unit a message carries."}},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/.well-known/agent-card.json", onlyBinding(srv.AgentCard(), binding))
	mux.Handle("/rpc", srv.JSONRPC())
	mux.Handle("/rest/", http.StripPrefix("/rest", srv.HTTPJSON()))

	card := fetchCard(t, ts.URL+"/.well-known/agent-card.json")
	if workunit.Declared(card) != declare || len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].ProtocolBinding != binding {
		t.Fatalf("the host's card: %+v", card)
	}
	skill := card.Skills[0]
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	s := newSink()
	c, err := New(Deps{
		Policy: a2aPolicy(t, false), Events: s, Guard: g,
		Credentials: &staticCredentials{scheme: "Bearer", value: unitKey},
		Admissions: []Admission{{
			Alias: "units", CardURL: ts.URL + "/.well-known/agent-card.json", Credential: CredentialRef{Name: "unit-host"},
			Skills: []AdmittedSkill{{ID: skill.ID, Digest: SkillDigest(&skill)}}, DataClasses: []string{e2eClass},
			Limits: Limits{Deadline: 30 * time.Second},
		}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &unitFixture{host: host, tap: tp, url: ts.URL, client: c, sink: s}
}

// onlyBinding serves the card of h with only the interface of binding.
func onlyBinding(h http.Handler, binding wire.TransportProtocol) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var card map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &card); err != nil {
			http.Error(w, "card", http.StatusInternalServerError)
			return
		}
		var keep []any
		for _, i := range card["supportedInterfaces"].([]any) {
			if i.(map[string]any)["protocolBinding"] == string(binding) {
				keep = append(keep, i)
			}
		}
		card["supportedInterfaces"] = keep
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	})
}

func fetchCard(t *testing.T, url string) *wire.AgentCard {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var card wire.AgentCard
	if err := json.NewDecoder(res.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	return &card
}

// delegate connects on a fresh run and delegates a step carrying unit.
func (f *unitFixture) delegate(t *testing.T, unit workunit.Envelope, poll bool) (*Outcome, error, string) {
	t.Helper()
	runID := newE2ERunID()
	conn, err := f.client.Connect(t.Context(), runID, "units")
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	step := Step{Skill: unitWorkflow, DataClass: e2eClass, Parts: []*wire.Part{wire.NewTextPart("please review")}, Unit: &unit, Poll: poll}
	out, err := conn.Delegate(e2eCtx(t), step)
	return out, err, runID
}

// sealUnit seals a review unit whose body asks for reply.
func sealUnit(t *testing.T, reply string, at int) workunit.Envelope {
	t.Helper()
	body := `{"invoice":"INV-7","amount":1e2,"note":"Grüße <ok> \u2028","reply":"` + reply + `","at":` + strconv.Itoa(at) + `}`
	env, err := workunit.Seal(workunit.Unit{Kind: unitKind, ID: "unit-1", Body: json.RawMessage(body)})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

var unitBindings = []wire.TransportProtocol{wire.TransportProtocolJSONRPC, wire.TransportProtocolHTTPJSON}

// TestUnitRoundTrip: a unit sent through Delegate arrives at this module's
// A2A server byte for byte — its canonical bytes and digest, the message
// listing the extension, every request activating it — the workflow opens
// it and returns a result unit, and the completion comes back accepted:
// the result opened with its digest under an echoed activation and names
// the unit sent. Both bindings, streamed and polled; the request bytes on
// JSON-RPC are golden.
func TestUnitRoundTrip(t *testing.T) {
	for _, binding := range unitBindings {
		for _, poll := range []bool{false, true} {
			t.Run(string(binding)+"/poll="+strconv.FormatBool(poll), func(t *testing.T) {
				f := newUnitFixture(t, true, binding)
				sent := sealUnit(t, replyVerdict, 0)
				out, err, runID := f.delegate(t, sent, poll)
				if err != nil {
					t.Fatalf("Delegate: %v (%+v)", err, out)
				}
				got := f.host.lastOpened(t)
				if !bytes.Equal(got.Canonical(), sent.Canonical()) || got.Digest() != sent.Digest() {
					t.Fatalf("the host opened %q %s, want %q %s", got.Canonical(), got.Digest(), sent.Canonical(), sent.Digest())
				}
				if out.Status != interop.StatusCompleted || out.Acceptance != AcceptanceAccepted || len(out.Warnings) != 0 || out.ResultUnit == nil {
					t.Fatalf("outcome %+v, want completed and accepted", out)
				}
				if out.Unit.Acceptance() != workunit.Accepted || out.Unit.Request() != sent.Digest() || out.Unit.Result() != out.ResultUnit.Digest() {
					t.Fatalf("completion %+v", out.Unit)
				}
				if r := out.ResultUnit.Unit(); r.Kind != verdictKind || r.ResultOf != sent.Digest() || string(r.Body) != `{"approved":true}` {
					t.Fatalf("result unit %+v", r)
				}
				calls, send := f.tap.snapshot()
				if len(calls) == 0 {
					t.Fatal("no call reached the host")
				}
				for _, c := range calls {
					if !slices.Equal(c.extensions, []string{workunit.ExtensionURI}) {
						t.Fatalf("%s carried A2A-Extensions %q, want the extension", c.path, c.extensions)
					}
				}
				var msg *wire.Message
				if binding == wire.TransportProtocolJSONRPC {
					var env struct {
						Params wire.SendMessageRequest `json:"params"`
					}
					if err := json.Unmarshal(send, &env); err != nil {
						t.Fatal(err)
					}
					msg = env.Params.Message
				} else {
					var req wire.SendMessageRequest
					if err := json.Unmarshal(send, &req); err != nil {
						t.Fatal(err)
					}
					msg = req.Message
				}
				if !slices.Equal(msg.Extensions, []string{workunit.ExtensionURI}) || msg.ID != out.AttemptID {
					t.Fatalf("message %s extensions %q", msg.ID, msg.Extensions)
				}
				if binding == wire.TransportProtocolJSONRPC && !poll {
					golden.Check(t, "unit_send_request.json", append(bytes.ReplaceAll(send, []byte(out.AttemptID), []byte("att_0")), '\n'))
				}
				wantRunLog(t, f.sink, runID, "")
			})
		}
	}
}

// TestUnitResultNotAccepted: a result that does not verify leaves the
// completion pending verification, with a warning, and the results as
// admitted: no result unit (no warning: the host verifies its own way), a
// result unit with one byte changed anywhere (its bytes, its digest), a
// result of another unit, two result units, and a response that did not
// echo the extension.
func TestUnitResultNotAccepted(t *testing.T) {
	f := newUnitFixture(t, true, wire.TransportProtocolJSONRPC)
	resultLen := len(func() []byte {
		r, _ := workunit.Seal(workunit.Unit{Kind: verdictKind, ResultOf: strings.Repeat("0", 64), Body: json.RawMessage(`{"approved":true}`)})
		return r.Canonical()
	}())
	for _, tc := range []struct {
		name     string
		reply    string
		at       int
		dropEcho bool
		warned   bool
	}{
		{"no result unit", replyNone, 0, false, false},
		{"first byte changed", replyTampered, 0, false, true},
		{"middle byte changed", replyTampered, resultLen / 2, false, true},
		{"last byte changed", replyTampered, resultLen - 1, false, true},
		{"digest changed", replyTampered, -1, false, true},
		{"result of another unit", replyOther, 0, false, true},
		{"two result units", replyTwo, 0, false, true},
		{"extension not echoed", replyVerdict, 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.tap.set(func(p *tap) { p.dropEcho = tc.dropEcho })
			defer f.tap.set(func(p *tap) { p.dropEcho = false })
			sent := sealUnit(t, tc.reply, tc.at)
			out, err, runID := f.delegate(t, sent, false)
			if err != nil {
				t.Fatalf("Delegate: %v", err)
			}
			var want []Warning
			if tc.warned {
				want = []Warning{WarningResultUnitRefused}
			}
			if out.Status != interop.StatusCompleted || out.Acceptance != AcceptancePendingVerification || out.ResultUnit != nil ||
				out.Unit.Acceptance() != workunit.PendingVerification || out.Unit.Request() != sent.Digest() || !slices.Equal(out.Warnings, want) {
				t.Fatalf("outcome %+v (completion %+v), want completed, pending verification, warnings %v", out, out.Unit, want)
			}
			if len(out.Artifacts) == 0 {
				t.Fatal("the admitted results were dropped")
			}
			wantRunLog(t, f.sink, runID, "")
		})
	}
}

// TestUnitChangedInTransitFailsClosed: one byte changed anywhere on the
// way — each byte of the unit's bytes, each digit of its digest — and the
// receiving side (the host opening the unit at CreateRun) refuses it:
// invalid params, no run, and for the client a send refused before
// execution (failed-no-effect). Exhaustively on JSON-RPC, at both ends of
// each over HTTP+JSON.
func TestUnitChangedInTransitFailsClosed(t *testing.T) {
	for _, binding := range unitBindings {
		t.Run(string(binding), func(t *testing.T) {
			f := newUnitFixture(t, true, binding)
			sent := sealUnit(t, replyVerdict, 0)
			canonical, digest := sent.Canonical(), sent.Digest()
			bytesAt, digitsAt := allIndexes(len(canonical)), allIndexes(len(digest))
			if binding == wire.TransportProtocolHTTPJSON {
				bytesAt, digitsAt = []int{0, len(canonical) / 2, len(canonical) - 1}, []int{0, len(digest) - 1}
			}
			refused := func(what string, edit func(part map[string]any)) {
				t.Helper()
				f.tap.set(func(p *tap) { p.editSend = func(body []byte) []byte { return editUnitPart(t, body, edit) } })
				defer f.tap.set(func(p *tap) { p.editSend = nil })
				before := f.host.runs(t)
				out, err, runID := f.delegate(t, sent, false)
				kind, want := refusalOf(binding, runID)
				if !errors.Is(err, kind) || out.Reconciliation != outbound.FailedNoEffect || out.Status != interop.StatusFailed || out.TaskID != "" {
					t.Fatalf("%s: Delegate = %+v, %v; want %v, failed-no-effect", what, out, err, kind)
				}
				wantRendered(t, runID, err, want)
				if after := f.host.runs(t); after != before {
					t.Fatalf("%s: a refused unit created a run (%d → %d)", what, before, after)
				}
			}
			for _, i := range bytesAt {
				refused("byte "+strconv.Itoa(i), func(part map[string]any) {
					raw, err := base64.StdEncoding.DecodeString(part["raw"].(string))
					if err != nil {
						t.Fatal(err)
					}
					raw[i] ^= 0x01
					part["raw"] = base64.StdEncoding.EncodeToString(raw)
				})
			}
			for _, i := range digitsAt {
				refused("digest digit "+strconv.Itoa(i), func(part map[string]any) {
					meta := part["metadata"].(map[string]any)[workunit.ExtensionURI].(map[string]any)
					d := []byte(meta["sha256"].(string))
					d[i] = "01"[boolIndex(d[i] == '0')]
					meta["sha256"] = string(d)
				})
			}
		})
	}
}

// TestUnitMissingActivationFailsClosed: a request that reaches the host
// without A2A-Extensions does not activate the extension, and the host
// refuses the unit: invalid params, no run.
func TestUnitMissingActivationFailsClosed(t *testing.T) {
	for _, binding := range unitBindings {
		t.Run(string(binding), func(t *testing.T) {
			f := newUnitFixture(t, true, binding)
			f.tap.set(func(p *tap) { p.dropActivation = true })
			out, err, runID := f.delegate(t, sealUnit(t, replyVerdict, 0), false)
			kind, want := refusalOf(binding, runID)
			if !errors.Is(err, kind) || out.Reconciliation != outbound.FailedNoEffect {
				t.Fatalf("Delegate = %+v, %v; want %v, failed-no-effect", out, err, kind)
			}
			wantRendered(t, runID, err, want)
			if n := f.host.runs(t); n != 0 {
				t.Fatalf("%d runs, want none", n)
			}
			wantRunLog(t, f.sink, runID, out.AttemptID, reconciledJSON(out))
		})
	}
}

// TestUnitRefusedWhenTheCardDoesNotDeclareIt: the client fails closed
// before sending when the agent's card does not declare the extension:
// a *StepError on "unit", and no call reaches the agent.
func TestUnitRefusedWhenTheCardDoesNotDeclareIt(t *testing.T) {
	f := newUnitFixture(t, false, wire.TransportProtocolJSONRPC)
	out, err, runID := f.delegate(t, sealUnit(t, replyVerdict, 0), false)
	var se *StepError
	if out != nil || !errors.As(err, &se) || se.Field != "unit" || !errors.Is(err, ErrStepRefused) {
		t.Fatalf("Delegate = %+v, %v; want the step refused on its unit", out, err)
	}
	if calls, _ := f.tap.snapshot(); len(calls) != 0 {
		t.Fatalf("%d calls reached the agent, want none", len(calls))
	}
	wantRunLog(t, f.sink, runID, "")
}

// refusalOf is how the client reads the host refusing a unit at
// CreateRun (interop.InputError), and how it renders it: on JSON-RPC the
// server's -32602 invalid params; on HTTP+JSON its 400 INVALID_ARGUMENT
// Status, which names no reason, read by its status as invalid request.
// Both are refusals before execution, 400 validation_error.
func refusalOf(binding wire.TransportProtocol, runID string) (error, outbound.Error) {
	kind, text, reason := wire.ErrInvalidParams, "invalid params", "INVALID_PARAMS"
	if binding == wire.TransportProtocolHTTPJSON {
		kind, text, reason = wire.ErrInvalidRequest, "invalid request", "INVALID_REQUEST"
	}
	return kind, outbound.Error{Status: 400, Code: outbound.CodeValidation, Message: "the remote agent answered: " + text,
		Details: map[string]any{"protocol": "a2a", "runId": runID, "remoteError": reason}}
}

// editUnitPart applies edit to the unit's part of a send's body (JSON-RPC
// params.message, or the HTTP+JSON body's message) and re-encodes it.
func editUnitPart(t *testing.T, body []byte, edit func(part map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	req := doc
	if params, ok := doc["params"].(map[string]any); ok {
		req = params
	}
	found := false
	for _, p := range req["message"].(map[string]any)["parts"].([]any) {
		part := p.(map[string]any)
		if meta, ok := part["metadata"].(map[string]any); ok && meta[workunit.ExtensionURI] != nil {
			edit(part)
			found = true
		}
	}
	if !found {
		t.Fatal("the send carries no unit part")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
