package interop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Grammars of ids.schema.json that a RunEventDoc uses. They are restated
// here because interop imports nothing of ours.
var (
	eventIDGrammar  = regexp.MustCompile(`^[A-Za-z0-9._~-]{16,128}$`)
	boundIDGrammar  = regexp.MustCompile(`^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$`)
	authorIDGrammar = regexp.MustCompile(`^[A-Za-z0-9._~:-]{1,128}$`) // nodeId, workflowId
)

// payloadExtension is the escape hatch of closed payloads: a member whose
// name matches it is carried opaquely (RFC 0185 §B).
var payloadExtension = regexp.MustCompile(`^(openwop-|x-|vendor\.)`)

// payloadRule is what Validate knows of one registered payload: its
// members (the payload is closed apart from extension members), the
// required ones, and a check of the values the library relies on.
type payloadRule struct {
	members  []string
	required []string
	check    func(members map[string]json.RawMessage) error
}

// payloadRules cover the registered types the library and the embedded
// host write (run-event-payloads.schema.json). Other registered types are
// checked for a well-formed payload only.
var payloadRules = map[EventType]payloadRule{
	EventRunStarted: {
		members:  []string{"workflowId", "inputs", "transport", "engineVersion", "owner", "tags", "metadata"},
		required: []string{"workflowId"},
		check: func(m map[string]json.RawMessage) error {
			if err := grammar(m, "workflowId", authorIDGrammar); err != nil {
				return err
			}
			if err := object(m, "inputs", false); err != nil {
				return err
			}
			return oneOf(m, "transport", string(TransportREST), string(TransportMCP), string(TransportA2A), "ui")
		},
	},
	EventRunCompleted: {
		members:  []string{"outputs", "durationMs"},
		required: []string{"outputs"},
		check:    func(m map[string]json.RawMessage) error { return object(m, "outputs", true) },
	},
	EventRunFailed: {
		members:  []string{"error", "failedNodeId", "durationMs"},
		required: []string{"error"},
		check:    eventError,
	},
	EventRunCancelled: {
		members: []string{"reason", "cancelledBy", "durationMs", "parentRunId"},
		check:   func(m map[string]json.RawMessage) error { return str(m, "reason") },
	},
	EventNodeSuspended: {
		members:  []string{"nodeId", "interruptId", "kind", "reason", "key"},
		required: []string{"nodeId", "interruptId"},
		check:    interruptPayload,
	},
	EventNodeCompleted: {
		members:  []string{"nodeId", "outputs", "durationMs"},
		required: []string{"nodeId"},
		check: func(m map[string]json.RawMessage) error {
			if err := grammar(m, "nodeId", authorIDGrammar); err != nil {
				return err
			}
			return object(m, "outputs", false)
		},
	},
	EventNodeFailed: {
		members:  []string{"nodeId", "error", "attempts"},
		required: []string{"nodeId", "error"},
		check: func(m map[string]json.RawMessage) error {
			if err := grammar(m, "nodeId", authorIDGrammar); err != nil {
				return err
			}
			return eventError(m)
		},
	},
	EventInterruptResolved: {
		members:  []string{"nodeId", "interruptId", "kind", "reason", "resumeValue", "resolvedBy", "decision", "action", "refineFeedback", "editedArtifactData"},
		required: []string{"nodeId", "interruptId"},
		check:    interruptPayload,
	},
	EventArtifactCreated: {
		members:  []string{"artifactId", "artifactType", "nodeId", "version", "summary", "registered", "registrationSource"},
		required: []string{"artifactId", "artifactType"},
		check: func(m map[string]json.RawMessage) error {
			for _, k := range []string{"artifactId", "artifactType"} {
				var s string
				if json.Unmarshal(m[k], &s) != nil || s == "" {
					return fmt.Errorf("%s must be a non-empty string", k)
				}
			}
			return nil
		},
	},
	EventNegotiationDecided: {
		members:  []string{"protocol", "outcome", "at", "version", "floor", "peerDigest", "reason", "requested"},
		required: []string{"protocol", "outcome", "at"},
		check: func(m map[string]json.RawMessage) error {
			if err := oneOf(m, "protocol", "a2a", "mcp"); err != nil {
				return err
			}
			return oneOf(m, "outcome", "accepted", "refused")
		},
	},
}

