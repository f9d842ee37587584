package hostapp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/a2a/delegate"
	"github.com/wopinterop/wopinterop/internal/a2apeers"
	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/internal/version"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// vendorTypes are the event types outside the OpenWOP registry a run of
// this host may log: the store's cancel request and the A2A client's
// content-free records.
var vendorTypes = map[interop.EventType]bool{
	memstore.EventCancelRequested: true,
	delegate.EventTranslationLoss: true,
	delegate.EventReconciled:      true,
}

// withPeerAllow lets the host's A2A client reach these local origins.
func withPeerAllow(origins ...string) hostOption {
	return func(c *config) { c.PeerAllow = append(c.PeerAllow, origins...) }
}

// invoke calls the a2a seam as acme with body.
func (h *testHost) invoke(body string) response {
	h.t.Helper()
	return h.post(a2aInvokePath, acmeKey, body)
}

// decided is a decoded negotiation.decided payload (OpenWOP interop.md
// §The audit event).
type decided struct {
	Protocol   string `json:"protocol"`
	Outcome    string `json:"outcome"`
	At         string `json:"at"`
	Version    string `json:"version"`
	Floor      string `json:"floor"`
	Requested  string `json:"requested"`
	Reason     string `json:"reason"`
	PeerDigest string `json:"peerDigest"`
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// runLog reads the whole log of runID as the suite does (GET
// /runs/{id}/events/poll), once the run is terminal, and checks what
// every log of the host as a client must hold: every event valid against
// the upstream RunEventDoc schema and registered payloads (or one of the
// library's vendor types), and no peer host in clear anywhere. It
// returns the events and the negotiation.decided records.
func (h *testHost) runLog(runID string, peerHosts ...string) ([]pollEvent, []decided) {
	h.t.Helper()
	t := h.t
	h.waitStatus(acmeKey, projected(runID), "completed", "failed", "cancelled")
	r := h.get(projected(runID)+"/events/poll?timeout=1", acmeKey)
	wantStatus(t, r, http.StatusOK)
	for _, host := range peerHosts {
		if bytes.Contains(r.Body, []byte(host)) {
			t.Errorf("the run's log names the peer %s in clear: %s", host, r.Body)
		}
	}
	validate := sharedspec.RunEventValidator(t)
	raw := decode[struct {
		Events []json.RawMessage `json:"events"`
	}](t, r)
	for i, doc := range raw.Events {
		if err := validate(doc); err != nil {
			t.Errorf("run %s event %d: %v\n%s", runID, i, err, doc)
		}
		var ev interop.RunEvent
		if err := json.Unmarshal(doc, &ev); err != nil {
			t.Fatal(err)
		}
		if err := ev.Validate(); err != nil {
			t.Errorf("run %s event %d: %v", runID, i, err)
		}
		if !ev.Type.Registered() && !vendorTypes[ev.Type] {
			t.Errorf("run %s event %d has unexpected type %q", runID, i, ev.Type)
		}
	}
	p := decode[poll](t, r)
	var records []decided
	for _, e := range p.Events {
		if e.Type != string(interop.EventNegotiationDecided) {
			continue
		}
		var d decided
		dec := json.NewDecoder(bytes.NewReader(e.Payload))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("negotiation.decided %s: %v", e.Payload, err)
		}
		records = append(records, d)
	}
	return p.Events, records
}

// onlyRecord is the one negotiation.decided of a log.
func onlyRecord(t *testing.T, records []decided) decided {
	t.Helper()
	if len(records) != 1 {
		t.Fatalf("%d negotiation.decided records, want exactly one: %+v", len(records), records)
	}
	if r := records[0]; r.Protocol != "a2a" || !hex64.MatchString(r.PeerDigest) || r.Floor != "1.0" {
		t.Fatalf("record %+v, want protocol a2a, floor 1.0 and a 64-hex peerDigest", r)
	}
	return records[0]
}

