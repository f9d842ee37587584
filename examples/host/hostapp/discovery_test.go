package hostapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
)

func TestDiscoveryDocument(t *testing.T) {
	h := newTestHost(t)
	r := h.get("/.well-known/openwop", "") // no credential (OpenWOP capabilities.md §1)
	wantStatus(t, r, http.StatusOK)
	// The card URL carries the listener's port; the golden names it HOST.
	golden.Check(t, "discovery.json", bytes.ReplaceAll(r.Body, []byte(h.url), []byte(goldenBase)))
	if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("OpenWOP-Version") != "2.0" {
		t.Errorf("headers = %v", r.Header)
	}
	etag := r.Header.Get("ETag")
	if etag != strongETag(r.Body) || strings.HasPrefix(etag, "W/") {
		t.Errorf("ETag = %q, want the strong tag of the bytes %q", etag, strongETag(r.Body))
	}

	// The closed root: only the keys this host claims, none of the keys v2
	// deleted (OpenWOP interop.md §REST is the wire; capabilities.md §2–§4).
	var root map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &root); err != nil {
		t.Fatal(err)
	}
	want := []string{"a2a", "agents", "fixtures", "hostEvents", "implementation", "mcp", "oauth", "preferredVersion", "protocolVersions", "runList"}
	if got := slices.Sorted(maps.Keys(root)); !slices.Equal(got, want) {
		t.Errorf("root keys %v, want %v", got, want)
	}
	for _, rec := range []string{"a2a", "mcp", "agents", "hostEvents", "runList", "oauth"} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(root[rec], &m); err != nil {
			t.Fatal(err)
		}
		for _, deleted := range []string{"supported", "supportedTransports", "grpc"} {
			if _, ok := m[deleted]; ok {
				t.Errorf("%s carries the deleted key %q", rec, deleted)
			}
		}
	}

	// The suite finds the fixtures it drives among the fixtures, the
	// credential one too: the listener is loopback, a secure origin.
	var fixtures []string
	if err := json.Unmarshal(root["fixtures"], &fixtures); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fixtures, []string{"conformance-noop", "conformance-approval", "conformance-failure", "conformance-delay", "conformance-cancellable",
		"conformance-approval-approvers", "conformance-credential", "conformance-clarification", "conformance-clarification-nested", "conformance-clarification-sensitive",
		mcpClientWorkflowID}) {
		t.Errorf("fixtures = %v", fixtures)
	}
	// The credential interrupt is advertised (RFC 0199 §C.1); the seams are
	// not, being off by default.
	if string(root["oauth"]) != `{"status":"stable","since":"2.0","witness":"witnessable-gated","credentialInterrupt":true}` {
		t.Errorf("oauth record %s", root["oauth"])
	}
	// The a2a record claims a2a-1.0 with the card's URL from the base URL
	// (OpenWOP interop map, a2a.card), and hostEvents lists negotiation.decided as durable (OpenWOP RFC 0242 §B.3).
	var a2aRecord struct {
		Profiles     []string `json:"profiles"`
		AgentCardURL string   `json:"agentCardUrl"`
		RefreshedAt  string   `json:"refreshedAt"`
	}
	if err := json.Unmarshal(root["a2a"], &a2aRecord); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a2aRecord.Profiles, []string{"a2a-1.0"}) || a2aRecord.AgentCardURL != h.url+"/.well-known/agent-card.json" ||
		a2aRecord.RefreshedAt != string(upstreamRefreshedAt) {
		t.Errorf("a2a record %s", root["a2a"])
	}
	// The mcp record names the mount on the base URL, its transport, the
	// features the mount backs (extensions: the Tasks extension is on), the
	// MRTR ceiling both ways (OpenWOP interop map, a2a.card and
	// mcp.features; interop.md §The facets, §The MCP round ceiling) and the
	// client exposed to conformance-mcp-client (RFC 0204), whose fixture is
	// listed above.
	var mcpRecord struct {
		Revisions   []string `json:"revisions"`
		Profiles    []string `json:"profiles"`
		Features    []string `json:"features"`
		ServerURLs  []string `json:"serverUrls"`
		RefreshedAt string   `json:"refreshedAt"`
		ServerMount struct {
			Transports []string `json:"transports"`
		} `json:"serverMount"`
		MRTR struct {
			MaxRounds int `json:"maxRounds"`
		} `json:"mrtr"`
		Client bool `json:"client"`
	}
	if err := json.Unmarshal(root["mcp"], &mcpRecord); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mcpRecord.Revisions, []string{"2026-07-28"}) || !slices.Equal(mcpRecord.Profiles, []string{"mcp-2026-07-28"}) ||
		!slices.Equal(mcpRecord.Features, []string{"server-discover", "mrtr", "cacheable-lists", "extensions"}) ||
		!slices.Equal(mcpRecord.ServerURLs, []string{h.url + mcpPath}) || !slices.Equal(mcpRecord.ServerMount.Transports, []string{"streamable-http"}) ||
		mcpRecord.MRTR.MaxRounds != mcpMaxRounds || !mcpRecord.Client || mcpRecord.RefreshedAt != string(upstreamRefreshedAt) {
		t.Errorf("mcp record %s", root["mcp"])
	}
	// a2a.agentCards is claimed, so agents.manifestRuntime is advertised,
	// as an object (OpenWOP interop §Per-agent cards); the inventory is per
	// tenant.
	var agents struct {
		Witness         string                     `json:"witness"`
		ManifestRuntime map[string]json.RawMessage `json:"manifestRuntime"`
	}
	if err := json.Unmarshal(root["agents"], &agents); err != nil {
		t.Fatal(err)
	}
	if agents.ManifestRuntime == nil || string(agents.ManifestRuntime["installScope"]) != `"tenant"` || agents.Witness != "witnessable-gated" {
		t.Errorf("agents record %s", root["agents"])
	}
	var hostEvents struct {
		Types []struct{ Type, Delivery string } `json:"types"`
	}
	if err := json.Unmarshal(root["hostEvents"], &hostEvents); err != nil {
		t.Fatal(err)
	}
	if len(hostEvents.Types) != 2 || hostEvents.Types[0].Type != "a2a.push-dead-lettered" || hostEvents.Types[0].Delivery != "durable" ||
		hostEvents.Types[1].Type != "negotiation.decided" || hostEvents.Types[1].Delivery != "durable" {
		t.Errorf("hostEvents record %s", root["hostEvents"])
	}

	// Header-less, "2" and "2.0" select the same bytes.
	for _, v := range []string{"2", "2.0", "2.7", " 2 "} {
		got := h.do(req{Method: "GET", Path: "/.well-known/openwop", Headers: map[string]string{"OpenWOP-Version": v}})
		wantStatus(t, got, http.StatusOK)
		if string(got.Body) != string(r.Body) {
			t.Errorf("OpenWOP-Version %q changed the document", v)
		}
	}
	// HEAD answers the headers only.
	head := h.do(req{Method: "HEAD", Path: "/.well-known/openwop"})
	if head.Status != 200 || head.Header.Get("ETag") != etag || len(head.Body) != 0 {
		t.Errorf("HEAD = %d %v %q", head.Status, head.Header, head.Body)
	}
}