// Validate reports whether e is a well-formed RunEventDoc as a store hands
// it out: eventId, runId and nodeId in their grammars, sequence ≥ 0,
// schemaVersion ≥ 1, a timestamp, a registered or vendor type (never a
// lifecycle-sounding name OpenWOP does not register, such as
// "run.cancelling"), a JSON payload, and — for the registered types the
// library relies on — a payload object with the registered members and
// their required values. The error names the first problem.
func (e RunEvent) Validate() error {
	switch {
	case !eventIDGrammar.MatchString(e.EventID):
		return fmt.Errorf("interop: event eventId %q is not 16–128 characters of [A-Za-z0-9._~-]", e.EventID)
	case !boundIDGrammar.MatchString(e.RunID):
		return fmt.Errorf("interop: event runId %q is not a tenant-bound id", e.RunID)
	case e.NodeID != "" && !authorIDGrammar.MatchString(e.NodeID):
		return fmt.Errorf("interop: event nodeId %q is not a node id", e.NodeID)
	case e.Sequence < 0:
		return fmt.Errorf("interop: event sequence %d is negative", e.Sequence)
	case e.SchemaVersion < 1:
		return fmt.Errorf("interop: event schemaVersion %d is below 1", e.SchemaVersion)
	case e.Timestamp.IsZero():
		return errors.New("interop: event has no timestamp")
	case !e.Type.Valid():
		return fmt.Errorf("interop: event type %q is neither registered nor a vendor <org>.<name>", e.Type)
	case !json.Valid(e.Payload):
		return fmt.Errorf("interop: %s payload is not a JSON value", e.Type)
	}
	rule, ok := payloadRules[e.Type]
	if !ok {
		return nil
	}
	var members map[string]json.RawMessage
	if p := bytes.TrimSpace(e.Payload); len(p) == 0 || p[0] != '{' || json.Unmarshal(p, &members) != nil {
		return fmt.Errorf("interop: %s payload is not a JSON object", e.Type)
	}
	for k := range members {
		if !slices.Contains(rule.members, k) && !payloadExtension.MatchString(k) {
			return fmt.Errorf("interop: %s payload has member %q, which is neither registered nor an extension (x-, vendor., openwop-)", e.Type, k)
		}
	}
	for _, k := range rule.required {
		if _, ok := members[k]; !ok {
			return fmt.Errorf("interop: %s payload lacks %q", e.Type, k)
		}
	}
	if err := rule.check(members); err != nil {
		return fmt.Errorf("interop: %s payload: %w", e.Type, err)
	}
	return nil
}

func interruptPayload(m map[string]json.RawMessage) error {
	if err := grammar(m, "nodeId", authorIDGrammar); err != nil {
		return err
	}
	if err := grammar(m, "interruptId", boundIDGrammar); err != nil {
		return err
	}
	var reason string
	if raw, ok := m["reason"]; ok && (json.Unmarshal(raw, &reason) != nil || len(reason) < 1 || len(reason) > 64) {
		return errors.New("reason must be a string of 1–64 characters")
	}
	return oneOf(m, "kind", "approval", "clarification", "external-event", "custom",
		"conversation.start", "conversation.exchange", "conversation.close", "low-confidence", "credential")
}

// eventError checks the error member of run.failed and node.failed
// ($defs._errorObject): an object with a non-empty code and message.
func eventError(m map[string]json.RawMessage) error {
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(m["error"], &e) != nil || e.Code == "" || e.Message == "" {
		return errors.New("error must be an object with a non-empty code and message")
	}
	return nil
}

// grammar checks that member k, when present, is a string in g.
func grammar(m map[string]json.RawMessage, k string, g *regexp.Regexp) error {
	raw, ok := m[k]
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !g.MatchString(s) {
		return fmt.Errorf("%s is not in its id grammar", k)
	}
	return nil
}

// object checks that member k is a JSON object (and present, if required).
func object(m map[string]json.RawMessage, k string, required bool) error {
	raw, ok := m[k]
	if !ok {
		if required {
			return fmt.Errorf("%s is required", k)
		}
		return nil
	}
	if p := bytes.TrimSpace(raw); len(p) == 0 || p[0] != '{' {
		return fmt.Errorf("%s must be a JSON object", k)
	}
	return nil
}

// str checks that member k, when present, is a string.
func str(m map[string]json.RawMessage, k string) error {
	raw, ok := m[k]
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return fmt.Errorf("%s must be a string", k)
	}
	return nil
}

// oneOf checks that member k, when present, is one of the strings values.
func oneOf(m map[string]json.RawMessage, k string, values ...string) error {
	raw, ok := m[k]
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !slices.Contains(values, s) {
		return fmt.Errorf("%s must be one of %s", k, strings.Join(values, ", "))
	}
	return nil
}
