package delegate

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/a2apeers"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// wantRendered compares the OpenWOP error ProjectError renders for err
// with want, whole: status, code, message and details (Err is the cause
// and never rendered; an *outbound.Error is rendered as it is).
func wantRendered(t *testing.T, runID string, err error, want outbound.Error) {
	t.Helper()
	got := ProjectError(runID, err)
	if got == nil {
		t.Fatal("ProjectError gave nothing for an error")
	}
	if diff := cmp.Diff(want, *got, cmpopts.IgnoreFields(outbound.Error{}, "Err")); diff != "" {
		t.Fatalf("ProjectError (-want +got):\n%s", diff)
	}
	if got.Err != err && error(got) != err {
		t.Fatalf("ProjectError's cause is %v, want the error itself (or the *outbound.Error it is)", got.Err)
	}
}

// TestE2ELegacyPeerRefusedBelowFloor: a peer offering only A2A 0.3 — a
// 0.3 card, or a 1.0-shaped card whose interfaces all say 0.3 — is
// refused from its card: the error is 400 interop_version_unsupported
// naming the protocol and the run, the run's log holds the one refused
// negotiation record, and the peer is sent nothing.
func TestE2ELegacyPeerRefusedBelowFloor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape a2apeers.LegacyCard
	}{{"0.3 card", a2apeers.LegacyCard03}, {"1.0 card offering 0.3", a2apeers.LegacyInterfaces03}} {
		t.Run(tc.name, func(t *testing.T) {
			p := a2apeers.StartLegacy03(t, tc.shape)
			g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{p.URL}})
			if err != nil {
				t.Fatal(err)
			}
			s := newSink()
			legacy := wire.AgentSkill{ID: "legacy", Name: "Legacy skill", Description: "Answers A2A 0.3 only.", Tags: []string{"legacy"}}
			c, err := New(Deps{Policy: a2aPolicy(t, false), Events: s, Guard: g, Admissions: []Admission{{
				Alias: e2eAlias, CardURL: p.CardURL, DataClasses: []string{e2eClass},
				Skills: []AdmittedSkill{{ID: legacy.ID, Digest: SkillDigest(&legacy)}},
			}}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e := &e2eClient{peer: p, client: c, sink: s}
			runID := newE2ERunID()
			conn, err := c.Connect(t.Context(), runID, e2eAlias)
			if conn != nil || !errors.Is(err, wire.ErrVersionNotSupported) {
				t.Fatalf("Connect = %v, %v; want a refusal", conn, err)
			}
			var ne *NegotiationError
			if !errors.As(err, &ne) || ne.Reason != "below-floor" {
				t.Fatalf("cause %v, want a below-floor NegotiationError", err)
			}
			wantRendered(t, runID, err, outbound.Error{
				Status: http.StatusBadRequest, Code: outbound.CodeVersionUnsupported,
				Message: "the peer offers no protocol version this host accepts",
				Details: map[string]any{"protocol": "a2a", "runId": runID},
			})
			r := e.negotiation(t, runID)
			if r.Outcome != "refused" || r.Reason != "below-floor" || r.Floor != "1.0" || r.Version != "" || r.PeerDigest != sha(p.URL) {
				t.Fatalf("record %+v, want refused below the floor, naming no version", r)
			}
			if evs := e.checkLog(t, runID); len(evs) != 1 {
				t.Fatalf("run log %v, want only the refused negotiation", evs)
			}
			if calls := p.Calls(); len(calls) != 0 {
				t.Fatalf("the 0.3 peer was sent %d calls, want none", len(calls))
			}
			if reqs := p.Requests(); len(reqs) != 1 || reqs[0].Binding != a2apeers.BindingCard {
				t.Fatalf("requests %+v, want the one card fetch", reqs)
			}
		})
	}
}

