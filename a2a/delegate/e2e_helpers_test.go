package delegate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/a2apeers"
	"github.com/wopinterop/wopinterop/interop"
)

// The end-to-end tests drive a Client built with New — the egress guard,
// the negotiation, our transports — against the real remote agents of
// internal/a2apeers: a2a-go's a2asrv and @a2a-js/sdk's server (Node 22,
// required in CI by WOPINTEROP_REQUIRE_PEERS=1, skipped otherwise).

// e2ePeers are the scripted remote agents every scenario runs against.
var e2ePeers = []struct {
	name  string
	start func(testing.TB, a2apeers.Script) *a2apeers.Peer
}{
	{"a2a-go", a2apeers.StartGo},
	{"a2a-js", a2apeers.StartNode},
}

// Names of the e2e admission.
const (
	e2eAlias = "scripted"
	e2eClass = "internal"
)

// e2eRunSeq numbers the runs of the e2e tests, so each Connect has a log
// of its own.
var e2eRunSeq atomic.Int64

func newE2ERunID() string { return fmt.Sprintf("tenant-a/run-e2e-%011d", e2eRunSeq.Add(1)) }

// e2eClient is a Client over one peer: an egress guard allowing exactly
// the peer's origin, a sink recording the run logs, and the peer admitted
// under e2eAlias with every skill of its card pinned by digest.
type e2eClient struct {
	peer   *a2apeers.Peer
	client *Client
	sink   *sink
}

