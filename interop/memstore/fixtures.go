package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Ids of the conformance fixture workflows.
const (
	FixtureNoop        = "conformance-noop"
	FixtureApproval    = "conformance-approval"
	FixtureFailure     = "conformance-failure"
	FixtureDelay       = "conformance-delay"
	FixtureCancellable = "conformance-cancellable"
)

// Observable constants of the fixtures, for tests that check them.
const (
	// FixtureArtifactID is the id of the artifact conformance-noop publishes.
	FixtureArtifactID = "result"
	// FixtureFailureMessage is the FailureMessage of conformance-failure.
	FixtureFailureMessage = "conformance failure fixture failed on purpose"
	// FixtureRejectedMessage is the FailureMessage of a rejected
	// conformance-approval run.
	FixtureRejectedMessage = "request rejected"
	// MaxFixtureDelayMs bounds delayMs of conformance-delay and
	// conformance-cancellable; it is also the default of the latter.
	MaxFixtureDelayMs = 600000
)

// Ids of the interrupt fixtures ([InterruptFixtures]): the approval,
// credential and clarification interrupts the OpenWOP suite drives over
// A2A, MCP and REST.
const (
	FixtureApprovalApprovers      = "conformance-approval-approvers"
	FixtureCredential             = "conformance-credential"
	FixtureClarification          = "conformance-clarification"
	FixtureClarificationNested    = "conformance-clarification-nested"
	FixtureClarificationSensitive = "conformance-clarification-sensitive"
)

// Observable constants of the interrupt fixtures.
const (
	// ListedApprover is the approversList of conformance-approval-approvers:
	// the one principal that may resolve it. No demo credential maps to it,
	// so a suite's own bearer is a non-listed resolver by construction.
	ListedApprover = "urn:conformance:listed-approver"
	// CredentialProvider is the provider conformance-credential asks the
	// caller to connect, with the scope CredentialScope.
	CredentialProvider = "synthetic"
	CredentialScope    = "openwop.read"
	// FixtureCredentialDeclinedMessage is the FailureMessage of a
	// conformance-credential run whose credential request was declined
	// (OpenWOP oauth §The credential interrupt: connector_auth_declined).
	FixtureCredentialDeclinedMessage = "connector_auth_declined: the synthetic account was not connected"
	// FixtureClarificationDeclinedMessage is the FailureMessage of a
	// clarification fixture whose question was declined.
	FixtureClarificationDeclinedMessage = "clarification declined"
)

const (
	openObjectSchema = `{"type":"object","properties":{"message":{"type":"string","description":"Free text; ignored."}}}`
	delaySchema      = `{"type":"object","properties":{"delayMs":{"type":"integer","minimum":0,"maximum":600000}},"additionalProperties":false}`
	approvalSchema   = `{"type":"object","properties":{"action":{"type":"string","enum":["accept","reject"]}},"required":["action"]}`

	// A flat object of primitives: an MCP client may be asked for it in
	// form mode.
	clarificationSchema = `{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"What the workflow should call you."}},"required":["name"],"additionalProperties":false}`
	// An object inside the object: not a form (MCP elicitation forms are
	// flat), so it is asked in URL mode or not over MCP at all.
	clarificationNestedSchema = `{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city"],"additionalProperties":false}},"required":["address"],"additionalProperties":false}`
	// A secret: never asked in an MCP form, whose answer would pass through
	// the client (MCP elicitation §Security; OpenWOP interop §MRTR).
	clarificationSensitiveSchema = `{"type":"object","properties":{"passphrase":{"type":"string","format":"password","writeOnly":true}},"required":["passphrase"],"additionalProperties":false}`
	// The closed resume value of a credential interrupt. "authorized" is
	// refused: it is accepted only when a credential now resolves (OpenWOP
	// oauth §The credential interrupt), and on the in-memory host none ever
	// does, because no grant can complete.
	credentialResumeSchema = `{"type":"object","properties":{"outcome":{"type":"string","enum":["authorized","declined"]}},"required":["outcome"],"additionalProperties":false,` +
		`"not":{"properties":{"outcome":{"const":"authorized"}},"required":["outcome"]}}`
)