// normalizeRun replaces a run id in a body with RUN_ID, for golden bytes.
func normalizeRun(body []byte, runID string) []byte {
	return bytes.ReplaceAll(body, []byte(runID), []byte("RUN_ID"))
}

// TestA2AInvokeSeamAccepted: against a stock a2a-go agent the seam answers
// 200 {negotiatedVersion, runId} (golden bytes), the run's log holds
// exactly one negotiation.decided — accepted, 1.0, a 64-hex peerDigest, no
// peer host in clear — and the run completed; the agent got one
// SendMessage at 1.0 with returnImmediately and the host's credential.
func TestA2AInvokeSeamAccepted(t *testing.T) {
	peer := a2apeers.StartGo(t, a2apeers.Script{})
	h := newTestHost(t, withSeams, withPeerAllow(peer.URL))
	r := h.invoke(`{"peerUrl":"` + peer.URL + `"}`)
	wantStatus(t, r, http.StatusOK)
	got := decode[a2aInvokedView](t, r)
	if got.NegotiatedVersion != "1.0" || !strings.HasPrefix(got.RunID, tenantAcme+"/") {
		t.Fatalf("seam answered %s", r.Body)
	}
	golden.Check(t, "a2a-invoke-accepted.json", normalizeRun(r.Body, got.RunID))

	events, records := h.runLog(got.RunID, strings.TrimPrefix(peer.URL, "http://"), "127.0.0.1")
	if rec := onlyRecord(t, records); rec.Outcome != "accepted" || rec.Version != "1.0" || rec.Requested != "1.0" || rec.Reason != "ok" {
		t.Fatalf("record %+v", rec)
	}
	if last := events[len(events)-1]; last.Type != "run.completed" || !strings.Contains(string(last.Payload), `"negotiatedVersion":"1.0"`) {
		t.Fatalf("run ends with %s %s", last.Type, last.Payload)
	}
	calls := peer.Calls()
	if len(calls) != 1 || calls[0].Method != "SendMessage" || calls[0].Version != "1.0" || !strings.HasPrefix(calls[0].Authorization, "Bearer ") {
		t.Fatalf("the agent got %+v, want one SendMessage at 1.0 with a bearer credential", calls)
	}
	if !bytes.Contains(calls[0].Body, []byte(`"returnImmediately":true`)) {
		t.Errorf("the send does not ask to return immediately: %s", calls[0].Body)
	}
	if strings.Contains(h.logs.String(), strings.TrimPrefix(calls[0].Authorization, "Bearer ")) {
		t.Error("the seam's credential reached the log")
	}
}

// suitePeer is the OpenWOP suite's fake A2A peer as its library behaves:
// the 1.0 card only for a card request carrying A2A-Version: 1.0, else
// its first version's, 0.3-shaped; a SendMessage answered with a task
// that stays SUBMITTED forever; -32009 with HTTP 400 and error.data an
// object for a version it does not serve; -32004 for streaming methods.
type suitePeer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []string // "METHOD A2A-Version" of every JSON-RPC call
	cards []string // the A2A-Version of every card request
}

