package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// sinkRecorder is the EventSink the auditor hands its records to, kept
// in order with the tenant each was published for, in front of the store.
type sinkRecorder struct {
	interop.EventSink
	mu   sync.Mutex
	host []sunkRecord
}

type sunkRecord struct {
	tenant string
	event  interop.HostEvent
}

func (r *sinkRecorder) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	r.mu.Lock()
	r.host = append(r.host, sunkRecord{tenant: tenant, event: ev})
	r.mu.Unlock()
	return r.EventSink.PublishHostEvent(ctx, tenant, ev)
}

// since returns the records handed over from mark on.
func (r *sinkRecorder) since(mark int) []sunkRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sunkRecord(nil), r.host[mark:]...)
}

func (r *sinkRecorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.host)
}

// recordingEnv is a restEnv whose auditor publishes through a recorder.
func recordingEnv(t testing.TB) (*restEnv, *sinkRecorder) {
	var rec *sinkRecorder
	e := newRESTEnv(t, func(c *testConfig) {
		rec = &sinkRecorder{EventSink: c.Store.(interop.EventSink)}
		c.Auditor = negotiate.NewAuditor(rec, negotiate.AuditorOptions{Synchronous: true})
	})
	return e, rec
}

// recordedPayload is the whole negotiation.decided payload as a client of
// GET /host/events reads it.
type recordedPayload struct {
	Protocol   string `json:"protocol"`
	Outcome    string `json:"outcome"`
	At         string `json:"at"`
	Version    string `json:"version"`
	Floor      string `json:"floor"`
	Requested  string `json:"requested"`
	Reason     string `json:"reason"`
	PeerDigest string `json:"peerDigest"`
}

// oneRecord asserts exactly one negotiation.decided was handed over since
// mark and returns it with its tenant.
func oneRecord(t testing.TB, rec *sinkRecorder, mark int) (recordedPayload, string) {
	t.Helper()
	got := rec.since(mark)
	if len(got) != 1 {
		t.Fatalf("%d records handed to the EventSink, want exactly one", len(got))
	}
	ev := got[0].event
	if ev.Type != negotiate.EventType || ev.Delivery != interop.DeliveryDurable {
		t.Fatalf("host event %s/%s", ev.Type, ev.Delivery)
	}
	var p recordedPayload
	if err := json.Unmarshal(ev.Payload, &p); err != nil || p.At == "" || p.Floor != "1.0" || p.Protocol != "a2a" {
		t.Fatalf("payload %s (%v)", ev.Payload, err)
	}
	return p, got[0].tenant
}

