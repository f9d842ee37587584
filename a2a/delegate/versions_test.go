package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/outbound"
)

// TestConnectAdmittedVersions: Admission.Versions restricts the card's
// interfaces Connect negotiates over; the policy still decides (a
// restriction to versions below the floor is refused below-floor and sends
// nothing), and an empty list admits whatever the card offers.
func TestConnectAdmittedVersions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []string
		legacy   bool
		outcome  string
		reason   string
		version  string
	}{
		{name: "any", outcome: "accepted", reason: "ok", version: "1.0"},
		{name: "1.0 only", versions: []string{"1.0"}, outcome: "accepted", reason: "ok", version: "1.0"},
		{name: "patch ignored", versions: []string{"1.0.2"}, outcome: "accepted", reason: "ok", version: "1.0"},
		{name: "0.3 only", versions: []string{"0.3"}, outcome: "refused", reason: "below-floor"},
		{name: "not on the card", versions: []string{"1.1"}, outcome: "refused", reason: "unsupported"},
		{name: "0.3 card, 0.3 admitted", versions: []string{"0.3"}, legacy: true, outcome: "refused", reason: "below-floor"},
		{name: "0.3 card, 1.0 admitted", versions: []string{"1.0"}, legacy: true, outcome: "refused", reason: "unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t)
			if tc.legacy {
				a.serveRawCard([]byte(`{"name":"Summarizer","protocolVersion":"0.3.0","url":"` + a.rpcURL() + `","preferredTransport":"JSONRPC",
				  "capabilities":{},"skills":[]}`))
			} else {
				a.serveCard(t, testCard(a, "0.3", "1.0"))
			}
			a.setRPC(rpcReply(completedTask))
			f := newFixture(t, a, withCredential("Bearer", "tok"), withAdmission(func(ad *Admission) {
				ad.Versions = tc.versions
				if tc.legacy {
					ad.Skills = nil
				}
			}))
			conn, err := f.client.Connect(context.Background(), runID, "summarizer")
			r, _ := f.sink.onlyRecord(t, runID)
			if r.Outcome != tc.outcome || r.Reason != tc.reason || r.Version != tc.version {
				t.Fatalf("record %+v", r)
			}
			if tc.outcome == "accepted" {
				if err != nil || conn.Version != tc.version || string(conn.Interface.ProtocolVersion) != "1.0" {
					t.Fatalf("%v, conn %+v", err, conn)
				}
				return
			}
			var oe *outbound.Error
			if !errors.As(err, &oe) || oe.Status != http.StatusBadRequest || oe.Code != outbound.CodeVersionUnsupported ||
				!reflect.DeepEqual(oe.Details, map[string]any{"protocol": "a2a", "runId": runID}) {
				t.Fatalf("%v, want 400 interop_version_unsupported naming the run", err)
			}
			wantNothingSent(t, a)
		})
	}
}

// TestAdmissionVersionsValidated: a version that is not major.minor is
// refused when admitted, and the registered admission is the caller's
// copy.
func TestAdmissionVersionsValidated(t *testing.T) {
	a := newAgent(t)
	g, _ := egress.NewGuard(egress.GuardOptions{})
	c, err := New(Deps{Policy: a2aPolicy(t, false), Events: newSink(), Guard: g}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bad := admission(a)
	bad.Versions = []string{"1.0", "v1"}
	if err := c.Admit(bad); err == nil || !strings.Contains(err.Error(), `Versions[1]: "v1" is not an A2A version`) {
		t.Fatalf("%v, want the bad version named", err)
	}
	good := admission(a)
	good.Versions = []string{"1.0"}
	if err := c.Admit(good); err != nil {
		t.Fatal(err)
	}
	good.Versions[0] = "0.3"
	if got, _ := c.Admission("summarizer"); !reflect.DeepEqual(got.Versions, []string{"1.0"}) {
		t.Fatalf("registered versions %v changed with the caller's slice", got.Versions)
	}
}

// TestCardFetchAsksPreferredVersion: the card request carries the host's
// preferred version in A2A-Version, so a server that keeps a card per
// version (answering a request without the header with its 0.3-shaped
// card) is met at 1.0.
func TestCardFetchAsksPreferredVersion(t *testing.T) {
	a := newAgent(t)
	legacy := []byte(`{"name":"Summarizer","protocolVersion":"0.3.0","url":"` + a.rpcURL() + `","preferredTransport":"JSONRPC","capabilities":{},"skills":[]}`)
	current, err := jsonCard(testCard(a, "1.0", "0.3"))
	if err != nil {
		t.Fatal(err)
	}
	a.setCard(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get(wire.SvcParamVersion) == "1.0" {
			_, _ = w.Write(current)
			return
		}
		_, _ = w.Write(legacy)
	})
	f := newFixture(t, a)
	conn, err := f.client.Connect(context.Background(), runID, "summarizer")
	if err != nil {
		t.Fatal(err)
	}
	if conn.Version != "1.0" {
		t.Fatalf("negotiated %q", conn.Version)
	}
	reqs := a.all()
	if len(reqs) != 1 || reqs[0].header.Get("A2A-Version") != "1.0" {
		t.Fatalf("card requests %+v, want one asking for 1.0", reqs)
	}
}

func jsonCard(c *wire.AgentCard) ([]byte, error) { return json.Marshal(c) }