func startSuitePeer(t *testing.T) *suitePeer {
	p := &suitePeer{}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *suitePeer) serve(w http.ResponseWriter, r *http.Request) {
	base := p.srv.URL
	w.Header().Set("Content-Type", "application/json")
	v := r.Header.Get("A2A-Version")
	switch r.URL.Path {
	case wellKnownCard:
		p.mu.Lock()
		p.cards = append(p.cards, v)
		p.mu.Unlock()
		skills := `"skills":[{"id":"echo","name":"Echo","description":"Echoes the message.","tags":["test"]}]`
		if v == "1.0" {
			_, _ = io.WriteString(w, `{"name":"suite fake peer","description":"The suite's A2A peer.","version":"1.0.0",`+
				`"supportedInterfaces":[{"url":"`+base+`/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},`+
				`{"url":"`+base+`/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],`+
				`"capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],`+skills+`}`)
			return
		}
		_, _ = io.WriteString(w, `{"name":"suite fake peer","description":"The suite's A2A peer.","version":"1.0.0",`+
			`"protocolVersion":"0.3.0","url":"`+base+`/a2a/jsonrpc","preferredTransport":"JSONRPC",`+
			`"additionalInterfaces":[{"url":"`+base+`/a2a/jsonrpc","transport":"JSONRPC"}],`+
			`"capabilities":{"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],`+skills+`}`)
	case "/a2a/jsonrpc":
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Message json.RawMessage `json:"message"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		p.mu.Lock()
		p.calls = append(p.calls, req.Method+" "+v)
		p.mu.Unlock()
		switch {
		case v != "1.0":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32009,"message":"version not supported",`+
				`"data":{"reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","requested":"`+v+`","supportedVersions":["1.0","0.3"]}}}`)
		case req.Method == "SendMessage":
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"task":{"id":"task-1","contextId":"ctx-1",`+
				`"status":{"state":"TASK_STATE_SUBMITTED","timestamp":"2026-05-01T12:00:00Z"},"artifacts":[],"history":[`+string(req.Params.Message)+`]}}}`)
		default:
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32004,"message":"unsupported operation"}}`)
		}
	default:
		http.NotFound(w, r)
	}
}

func (p *suitePeer) seen() (calls, cards []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...), append([]string(nil), p.cards...)
}

// TestA2AInvokeSeamSuitePeer: the suite's peer, which serves its 1.0 card
// only to a card request asking for 1.0 and never completes a task, is
// met at 1.0: 200 without waiting for the task, one accepted record.
func TestA2AInvokeSeamSuitePeer(t *testing.T) {
	peer := startSuitePeer(t)
	h := newTestHost(t, withSeams, withPeerAllow(peer.srv.URL))
	r := h.invoke(`{"peerUrl":"` + peer.srv.URL + `","authenticated":true}`)
	wantStatus(t, r, http.StatusOK)
	got := decode[a2aInvokedView](t, r)
	if got.NegotiatedVersion != "1.0" {
		t.Fatalf("seam answered %s", r.Body)
	}
	_, records := h.runLog(got.RunID, strings.TrimPrefix(peer.srv.URL, "http://"))
	if rec := onlyRecord(t, records); rec.Outcome != "accepted" || rec.Version != "1.0" {
		t.Fatalf("record %+v", rec)
	}
	calls, cards := peer.seen()
	if len(calls) != 1 || calls[0] != "SendMessage 1.0" {
		t.Fatalf("calls %v, want one SendMessage at 1.0", calls)
	}
	for _, v := range cards {
		if v != "1.0" {
			t.Fatalf("card requests asked for %v, want 1.0 every time", cards)
		}
	}
	snap := decode[snapshot](t, h.get(projected(got.RunID), acmeKey))
	if snap.Status != "completed" || !strings.Contains(string(snap.Outputs), `"remoteState":"TASK_STATE_SUBMITTED"`) {
		t.Fatalf("run %s outputs %s", snap.Status, snap.Outputs)
	}
}

