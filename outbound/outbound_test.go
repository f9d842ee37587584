package outbound

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"testing"
	"time"
)

func TestVersionUnsupportedShape(t *testing.T) {
	cause := errors.New("peer offers 0.3 only")
	e := VersionUnsupported("a2a", "run-1", cause)
	if e.Status != http.StatusBadRequest || e.Code != "interop_version_unsupported" {
		t.Fatalf("status/code = %d %q", e.Status, e.Code)
	}
	body, err := json.Marshal(map[string]any{"error": e.Code, "message": e.Message, "details": e.Details})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"details":{"protocol":"a2a","runId":"run-1"},"error":"interop_version_unsupported","message":"the peer offers no protocol version this host accepts"}`
	if string(body) != want {
		t.Fatalf("envelope\n got %s\nwant %s", body, want)
	}
	if !errors.Is(e, cause) {
		t.Fatal("the cause is not reachable with errors.Is")
	}
	// The envelope is closed: no run means no runId member, never an empty one.
	if _, ok := VersionUnsupported("mcp", "", nil).Details["runId"]; ok {
		t.Fatal("runId present without a run")
	}
}

func TestAttemptIDsAreFreshAndWellFormed(t *testing.T) {
	re := regexp.MustCompile(`^att_[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewAttemptID()
		if !re.MatchString(id) {
			t.Fatalf("attempt id %q malformed", id)
		}
		if seen[id] {
			t.Fatalf("attempt id %q repeated", id)
		}
		seen[id] = true
	}
}

func TestOnlyReadBackStatesAreVerified(t *testing.T) {
	verified := map[Reconciliation]bool{RemoteCancelled: true, CompletedBeforeCancel: true}
	for _, r := range []Reconciliation{CancelledBeforeAdmission, CancelRequestedRemoteUnknown, RemoteCancelled,
		CompletedBeforeCancel, FailedNoEffect, FailedPossibleEffect, DisconnectedStillActive} {
		if r.Verified() != verified[r] {
			t.Errorf("%s.Verified() = %v", r, r.Verified())
		}
	}
}

func TestCredentialExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		expiry time.Time
		want   bool
	}{
		{time.Time{}, false},
		{now.Add(time.Second), false},
		{now, true},
		{now.Add(-time.Second), true},
	} {
		if got := (CredentialRef{Name: "k", Expiry: tc.expiry}).Expired(now); got != tc.want {
			t.Errorf("Expiry %v: Expired = %v, want %v", tc.expiry, got, tc.want)
		}
	}
}