// TestE2EMalformedPeers: a peer answering every call malformed, with a
// legacy or unusual error, or a refusal the transport must read from its
// status ends the delegation with the typed error of that answer and its
// projection — never internal_error for an error the library knows — and
// a reconciliation that says what is known of the send's effect. Nothing
// the peer wrote (a2apeers.BodyMarker is in every body it sends) reaches
// the error, the Outcome, the projection or the run's log.
func TestE2EMalformedPeers(t *testing.T) {
	malformed := func(runID string) outbound.Error {
		return outbound.Error{Status: 400, Code: outbound.CodeValidation, Message: "the remote agent's response was malformed",
			Details: map[string]any{"protocol": "a2a", "runId": runID}}
	}
	remote := func(status int, code, kind, reason string) func(string) outbound.Error {
		return func(runID string) outbound.Error {
			return outbound.Error{Status: status, Code: code, Message: "the remote agent answered: " + kind,
				Details: map[string]any{"protocol": "a2a", "runId": runID, "remoteError": reason}}
		}
	}
	cases := map[a2apeers.Mode]struct {
		is      []error
		rec     outbound.Reconciliation
		project func(runID string) outbound.Error
	}{
		a2apeers.InvalidJSON:   {[]error{wire.ErrInvalidAgentResponse}, outbound.FailedPossibleEffect, malformed},
		a2apeers.WrongShape:    {[]error{wire.ErrInvalidAgentResponse}, outbound.FailedPossibleEffect, malformed},
		a2apeers.MissingFields: {[]error{wire.ErrInvalidAgentResponse}, outbound.FailedPossibleEffect, malformed},
		a2apeers.UnknownKind:   {[]error{wire.ErrInvalidAgentResponse}, outbound.FailedPossibleEffect, malformed},
		// The valid first event names the task; a stream that then breaks
		// is re-attached and read again until the reads give up.
		a2apeers.MalformedSSE:        {[]error{ErrDisconnected, wire.ErrInvalidAgentResponse}, outbound.DisconnectedStillActive, malformed},
		a2apeers.Oversized:           {[]error{wire.ErrInvalidAgentResponse, egress.ErrTooLarge}, outbound.FailedPossibleEffect, malformed},
		a2apeers.LegacyErrorData:     {[]error{wire.ErrTaskNotFound}, outbound.FailedNoEffect, remote(404, outbound.CodeNotFound, "task not found", "TASK_NOT_FOUND")},
		a2apeers.ErrorDataMixed:      {[]error{wire.ErrTaskNotFound}, outbound.FailedNoEffect, remote(404, outbound.CodeNotFound, "task not found", "TASK_NOT_FOUND")},
		a2apeers.UnknownReason:       {[]error{wire.ErrInternalError}, outbound.FailedPossibleEffect, remote(503, outbound.CodeRunnerUnavailable, "internal error", "INTERNAL_ERROR")},
		a2apeers.VersionNotSupported: {[]error{wire.ErrVersionNotSupported}, outbound.FailedNoEffect, nil},
		a2apeers.HTTP500:             {[]error{wire.ErrInternalError}, outbound.FailedPossibleEffect, remote(503, outbound.CodeRunnerUnavailable, "internal error", "INTERNAL_ERROR")},
		a2apeers.HTTP401:             {[]error{wire.ErrUnauthenticated}, outbound.FailedNoEffect, remote(422, outbound.CodeCredentialRequired, "unauthenticated", "UNAUTHENTICATED")},
		// problem+json over HTTP+JSON: a2a-go's REST transport does not read
		// it; the 403 says the request was refused.
		a2apeers.ProblemJSON: {[]error{wire.ErrUnauthorized}, outbound.FailedNoEffect, remote(403, outbound.CodeCredentialForbidden, "permission denied", "UNAUTHORIZED")},
	}
	if len(cases) != len(a2apeers.Modes) {
		t.Fatalf("%d cases for %d modes", len(cases), len(a2apeers.Modes))
	}
	for _, mode := range a2apeers.Modes {
		t.Run(mode.String(), func(t *testing.T) {
			tc := cases[mode]
			e := newE2EClient(t, a2apeers.StartMalformed(t, mode))
			conn, runID := e.connect(t)
			out, err := conn.Delegate(e2eCtx(t), e2eStep(a2apeers.Complete))
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Fatalf("Delegate error %v, want one matching %v", err, target)
				}
			}
			wantStatus := interop.StatusFailed
			if tc.rec == outbound.DisconnectedStillActive {
				wantStatus = interop.StatusRunning // the last state read: WORKING
			}
			if out == nil || out.AttemptID == "" || out.Reconciliation != tc.rec || out.Status != wantStatus ||
				out.Artifacts != nil || out.Reply != nil || out.Acceptance != "" {
				t.Fatalf("outcome %+v, want %s, %s and nothing admitted", out, wantStatus, tc.rec)
			}
			pe := ProjectError(runID, err)
			if pe.Code == outbound.CodeInternal {
				t.Fatalf("projected to internal_error: %+v", pe)
			}
			if tc.project != nil {
				wantRendered(t, runID, err, tc.project(runID))
			} else {
				// -32009: the versions it named, and the run (OpenWOP
				// interop.md §The floor).
				wantRendered(t, runID, err, outbound.Error{
					Status: 400, Code: outbound.CodeVersionUnsupported, Message: "the peer offers no protocol version this host accepts",
					Details: map[string]any{"protocol": "a2a", "runId": runID, "remoteError": "VERSION_NOT_SUPPORTED", "supportedVersions": []string{"0.3"}},
				})
			}
			e.wantLog(t, runID, out.AttemptID, reconciledJSON(out))

			outJSON, jerr := json.Marshal(out)
			if jerr != nil {
				t.Fatal(jerr)
			}
			seen := map[string]string{
				"the error": err.Error(), "the outcome": string(outJSON) + fmt.Sprintf("%+v", *out),
				"the projection": pe.Message + fmt.Sprint(pe.Details),
			}
			for i, ev := range e.sink.events(runID) {
				seen[fmt.Sprintf("event %d", i)] = string(ev.Payload)
			}
			for where, text := range seen {
				if strings.Contains(text, a2apeers.BodyMarker) {
					t.Errorf("%s carries the peer's body: %s", where, text)
				}
			}
		})
	}
}