// TestA2AInvokeSeamBelowFloor: a peer offering only 0.3 — the suite's peer
// restricted by peerOffersOnly, and a2apeers' 0.3-only peer in both card
// shapes — is refused: 400 interop_version_unsupported with exactly
// details {runId, protocol} (golden bytes), one record with reason
// below-floor on that run's log, the run failed, and not one request to
// the peer but its card.
func TestA2AInvokeSeamBelowFloor(t *testing.T) {
	suite := startSuitePeer(t)
	legacy := a2apeers.StartLegacy03(t, a2apeers.LegacyCard03)
	legacyIfaces := a2apeers.StartLegacy03(t, a2apeers.LegacyInterfaces03)
	h := newTestHost(t, withSeams, withPeerAllow(suite.srv.URL, legacy.URL, legacyIfaces.URL))
	for name, tc := range map[string]struct {
		body  string
		calls func() int
		host  string
	}{
		"suite peer, peerOffersOnly 0.3": {`{"peerUrl":"` + suite.srv.URL + `","authenticated":true,"peerOffersOnly":"0.3"}`,
			func() int { c, _ := suite.seen(); return len(c) }, suite.srv.URL},
		"suite peer, requestVersion 0.3": {`{"peerUrl":"` + suite.srv.URL + `","requestVersion":"0.3"}`,
			func() int { c, _ := suite.seen(); return len(c) }, suite.srv.URL},
		"0.3 card": {`{"peerUrl":"` + legacy.URL + `","peerOffersOnly":"0.3"}`,
			func() int { return len(legacy.Calls()) }, legacy.URL},
		"1.0 card, 0.3 interfaces": {`{"peerUrl":"` + legacyIfaces.URL + `"}`,
			func() int { return len(legacyIfaces.Calls()) }, legacyIfaces.URL},
	} {
		t.Run(name, func(t *testing.T) {
			r := h.invoke(tc.body)
			d := wantError(t, r, http.StatusBadRequest, "interop_version_unsupported")
			runID, _ := d["runId"].(string)
			if len(d) != 2 || d["protocol"] != "a2a" || !strings.HasPrefix(runID, tenantAcme+"/") {
				t.Fatalf("details %v, want exactly runId and protocol", d)
			}
			golden.Check(t, "a2a-invoke-below-floor.json", normalizeRun(r.Body, runID))
			events, records := h.runLog(runID, strings.TrimPrefix(tc.host, "http://"))
			if rec := onlyRecord(t, records); rec.Outcome != "refused" || rec.Reason != "below-floor" || rec.Version != "" {
				t.Fatalf("record %+v", rec)
			}
			if last := events[len(events)-1]; last.Type != "run.failed" || last.str("error.code") != "interop_version_unsupported" {
				t.Fatalf("run ends with %s %s", last.Type, last.Payload)
			}
			if n := tc.calls(); n != 0 {
				t.Fatalf("the peer got %d calls besides its card, want none", n)
			}
		})
	}
}

// TestA2AInvokeSeamUnauthenticated: an unauthenticated exchange never goes
// below the preferred version: refused (below-floor, or unauthenticated),
// and nothing presented to the peer, not even on the card request.
func TestA2AInvokeSeamUnauthenticated(t *testing.T) {
	peer := a2apeers.StartLegacy03(t, a2apeers.LegacyInterfaces03)
	suite := startSuitePeer(t)
	h := newTestHost(t, withSeams, withPeerAllow(peer.URL, suite.srv.URL))
	for _, body := range []string{
		`{"peerUrl":"` + peer.URL + `","authenticated":false,"peerOffersOnly":"0.3"}`,
		`{"peerUrl":"` + suite.srv.URL + `","authenticated":false,"peerOffersOnly":"0.3"}`,
	} {
		r := h.invoke(body)
		d := wantError(t, r, http.StatusBadRequest, "interop_version_unsupported")
		_, records := h.runLog(d["runId"].(string))
		if rec := onlyRecord(t, records); rec.Outcome != "refused" || (rec.Reason != "below-floor" && rec.Reason != "unauthenticated") {
			t.Fatalf("record %+v", rec)
		}
	}
	for _, q := range peer.Requests() {
		if q.Authorization != "" || q.Binding != a2apeers.BindingCard {
			t.Fatalf("the peer got %s %s with Authorization %q", q.HTTPMethod, q.Path, q.Authorization)
		}
	}
	// Authenticated false toward a peer at 1.0: accepted, without a
	// credential.
	ok := a2apeers.StartGo(t, a2apeers.Script{})
	h2 := newTestHost(t, withSeams, withPeerAllow(ok.URL))
	wantStatus(t, h2.invoke(`{"peerUrl":"`+ok.URL+`","authenticated":false}`), http.StatusOK)
	if calls := ok.Calls(); len(calls) != 1 || calls[0].Authorization != "" {
		t.Fatalf("calls %+v, want one without a credential", calls)
	}
}