func newE2EClient(t testing.TB, p *a2apeers.Peer, edit ...func(*Admission)) *e2eClient {
	t.Helper()
	if p.Card == nil {
		t.Fatal("the peer's card does not decode; the e2e scenarios need its skills")
	}
	adm := Admission{
		Alias:           e2eAlias,
		CardURL:         p.CardURL,
		DataClasses:     []string{e2eClass},
		MayRequestInput: true,
		Limits:          Limits{Deadline: 30 * time.Second},
	}
	for i := range p.Card.Skills {
		s := p.Card.Skills[i]
		adm.Skills = append(adm.Skills, AdmittedSkill{ID: s.ID, Digest: SkillDigest(&s)})
	}
	for _, e := range edit {
		e(&adm)
	}
	// The guard allows exactly the peer's origin, and the card's when an
	// edit moved it.
	origins := []string{p.URL}
	if u, err := url.Parse(adm.CardURL); err == nil && u.Scheme+"://"+u.Host != p.URL {
		origins = append(origins, u.Scheme+"://"+u.Host)
	}
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: origins})
	if err != nil {
		t.Fatal(err)
	}
	s := newSink()
	c, err := New(Deps{Policy: a2aPolicy(t, false), Events: s, Guard: g, Admissions: []Admission{adm}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &e2eClient{peer: p, client: c, sink: s}
}

// connect opens a connection on a fresh run and checks what Connect put
// on the run's log: exactly one negotiation.decided, accepted at 1.0.
func (e *e2eClient) connect(t *testing.T) (*Conn, string) {
	t.Helper()
	runID := newE2ERunID()
	conn, err := e.client.Connect(t.Context(), runID, e2eAlias)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	r := e.negotiation(t, runID)
	if r.Outcome != "accepted" || r.Version != "1.0" || r.Requested != "1.0" || r.PeerDigest != sha(e.peer.URL) {
		t.Fatalf("negotiation record %+v, want accepted at 1.0 for the peer's origin", r)
	}
	return conn, runID
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// negotiation returns the one negotiation.decided on runID's log, failing
// unless there is exactly one, its peerDigest is 64 hex digits and it
// does not name the peer's host.
func (e *e2eClient) negotiation(t *testing.T, runID string) record {
	t.Helper()
	var found []interop.RunEvent
	for _, ev := range e.sink.events(runID) {
		if ev.Type == interop.EventNegotiationDecided {
			found = append(found, ev)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d negotiation.decided records on %s, want exactly one per Connect", len(found), runID)
	}
	var r record
	dec := json.NewDecoder(strings.NewReader(string(found[0].Payload)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("record %s: %v", found[0].Payload, err)
	}
	if !hex64.MatchString(r.PeerDigest) {
		t.Fatalf("peerDigest %q is not 64 lowercase hex digits", r.PeerDigest)
	}
	host := strings.TrimPrefix(e.peer.URL, "http://")
	if p := string(found[0].Payload); strings.Contains(p, host) || strings.Contains(p, "127.0.0.1") || strings.Contains(p, "localhost") {
		t.Fatalf("the record names the peer in clear: %s", p)
	}
	return r
}

// checkLog validates every event the client appended to runID's log as
// the RunEventDoc a store would hand out (the store stamps eventId,
// runId and sequence), and returns the events.
func (e *e2eClient) checkLog(t *testing.T, runID string) []interop.RunEvent {
	t.Helper()
	return checkRunLog(t, e.sink, runID)
}

func checkRunLog(t *testing.T, s *sink, runID string) []interop.RunEvent {
	t.Helper()
	evs := s.events(runID)
	for i, ev := range evs {
		ev.EventID = fmt.Sprintf("evt-%016d", i+1)
		ev.RunID = runID
		ev.Sequence = int64(i)
		if err := ev.Validate(); err != nil {
			t.Errorf("event %d (%s) on %s: %v\n%s", i, ev.Type, runID, err, ev.Payload)
		}
	}
	if h := s.hostEvents(); len(h) != 0 {
		t.Errorf("%d host events: every record belongs on the run's log", len(h))
	}
	return evs
}

// wantLog checks runID's log after a delegation of attemptID: see
// wantRunLog.
func (e *e2eClient) wantLog(t *testing.T, runID, attemptID string, reconciled ...string) {
	t.Helper()
	wantRunLog(t, e.sink, runID, attemptID, reconciled...)
}

// wantRunLog checks runID's log after a delegation of attemptID ("": any
// attempt): every event validates; the negotiation record first, then at
// most one translation-loss record of the attempt (the peers send
// Task.history, which is never surfaced), and exactly the reconciliation
// records given, as their payloads, in order.
func wantRunLog(t *testing.T, s *sink, runID, attemptID string, reconciled ...string) {
	t.Helper()
	evs := checkRunLog(t, s, runID)
	if len(evs) == 0 || evs[0].Type != interop.EventNegotiationDecided {
		t.Fatalf("run log %v does not start with the negotiation record", evs)
	}
	var losses int
	var got []string
	for _, ev := range evs[1:] {
		switch ev.Type {
		case EventTranslationLoss:
			losses++
			var r lossRecord
			if err := json.Unmarshal(ev.Payload, &r); err != nil || r.Protocol != protocolA2A || (attemptID != "" && r.AttemptID != attemptID) {
				t.Errorf("translation-loss record %s, want one of attempt %s", ev.Payload, attemptID)
			}
		case EventReconciled:
			got = append(got, string(ev.Payload))
		default:
			t.Errorf("unexpected %s on the run's log: %s", ev.Type, ev.Payload)
		}
	}
	if losses > 1 {
		t.Errorf("%d translation-loss records for one attempt, want at most one", losses)
	}
	if !slices.Equal(got, reconciled) {
		t.Errorf("reconciliation records %q, want %q", got, reconciled)
	}
}

// reconciledJSON is the reconciliation record of out.
func reconciledJSON(out *Outcome) string {
	return fmt.Sprintf(`{"protocol":"a2a","attemptId":%q,"reconciliation":%q,"status":%q}`, out.AttemptID, out.Reconciliation, out.Status)
}

// e2eStep is a step naming the scripted skill, whose message's first
// text part is the script command.
func e2eStep(command string) Step {
	return Step{Skill: a2apeers.DefaultSkills()[0].ID, DataClass: e2eClass, Parts: []*wire.Part{wire.NewTextPart(command)}}
}

// texts are the texts of an artifact's parts ("" for a part of another kind).
func texts(a *wire.Artifact) []string {
	out := make([]string, len(a.Parts))
	for i, p := range a.Parts {
		out[i] = p.Text()
	}
	return out
}

// callsOf returns the peer's calls of method.
func callsOf(p *a2apeers.Peer, method string) []a2apeers.Request {
	var out []a2apeers.Request
	for _, c := range p.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// waitFor polls cond every 10 ms until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// e2eCtx bounds one scenario.
func e2eCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