func TestDiscoveryConditional(t *testing.T) {
	h := newTestHost(t)
	etag := h.get("/.well-known/openwop", "").Header.Get("ETag")
	for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag, "*"} {
		r := h.do(req{Method: "GET", Path: "/.well-known/openwop", Headers: map[string]string{"If-None-Match": inm}})
		wantStatus(t, r, http.StatusNotModified)
		if len(r.Body) != 0 || r.Header.Get("ETag") != etag || r.Header.Get("OpenWOP-Version") != "2.0" {
			t.Errorf("If-None-Match %s: body %q headers %v", inm, r.Body, r.Header)
		}
	}
	r := h.do(req{Method: "GET", Path: "/.well-known/openwop", Headers: map[string]string{"If-None-Match": `"nope"`}})
	wantStatus(t, r, http.StatusOK)
}

func TestOpenWOPVersionHeader(t *testing.T) {
	h := newTestHost(t)
	for _, tt := range []struct {
		value  string
		status int
		code   string
	}{
		{"1", 406, codeVersionUnsupported},
		{"3.0", 406, codeVersionUnsupported},
		{"abc", 400, codeValidation},
		{"02", 400, codeValidation},
		{"2.", 400, codeValidation},
		{"2.0.1", 400, codeValidation},
		{"", 400, codeValidation},
	} {
		t.Run(tt.value, func(t *testing.T) {
			// The check guards every REST route, before authentication.
			for _, path := range []string{"/.well-known/openwop", "/runs", "/nope"} {
				r := h.do(req{Method: "GET", Path: path, Headers: map[string]string{"OpenWOP-Version": tt.value}})
				d := wantError(t, r, tt.status, tt.code)
				if tt.status == 406 {
					if pv, _ := d["protocolVersions"].([]any); len(pv) != 1 || pv[0] != "2.0" {
						t.Errorf("details.protocolVersions = %v", d["protocolVersions"])
					}
				} else if d["field"] != "OpenWOP-Version" {
					t.Errorf("details = %v", d)
				}
			}
		})
	}
	// Two header lines are refused rather than guessed.
	rq, _ := http.NewRequest("GET", h.url+"/.well-known/openwop", nil)
	rq.Header.Add("OpenWOP-Version", "2")
	rq.Header.Add("OpenWOP-Version", "2")
	resp, err := h.client.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("repeated header: %d, want 400", resp.StatusCode)
	}
}