// ConformanceFixtures returns the workflows every conformance tenant has:
//
//   - conformance-noop publishes one text artifact (id "result", last chunk)
//     and completes with {"ok":true};
//   - conformance-approval suspends on an approval interrupt (key
//     "approval", node "approve", actions accept|reject, a resume schema
//     requiring that action); accept completes with {"approved":true},
//     reject or decline fails with "request rejected", the cancel outcome
//     cancels it;
//   - conformance-failure fails with a safe message;
//   - conformance-delay waits delayMs (default 0) and completes with
//     {"delayedMs":n};
//   - conformance-cancellable waits delayMs (default 600000, so it waits
//     for a cancel) and completes like conformance-delay.
//
// Both waiting fixtures stop as soon as their run is cancelled (and so end
// cancelled); delayMs is an integer in [0, 600000] and nothing else is
// accepted. Every call returns fresh values.
func ConformanceFixtures() []WorkflowDef {
	return []WorkflowDef{
		{
			Workflow: interop.Workflow{
				ID: FixtureNoop, Name: "Conformance no-op",
				Description: "Publishes one artifact and completes at once.",
				InputSchema: json.RawMessage(openObjectSchema),
				Tags:        []string{"conformance"},
			},
			Run:    runNoop,
			Inline: true, // it never waits
		},
		{
			Workflow: interop.Workflow{
				ID: FixtureApproval, Name: "Conformance approval",
				Description: "Waits for an approval, then completes (accept) or fails (reject).",
				InputSchema: json.RawMessage(openObjectSchema),
				Tags:        []string{"conformance"},
			},
			Run: approvalFixture("approve", nil),
		},
		{
			Workflow: interop.Workflow{
				ID: FixtureFailure, Name: "Conformance failure",
				Description: "Fails with a safe message.",
				InputSchema: json.RawMessage(openObjectSchema),
				Tags:        []string{"conformance"},
			},
			Run: func(context.Context, *RunContext) (json.RawMessage, error) {
				return nil, Fail(FixtureFailureMessage)
			},
		},
		{
			Workflow: interop.Workflow{
				ID: FixtureDelay, Name: "Conformance delay",
				Description: "Waits delayMs milliseconds (default 0), then completes.",
				InputSchema: json.RawMessage(delaySchema),
				Tags:        []string{"conformance"},
			},
			Run: waitFixture(0),
		},
		{
			Workflow: interop.Workflow{
				ID: FixtureCancellable, Name: "Conformance cancellable",
				Description: "Waits delayMs milliseconds (default 600000) or until cancelled.",
				InputSchema: json.RawMessage(delaySchema),
				Tags:        []string{"conformance"},
			},
			Run: waitFixture(MaxFixtureDelayMs),
		},
	}
}

// RegisterFixtures registers ConformanceFixtures in tenant.
func (s *Store) RegisterFixtures(tenant string) error {
	for _, def := range ConformanceFixtures() {
		if err := s.Register(tenant, def); err != nil {
			return err
		}
	}
	return nil
}

func runNoop(_ context.Context, rc *RunContext) (json.RawMessage, error) {
	err := rc.PublishArtifact(interop.Artifact{
		ID:    FixtureArtifactID,
		Name:  "result",
		Parts: []interop.Part{interop.TextPart("conformance-noop completed")},
	}, false, true)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(`{"ok":true}`), nil
}

// approvalFixture suspends on an approval at node; approvers, when set, is
// its approversList.
func approvalFixture(node string, approvers []string) WorkflowFunc {
	return func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		res, err := rc.Interrupt(ctx, interop.Interrupt{
			Kind:         interop.InterruptApproval,
			Key:          "approval",
			NodeID:       node,
			Message:      "Approve the request?",
			Actions:      []string{"accept", "reject"},
			ResumeSchema: json.RawMessage(approvalSchema),
			Approvers:    approvers,
		})
		if err != nil {
			return nil, err
		}
		if res.Outcome == interop.OutcomeCancel {
			return nil, Cancel("approval cancelled")
		}
		// The store validated the value with exact member names; read it the
		// same way (a struct would also match "Action" or "ACTION").
		action, ok := approvalAction(res.Value)
		if !ok {
			return nil, errors.New("approval fixture: resume value has no action")
		}
		if action != "accept" {
			return nil, Fail(FixtureRejectedMessage)
		}
		return json.RawMessage(`{"approved":true}`), nil
	}
}