// TestE2ESignedCard: a peer serving its card signed with cardsig (A2A 1.0
// §8.4) is connected under an admission that requires a signature from
// its key, and delegated to; the same card with one byte changed, a card
// signed by another key, and an unsigned card are refused with a
// *SignatureError before anything — not even the negotiation record —
// happens, and the agent is sent nothing.
func TestE2ESignedCard(t *testing.T) {
	signer := newCardSigner(t, "agent-key")
	verifier, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{signer.PublicKey()}})
	if err != nil {
		t.Fatal(err)
	}
	requireSignature := func(a *Admission) { a.RequireSignature, a.CardKeys = true, verifier }
	for _, peer := range e2ePeers {
		t.Run(peer.name, func(t *testing.T) {
			signed := peer.start(t, a2apeers.Script{CardSigner: signer})
			if len(signed.Card.Signatures) != 1 {
				t.Fatalf("the peer's card has %d signatures", len(signed.Card.Signatures))
			}

			t.Run("signed", func(t *testing.T) {
				e := newE2EClient(t, signed, requireSignature)
				conn, runID := e.connect(t)
				if len(conn.Card.Signatures) != 1 {
					t.Fatalf("the connection's card has %d signatures", len(conn.Card.Signatures))
				}
				out, err := conn.Delegate(e2eCtx(t), e2eStep(a2apeers.Complete))
				if err != nil {
					t.Fatalf("Delegate: %v", err)
				}
				wantCompleted(t, out)
				e.wantLog(t, runID, out.AttemptID)
			})

			refused := func(t *testing.T, p *a2apeers.Peer, cardURL string, unsigned bool, calls func() int) {
				t.Helper()
				e := newE2EClient(t, p, requireSignature, func(a *Admission) { a.CardURL = cardURL })
				before := calls()
				runID := newE2ERunID()
				conn, err := e.client.Connect(t.Context(), runID, e2eAlias)
				var se *SignatureError
				if conn != nil || !errors.As(err, &se) || se.Unsigned != unsigned || se.Alias != e2eAlias {
					t.Fatalf("Connect = %v, %v; want a *SignatureError (unsigned %v)", conn, err, unsigned)
				}
				wantRendered(t, runID, err, outbound.Error{
					Status: http.StatusForbidden, Code: outbound.CodeForbidden,
					Message: "the remote agent's card did not pass its signature check",
					Details: map[string]any{"protocol": "a2a", "runId": runID},
				})
				if evs := e.sink.events(runID); len(evs) != 0 {
					t.Fatalf("run log %v, want nothing: the card was refused before the negotiation", evs)
				}
				if n := calls() - before; n != 0 {
					t.Fatalf("the agent was sent %d calls", n)
				}
			}
			peerCalls := func() int { return len(signed.Calls()) }

			t.Run("one byte changed", func(t *testing.T) {
				// One letter of the card's name, of its description, of the
				// interface URL the client would call: the card stays a
				// well-formed, usable card; only its signature tells.
				for _, value := range []string{signed.Card.Name, signed.Card.Description, signed.Card.SupportedInterfaces[0].URL} {
					changed := flipLastLetter(t, signed.CardJSON, value)
					tampered := serveCard(t, changed)
					refused(t, signed, tampered.URL+a2apeers.CardPath, false, peerCalls)
				}
			})

			t.Run("signed by another key", func(t *testing.T) {
				other := peer.start(t, a2apeers.Script{CardSigner: newCardSigner(t, "agent-key")})
				refused(t, other, other.CardURL, false, func() int { return len(other.Calls()) })
			})

			t.Run("unsigned", func(t *testing.T) {
				unsigned := peer.start(t, a2apeers.Script{})
				refused(t, unsigned, unsigned.CardURL, true, func() int { return len(unsigned.Calls()) })
			})
		})
	}
}

// newCardSigner is a card signer over a fresh Ed25519 key named kid.
func newCardSigner(t *testing.T, kid string) *cardsig.Signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsig.NewSigner(key, cardsig.SignerOptions{KeyID: kid})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serveCard serves raw at CardPath from a server of its own.
func serveCard(t *testing.T, raw []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != a2apeers.CardPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// flipLastLetter returns raw with the case of the last letter of the JSON
// string value (found once, encoded as encoding/json writes it) flipped:
// exactly one byte changed.
func flipLastLetter(t *testing.T, raw []byte, value string) []byte {
	t.Helper()
	quoted, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(raw, quoted)
	if at < 0 || bytes.Count(raw, quoted) != 1 {
		t.Fatalf("%s is not once in the card", quoted)
	}
	out := bytes.Clone(raw)
	for i := at + len(quoted) - 2; i > at; i-- {
		if c := out[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			out[i] ^= 0x20
			return out
		}
	}
	t.Fatalf("%s has no letter", quoted)
	return nil
}