// TestA2AInvokeSeamEgressGuard: a local peer outside -peer-allow is refused
// by the egress guard before any request: 403 forbidden naming the run,
// which failed with no negotiation record (no card was read), and the
// peer saw nothing.
func TestA2AInvokeSeamEgressGuard(t *testing.T) {
	peer := a2apeers.StartGo(t, a2apeers.Script{})
	h := newTestHost(t, withSeams)
	r := h.invoke(`{"peerUrl":"` + peer.URL + `"}`)
	d := wantError(t, r, http.StatusForbidden, "forbidden")
	runID, _ := d["runId"].(string)
	if len(d) != 2 || d["protocol"] != "a2a" || runID == "" {
		t.Fatalf("details %v", d)
	}
	golden.Check(t, "a2a-invoke-egress.json", normalizeRun(r.Body, runID))
	if strings.Contains(string(r.Body), strings.TrimPrefix(peer.URL, "http://")) {
		t.Fatalf("the refusal names the peer: %s", r.Body)
	}
	events, records := h.runLog(runID, strings.TrimPrefix(peer.URL, "http://"))
	if len(records) != 0 || events[len(events)-1].Type != "run.failed" {
		t.Fatalf("run log %+v", events)
	}
	if q := peer.Requests(); len(q) != 0 {
		t.Fatalf("the peer got %d requests", len(q))
	}
}

// TestA2AInvokeSeamOff: without -conformance-seams the path is an unknown
// route, byte for byte.
func TestA2AInvokeSeamOff(t *testing.T) {
	peer := a2apeers.StartGo(t, a2apeers.Script{})
	h := newTestHost(t, withPeerAllow(peer.URL))
	r := h.invoke(`{"peerUrl":"` + peer.URL + `"}`)
	wantError(t, r, http.StatusNotFound, codeNotFound)
	if string(r.Body) != `{"error":"not_found","message":"no such resource"}`+"\n" {
		t.Errorf("seam while off: %s", r.Body)
	}
	if q := peer.Requests(); len(q) != 0 {
		t.Fatalf("the peer got %d requests", len(q))
	}
}