// InterruptFixtureOptions is what the interrupt fixtures need to know
// about the host.
type InterruptFixtureOptions struct {
	// ConnectURL is the connectUrl of conformance-credential: where the
	// initiating Subject starts the OAuth grant for CredentialProvider. It
	// must be on the host's own origin (OpenWOP oauth §The credential
	// interrupt, RFC 0199 §C.3), so only the host can name it: an absolute
	// https URL, or http on a loopback host for local development (a
	// loopback origin is potentially trustworthy, W3C Secure Contexts §3.2).
	// It never carries a query, a fragment or user info, so it cannot embed
	// a token or anything that resolves the interrupt. Empty leaves
	// conformance-credential out: a host without a secure origin offers no
	// credential interrupt.
	ConnectURL string
}

// InterruptFixtures returns the interrupt workflows the OpenWOP suite names
// beside [ConformanceFixtures]:
//
//   - conformance-approval-approvers is conformance-approval (node "gate")
//     with approversList [ListedApprover]: no other principal may resolve
//     it, over any surface;
//   - conformance-credential (only with o.ConnectURL) suspends on a
//     credential interrupt (key "credential", node "use-credential") for
//     CredentialProvider with scope CredentialScope, reason "missing" and
//     o.ConnectURL; its resume
//     value is {"outcome": "authorized" | "declined"}, where "authorized"
//     is refused because no credential ever resolves on this store, and
//     "declined" (or the decline outcome) fails the run with
//     FixtureCredentialDeclinedMessage;
//   - conformance-clarification asks for {"name": string}, a flat schema an
//     MCP client may be asked in form mode, and completes with
//     {"answer": value};
//   - conformance-clarification-nested asks for {"address": {"city", …}},
//     which is not a form, and completes with {"answer": value};
//   - conformance-clarification-sensitive asks for a "passphrase" of
//     format password, never to be asked in a form, and completes with
//     {"received": true}, never echoing it.
//
// A declined clarification fails with FixtureClarificationDeclinedMessage;
// the cancel outcome cancels any of them. Every call returns fresh values.
func InterruptFixtures(o InterruptFixtureOptions) ([]WorkflowDef, error) {
	defs := []WorkflowDef{{
		Workflow: interop.Workflow{
			ID: FixtureApprovalApprovers, Name: "Conformance approval (listed approvers)",
			Description: "Waits for an approval only " + ListedApprover + " may give.",
			InputSchema: json.RawMessage(openObjectSchema),
			Tags:        []string{"conformance"},
		},
		Run: approvalFixture("gate", []string{ListedApprover}),
	}}
	if connect := o.ConnectURL; connect != "" {
		if err := checkConnectURL(connect); err != nil {
			return nil, err
		}
		defs = append(defs, WorkflowDef{
			Workflow: interop.Workflow{
				ID: FixtureCredential, Name: "Conformance credential",
				Description: "Waits for the caller to connect a " + CredentialProvider + " account.",
				InputSchema: json.RawMessage(openObjectSchema),
				Tags:        []string{"conformance"},
			},
			Run: func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
				return runCredential(ctx, rc, connect)
			},
		})
	}
	return append(defs,
		clarificationDef(FixtureClarification, "Conformance clarification", "Asks the caller's name, then completes.",
			"What should the workflow call you?", clarificationSchema, true),
		clarificationDef(FixtureClarificationNested, "Conformance clarification (nested)", "Asks for an address, an object inside the answer.",
			"Where should the result be sent?", clarificationNestedSchema, true),
		clarificationDef(FixtureClarificationSensitive, "Conformance clarification (sensitive)", "Asks for a passphrase, a secret field.",
			"Enter the passphrase to continue.", clarificationSensitiveSchema, false),
	), nil
}

// RegisterInterruptFixtures registers InterruptFixtures(o) in tenant.
func (s *Store) RegisterInterruptFixtures(tenant string, o InterruptFixtureOptions) error {
	defs, err := InterruptFixtures(o)
	if err != nil {
		return err
	}
	for _, def := range defs {
		if err := s.Register(tenant, def); err != nil {
			return err
		}
	}
	return nil
}

// SecureOrigin reports whether origin may carry a connectUrl (see
// InterruptFixtureOptions.ConnectURL): https, or http on a loopback host.
func SecureOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "https" || u.Scheme == "http" && loopbackHost(u.Hostname())
}