// A request refused for want of authentication is a refused exchange: one
// negotiation.decided {outcome refused, reason unauthenticated, requested
// the version named when well formed}, for no tenant, handed to the
// EventSink before the 401 — on both bindings and on the authenticated
// cards. An accepted authenticated request records reason ok; the public
// card needs no credential and stays accepted (OpenWOP interop.md
// §Negotiation is a protocol, §The audit event).
func TestNegotiationRecordOfUnauthenticatedRequests(t *testing.T) {
	e, rec := recordingEnv(t)
	ctx := t.Context()
	r := e.routing.Derive("agent-ada")
	ops := map[string]hintOp{
		"ListTasks":            listOp(""),
		"GetTask":              {method: methodGetTask, params: map[string]any{"id": restUnknownAcmeID}, verb: http.MethodGet, path: "/tasks/" + restUnknownAcmeID},
		"SendMessage":          {method: methodSendMessage, params: map[string]any{"message": map[string]any{"messageId": "m", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "x"}}}}, verb: http.MethodPost, path: "/message:send", body: restSendBody("m", "x")},
		"GetExtendedAgentCard": {method: methodGetExtendedAgentCard, verb: http.MethodGet, path: "/extendedAgentCard"},
	}
	type tc struct {
		name      string
		key       string
		version   string // A2A-Version; "" sends none
		tenant    string
		want      recordedPayload
		status    int
		wantOwner string
	}
	cases := []tc{
		{"no credential", "", "1.0", "", recordedPayload{Outcome: "refused", Requested: "1.0", Reason: "unauthenticated"}, 401, ""},
		{"no credential, no version", "", "", "", recordedPayload{Outcome: "refused", Reason: "unauthenticated"}, 401, ""},
		{"no credential, patch version", "", "1.0.3", "", recordedPayload{Outcome: "refused", Requested: "1.0", Reason: "unauthenticated"}, 401, ""},
		{"no credential, version not offered", "", "9.9", "", recordedPayload{Outcome: "refused", Requested: "9.9", Reason: "unauthenticated"}, 401, ""},
		{"no credential, malformed version", "", "one", "", recordedPayload{Outcome: "refused", Reason: "unauthenticated"}, 401, ""},
		{"unknown credential", "key-nobody", "1.0", "", recordedPayload{Outcome: "refused", Requested: "1.0", Reason: "unauthenticated"}, 401, ""},
		{"no credential, agent's routing value", "", "1.0", r, recordedPayload{Outcome: "refused", Requested: "1.0", Reason: "unauthenticated"}, 401, ""},
		{"authenticated", "key-acme", "1.0", "", recordedPayload{Outcome: "accepted", Version: "1.0", Requested: "1.0", Reason: "ok"}, 0, "acme"},
		{"authenticated, no version", "key-acme", "", "", recordedPayload{Outcome: "accepted", Version: "1.0", Reason: "ok"}, 0, "acme"},
	}
	for _, b := range hintBindings {
		for name, op := range ops {
			for _, c := range cases {
				t.Run(string(b)+"/"+name+"/"+c.name, func(t *testing.T) {
					mark := rec.mark()
					res := e.versioned(t, ctx, b, c.key, c.version, c.tenant, op)
					got, tenant := oneRecord(t, rec, mark)
					want := c.want
					want.Protocol, want.At, want.Floor, want.PeerDigest = "a2a", got.At, "1.0", got.PeerDigest
					if got != want || tenant != c.wantOwner {
						t.Errorf("record %+v for tenant %q, want %+v for %q", got, tenant, want, c.wantOwner)
					}
					if c.status != 0 && res.status != c.status {
						t.Errorf("HTTP %d, want %d: %s", res.status, c.status, res.body)
					}
				})
			}
		}
	}

	// A batch is one exchange: one record.
	mark := rec.mark()
	batch := e.rawRPC(t, ctx, "", "1.0", `[`+rpcBody(1, methodListTasks, nil)+`,`+rpcBody(2, methodGetTask, map[string]any{"id": "x"})+`]`)
	if got, tenant := oneRecord(t, rec, mark); batch.status != 401 || got.Outcome != "refused" || got.Reason != "unauthenticated" || tenant != "" {
		t.Errorf("batch: HTTP %d, record %+v for %q", batch.status, got, tenant)
	}

	// The public card: no credential needed, accepted.
	mark = rec.mark()
	card := e.do(t, restCall{method: http.MethodGet, path: restEnvCardPath})
	if got, tenant := oneRecord(t, rec, mark); card.status != 200 || got.Outcome != "accepted" || got.Reason != "ok" || got.Version != "1.0" || tenant != "" {
		t.Errorf("public card: HTTP %d, record %+v for %q", card.status, got, tenant)
	}
}

// versioned is hinted with an explicit A2A-Version ("" sends none).
func (e *restEnv) versioned(t testing.TB, ctx context.Context, b hintBinding, key, version, tenant string, op hintOp) hintReply {
	t.Helper()
	if b == viaJSONRPC {
		params := map[string]any{}
		for k, v := range op.params {
			params[k] = v
		}
		if tenant != "" {
			params["tenant"] = tenant
		}
		return e.rawRPC(t, ctx, key, version, rpcBody(1, op.method, params))
	}
	path := op.path
	if tenant != "" {
		path = "/" + tenant + path
	}
	c := restCall{method: op.verb, path: path, key: key, body: op.body, noVersion: true}
	if version != "" {
		c.header = map[string]string{"A2A-Version": version}
	}
	res := e.doCtx(t, ctx, c)
	return hintReply{status: res.status, header: res.header, body: res.body}
}