func TestErrorEnvelopeGolden(t *testing.T) {
	s := &server{log: slog.New(slog.DiscardHandler)}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"error-validation.json", invalid("inputs/delayMs", "must be >= 0")},
		{"error-not-found.json", interop.ErrNotFound},
		{"error-unauthenticated.json", interop.ErrUnauthenticated},
		{"error-version.json", checkVersionHeader([]string{"3"})},
	} {
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest("GET", "/", nil), tt.err)
		golden.Check(t, tt.name, rec.Body.Bytes())
	}
}

func TestSnapshotGolden(t *testing.T) {
	at := time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	l := links{base: "https://host.example"}
	suspended := interop.Run{
		ID: "acme/RUN0000000000000000000001", WorkflowID: "conformance-approval",
		Status: interop.StatusWaitingApproval, CreatedAt: at, StatusAt: at.Add(time.Second), ContextID: "ctx-1",
		Interrupts: []interop.Interrupt{{
			ID: "acme/INT0000000000000000000001", Kind: interop.InterruptApproval, Key: "approval",
			NodeID: "approve", Message: "Approve?", Actions: []string{"accept", "reject"},
			Approvers: []string{"key:boss"}, Data: json.RawMessage(`{"secret":"not shown"}`),
		}},
		Artifacts: []interop.Artifact{{ID: "result", Name: "result", Parts: []interop.Part{
			interop.TextPart("hello <world>"), interop.DataPart(json.RawMessage(`{"a":1}`)),
			{Kind: interop.PartRaw, Raw: []byte{1, 2, 3}, MediaType: "application/octet-stream", Filename: "x.bin"},
		}}},
		Output: json.RawMessage(`{"ignored":"not completed"}`),
	}
	failed := interop.Run{
		ID: "anon:x/RUN0000000000000000000002", WorkflowID: "conformance-failure",
		Status: interop.StatusFailed, CreatedAt: at, StatusAt: at, FailureMessage: "went wrong",
	}
	completed := interop.Run{
		ID: "acme/RUN0000000000000000000003", WorkflowID: "conformance-noop",
		Status: interop.StatusCompleted, CreatedAt: at, StatusAt: at, Output: json.RawMessage(`{"ok":true}`),
		Interrupts: []interop.Interrupt{{ID: "acme/STALE000000000000000001"}},
	}
	var all []byte
	for _, run := range []interop.Run{suspended, failed, completed} {
		b, err := encodeJSON(l.snapshot(run))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	golden.Check(t, "snapshots.jsonl", all)
}

func TestPollGolden(t *testing.T) {
	at := time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	empty := pollOf(interop.Run{ID: "acme/RUN0000000000000000000001", Status: interop.StatusPending, LastSequence: -1}, nil)
	run := interop.Run{ID: "acme/RUN0000000000000000000001", Status: interop.StatusCancelled, LastSequence: 4}
	doc := func(seq int64, typ interop.EventType, st interop.RunStatus, node, payload string) interop.RunEvent {
		return interop.RunEvent{
			EventID: fmt.Sprintf("evt-EVENT%021d", seq), RunID: run.ID, Sequence: seq, Type: typ, NodeID: node,
			Timestamp: at.In(time.FixedZone("CEST", 2*3600)), SchemaVersion: 1, Payload: json.RawMessage(payload),
			Status: st, // never encoded
		}
	}
	full := pollOf(run, []interop.RunEvent{
		doc(0, interop.EventRunStarted, interop.StatusRunning, "", `{"workflowId":"conformance-approval","transport":"rest"}`),
		doc(1, interop.EventNodeSuspended, interop.StatusWaitingApproval, "approve", `{"nodeId":"approve","interruptId":"acme/INT0000000000000000000001","kind":"approval","key":"approval"}`),
		doc(2, interop.EventArtifactCreated, interop.StatusWaitingApproval, "", `{"artifactId":"a1","artifactType":"artifact","registered":false}`),
		doc(3, interop.EventNegotiationDecided, interop.StatusWaitingApproval, "", `{"protocol":"a2a","outcome":"accepted","at":"2026-10-05T12:00:00Z","version":"1.0","reason":"ok"}`),
		doc(4, interop.EventRunCancelled, interop.StatusCancelled, "", `{"reason":"demo over"}`),
	})
	var all []byte
	for _, v := range []pollView{empty, full} {
		b, err := encodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	golden.Check(t, "poll.jsonl", all)
}
