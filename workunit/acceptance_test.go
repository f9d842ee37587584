package workunit_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/workunit"
)

// resultOf seals a result unit of sent.
func resultOf(t testing.TB, sent workunit.Envelope, body string) workunit.Envelope {
	t.Helper()
	return mustSeal(t, workunit.Unit{Kind: "com.example.invoice.verdict", ResultOf: sent.Digest(), Body: json.RawMessage(body)})
}

// A remote completion is recorded as execution succeeded, acceptance
// pending verification; only Verify with a result that names the sent
// unit accepts it.
func TestRemoteCompletionIsPendingUntilVerified(t *testing.T) {
	sent := mustSeal(t, sample)
	c := workunit.RemoteCompleted(sent)
	if c.Acceptance() != workunit.PendingVerification || c.Request() != sent.Digest() || c.Result() != "" {
		t.Fatalf("RemoteCompleted: %+v", c)
	}
	result := resultOf(t, sent, `{"approved":true}`)
	accepted, err := c.Verify(result)
	if err != nil || accepted.Acceptance() != workunit.Accepted || accepted.Result() != result.Digest() || accepted.Request() != sent.Digest() {
		t.Fatalf("Verify: %+v %v", accepted, err)
	}
	if c.Acceptance() != workunit.PendingVerification {
		t.Fatal("Verify changed the pending record")
	}
	if again, err := accepted.Verify(result); err != nil || again != accepted {
		t.Fatalf("verifying the accepted result again: %+v %v", again, err)
	}

	other := mustSeal(t, workunit.Unit{Kind: "k", Body: json.RawMessage(`2`)})
	for _, tc := range []struct {
		name   string
		c      workunit.Completion
		result workunit.Envelope
		want   string
	}{
		{"result of another unit", c, resultOf(t, other, `{"approved":true}`), "workunit: not the result of the unit sent: the result's resultOf is not the digest of the unit sent"},
		{"not a result at all", c, other, "workunit: not the result of the unit sent: the result's resultOf is not the digest of the unit sent"},
		{"the unit sent echoed back", c, sent, "workunit: not the result of the unit sent: the result's resultOf is not the digest of the unit sent"},
		{"no result", c, workunit.Envelope{}, "workunit: not the result of the unit sent: the result holds no unit"},
		{"another result after acceptance", accepted, resultOf(t, sent, `{"approved":false}`), "workunit: not the result of the unit sent: another result was already accepted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.c.Verify(tc.result)
			if err == nil || err.Error() != tc.want || !errors.Is(err, workunit.ErrNotTheResult) || got != tc.c {
				t.Fatalf("Verify: %+v %v\nwant %s", got, err, tc.want)
			}
		})
	}
	var zero workunit.Completion
	if _, err := zero.Verify(result); err == nil || err.Error() != "workunit: the completion records no unit" {
		t.Fatalf("zero Completion: %v", err)
	}
	if zero.Acceptance() == workunit.Accepted {
		t.Fatal("the zero Completion is accepted")
	}
}

// The record a host keeps (golden bytes) reads back as it was written;
// anything else is refused.
func TestCompletionJSON(t *testing.T) {
	sent := mustSeal(t, sample)
	pending := workunit.RemoteCompleted(sent)
	accepted, err := pending.Verify(resultOf(t, sent, `{"approved":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, c := range []workunit.Completion{pending, accepted} {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back workunit.Completion
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Fatalf("read back %s: %+v %v", b, back, err)
		}
		out = append(append(out, b...), '\n')
	}
	golden.Check(t, "completions.jsonl", out)
	if _, err := json.Marshal(workunit.Completion{}); err == nil {
		t.Fatal("the zero Completion marshals")
	}

	d := sent.Digest()
	for _, tc := range []struct{ doc, want string }{
		{`{"execution":"succeeded","acceptance":"accepted","request":"` + d + `"}`, "workunit: malformed envelope: result is not a lowercase hex SHA-256"},
		{`{"execution":"succeeded","acceptance":"pending-verification","request":"` + d + `","result":"` + d + `"}`, "workunit: malformed envelope: a pending completion has no result"},
		{`{"execution":"succeeded","acceptance":"pending-verification","request":"` + d + `","result":""}`, "workunit: malformed envelope: a pending completion has no result"},
		{`{"execution":"failed","acceptance":"pending-verification","request":"` + d + `"}`, `workunit: malformed envelope: execution is not "succeeded"`},
		{`{"execution":"succeeded","acceptance":"verified","request":"` + d + `"}`, `workunit: malformed envelope: acceptance is neither "pending-verification" nor "accepted"`},
		{`{"execution":"succeeded","acceptance":"pending-verification","request":"abc"}`, "workunit: malformed envelope: request is not a lowercase hex SHA-256"},
		{`{"execution":"succeeded","Acceptance":"accepted","request":"` + d + `"}`, `workunit: malformed envelope: a completion record has no member "Acceptance"`},
		{`{"execution":"succeeded","acceptance":"pending-verification","acceptance":"accepted","request":"` + d + `"}`, "workunit: malformed envelope: acceptance is not one string"},
		{`{"execution":"succeeded","acceptance":true,"request":"` + d + `"}`, "workunit: malformed envelope: acceptance is not one string"},
		{`[]`, "workunit: malformed envelope: a completion record must be a JSON object"},
	} {
		var c workunit.Completion
		if err := c.UnmarshalJSON([]byte(tc.doc)); err == nil || err.Error() != tc.want || c != (workunit.Completion{}) {
			t.Errorf("%s: %v\nwant %s", tc.doc, err, tc.want)
		}
	}
}