// TestA2AInvokeSeamBadInput: a body the seam cannot use is a 400
// validation_error naming the member, and creates no run.
func TestA2AInvokeSeamBadInput(t *testing.T) {
	h := newTestHost(t, withSeams)
	for body, field := range map[string]string{
		`{}`:                                      "peerUrl",
		`{"peerUrl":"/relative"}`:                 "peerUrl",
		`{"peerUrl":"ftp://peer.example"}`:        "peerUrl",
		`{"peerUrl":"https://u:p@peer.example"}`:  "peerUrl",
		`{"peerUrl":"https://peer.example/?q=1"}`: "peerUrl",
		`{"peerUrl":"https://peer.example","authenticated":"yes"}`:                         "authenticated",
		`{"peerUrl":"https://peer.example","peerOffersOnly":"zero"}`:                       "peerOffersOnly",
		`{"peerUrl":"https://peer.example","peerOffersOnly":["0.3"]}`:                      "peerOffersOnly",
		`{"peerUrl":"https://peer.example","requestVersion":"latest"}`:                     "requestVersion",
		`{"peerUrl":"https://peer.example","peerOffersOnly":"0.3","requestVersion":"1.0"}`: "requestVersion",
		`{"peerUrl":"https://peer.example","tenant":"globex"}`:                             "tenant",
	} {
		r := h.invoke(body)
		if d := wantError(t, r, http.StatusBadRequest, codeValidation); d["field"] != field {
			t.Errorf("%s: details %v, want field %s", body, d, field)
		}
	}
	golden.Check(t, "a2a-invoke-validation.json", h.invoke(`{"peerUrl":"/relative"}`).Body)
	wantError(t, h.do(req{Method: "POST", Path: a2aInvokePath, Key: acmeKey, Body: `{"peerUrl":"https://peer.example"}`, Type: "text/plain"}),
		http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	wantError(t, h.post(a2aInvokePath, "", `{"peerUrl":"https://peer.example"}`), http.StatusUnauthorized, codeUnauthenticated)
	runs := decode[struct {
		Runs []snapshot `json:"runs"`
	}](t, h.get("/runs", acmeKey))
	if len(runs.Runs) != 0 {
		t.Fatalf("refused calls created %d runs", len(runs.Runs))
	}
}

// TestA2AInvokeSeamWorkflowHidden: the seam's workflow is on no surface:
// not an MCP tool, and starting it is answered as for a workflow that
// does not exist.
func TestA2AInvokeSeamWorkflowHidden(t *testing.T) {
	h := newTestHost(t, withSeams)
	rr, dec := h.mcp(mcpReq{Key: acmeKey, Method: "tools/list"})
	wantStatus(t, rr, http.StatusOK)
	if got := mcpTools(dec.Result); strings.Join(got, ",") != strings.Join(workflowIDs(tenantAcme, h.url), ",") {
		t.Errorf("MCP tools with the seams on: %v", got)
	}
	hidden := h.post("/runs", acmeKey, `{"workflowId":"`+seamWorkflowID+`","inputs":{"call":"x"}}`)
	unknown := h.post("/runs", acmeKey, `{"workflowId":"no-such-workflow","inputs":{"call":"x"}}`)
	if hidden.Status != unknown.Status || !bytes.Equal(hidden.Body, unknown.Body) {
		t.Errorf("starting the hidden workflow: %d %s; an unknown one: %d %s", hidden.Status, hidden.Body, unknown.Status, unknown.Body)
	}
}

// FuzzA2AInvokeBody: the seam's body decoder never panics, and what it
// accepts is usable: an http(s) card URL at the well-known path, versions
// that are A2A versions.
func FuzzA2AInvokeBody(f *testing.F) {
	for _, s := range []string{
		`{"peerUrl":"http://127.0.0.1:9/base"}`,
		`{"peerUrl":"https://peer.example","authenticated":false,"peerOffersOnly":"0.3, 1.0","requestVersion":"1.0"}`,
		`{"peerUrl":"https://peer.example/.well-known/agent-card.json","authenticated":null}`,
		`{"peerUrl":"https://peer.example","peerOffersOnly":"0.3","requestVersion":"1.0"}`,
		`{"peerUrl":1}`, `[]`, `{"peerUrl":"x","peerUrl":"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		members, err := decodeObject(body, a2aInvokeMembers...)
		if err != nil {
			return
		}
		call, err := parseA2AInvoke(members)
		if err != nil {
			if e, ok := err.(*apiError); !ok || e.Status != http.StatusBadRequest || e.Code != codeValidation {
				t.Fatalf("refusal %v is not a validation_error", err)
			}
			return
		}
		if !strings.HasPrefix(call.CardURL, "http://") && !strings.HasPrefix(call.CardURL, "https://") || !strings.HasSuffix(call.CardURL, wellKnownCard) {
			t.Fatalf("card URL %q", call.CardURL)
		}
		for _, v := range call.Versions {
			if _, ok := version.A2A(v); !ok {
				t.Fatalf("version %q", v)
			}
		}
	})
}

// noWaitStore is a host store without a status-only wait.
type noWaitStore struct{ hostStore }

// TestHiddenStoreKeepsTheWait: hiding the seams' workflows keeps the
// store's interop.RunWaiter visible, so a blocking send over a host with
// seams still waits on the run's status alone; a store without one gets
// none.
func TestHiddenStoreKeepsTheWait(t *testing.T) {
	store := memstore.New()
	t.Cleanup(func() { store.Close() })
	if _, ok := hide(store, seamWorkflowID).(interop.RunWaiter); !ok {
		t.Fatal("the hidden memstore is no longer an interop.RunWaiter")
	}
	if _, ok := hide(noWaitStore{store}, seamWorkflowID).(interop.RunWaiter); ok {
		t.Fatal("a store without WaitRun became an interop.RunWaiter")
	}
}