// checkConnectURL enforces InterruptFixtureOptions.ConnectURL.
func checkConnectURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || !u.IsAbs():
		return fmt.Errorf("memstore: interrupt fixtures: ConnectURL %q is not an absolute URL", raw)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("memstore: interrupt fixtures: ConnectURL %q carries user info, a query or a fragment", raw)
	case SecureOrigin(raw):
		return nil
	}
	return fmt.Errorf("memstore: interrupt fixtures: ConnectURL %q must be https (or http on a loopback host)", raw)
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// runCredential suspends on a credential interrupt and fails when the
// request is declined (OpenWOP oauth §The credential interrupt).
func runCredential(ctx context.Context, rc *RunContext, connectURL string) (json.RawMessage, error) {
	cred := interop.CredentialData{
		Provider:   CredentialProvider,
		Scopes:     []string{CredentialScope},
		Reason:     "missing",
		ConnectURL: connectURL,
	}
	data, err := json.Marshal(cred)
	if err != nil {
		return nil, fmt.Errorf("credential fixture: %w", err)
	}
	res, err := rc.Interrupt(ctx, interop.Interrupt{
		Kind:         interop.InterruptCredential,
		Key:          "credential",
		NodeID:       "use-credential",
		Message:      "Connect your " + CredentialProvider + " account to continue.",
		Data:         data,
		Credential:   &cred,
		ResumeSchema: json.RawMessage(credentialResumeSchema),
	})
	if err != nil {
		return nil, err
	}
	switch {
	case res.Outcome == interop.OutcomeCancel:
		return nil, Cancel("credential request cancelled")
	case res.Outcome == interop.OutcomeDecline, memberString(res.Value, "outcome") == "declined":
		// RFC 0199 §C.4: a declined credential fails the node with
		// connector_auth_declined.
		return nil, FailWith("connector_auth_declined", FixtureCredentialDeclinedMessage)
	}
	// The resume schema refuses "authorized"; nothing else gets here.
	return nil, errors.New("credential fixture: resolved without a credential")
}

// clarificationDef is a workflow that asks one clarification question with
// schema and completes with the answer (echo) or {"received":true}.
func clarificationDef(id, name, description, question, schema string, echo bool) WorkflowDef {
	return WorkflowDef{
		Workflow: interop.Workflow{
			ID: id, Name: name, Description: description,
			InputSchema: json.RawMessage(openObjectSchema),
			Tags:        []string{"conformance"},
		},
		Run: func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			res, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind:         interop.InterruptClarification,
				Key:          "clarification",
				NodeID:       "clarify",
				Message:      question,
				ResumeSchema: json.RawMessage(schema),
			})
			if err != nil {
				return nil, err
			}
			switch res.Outcome {
			case interop.OutcomeCancel:
				return nil, Cancel("clarification cancelled")
			case interop.OutcomeDecline:
				return nil, Fail(FixtureClarificationDeclinedMessage)
			}
			if !echo {
				return json.RawMessage(`{"received":true}`), nil
			}
			// The store validated the value against schema: it is an object.
			return json.Marshal(struct {
				Answer json.RawMessage `json:"answer"`
			}{res.Value})
		},
	}
}

// memberString returns the string member name of the JSON object v, or "".
// It matches the name exactly, as the store's schema check did.
func memberString(v json.RawMessage, name string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil {
		return ""
	}
	var out string
	if json.Unmarshal(obj[name], &out) != nil {
		return ""
	}
	return out
}

// waitFixture waits delayMs (or defaultMs when absent), returning early with
// ctx.Err() when the run is cancelled.
func waitFixture(defaultMs int64) WorkflowFunc {
	return func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		var in struct {
			DelayMs *float64 `json:"delayMs"` // schema: integer (1.0 counts as one)
		}
		if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
			return nil, fmt.Errorf("delay fixture: inputs: %w", err)
		}
		ms := defaultMs
		if in.DelayMs != nil {
			ms = int64(*in.DelayMs)
		}
		if ms > 0 {
			timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer timer.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-timer.C:
			}
		}
		return json.RawMessage(fmt.Sprintf(`{"delayedMs":%d}`, ms)), nil
	}
}
