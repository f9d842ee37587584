package interop

import (
	"regexp"
	"slices"
	"strings"
)

// registeredEventTypes are the run event types OpenWOP registers (the closed
// enum of run-event.schema.json, generated upstream from
// spec/v2/event-codemap.json; RFC 0171 §A.1), plus negotiation.decided,
// which RFC 0242 registers with its negotiationDecided payload. Sorted.
var registeredEventTypes = []string{
	"agent.decided", "agent.handoff", "agent.invocation-completed", "agent.invocation-started",
	"agent.memory-consolidated", "agent.prompt-resolved", "agent.reasoned", "agent.reasoning-delta",
	"agent.tool-called", "agent.tool-returned", "agent.verified",
	"approval.granted", "approval.overridden", "approval.received", "approval.rejected",
	"approval.requested",
	"artifact.created",
	"authorization.decided",
	"budget.consumed", "budget.exhausted", "budget.reserved", "budget.threshold-crossed",
	"cap.breached",
	"channel.presence", "channel.written",
	"clarification.requested", "clarification.resolved",
	"commitment.fired",
	"compensation.completed", "compensation.failed", "compensation.manual-intervention-required",
	"compensation.paused", "compensation.requested", "compensation.started",
	"connector.auth-expired", "connector.authorized",
	"context.summarized",
	"conversation.closed", "conversation.exchanged", "conversation.opened",
	"deployment.canary-adjusted", "deployment.promoted", "deployment.rolled-back",
	"deployment.state-changed",
	"dispatch.fanned-out", "dispatch.joined",
	"egress.decided",
	"envelope.nl-to-format-engaged", "envelope.recovery-applied", "envelope.refusal",
	"envelope.retry-attempted", "envelope.retry-exhausted", "envelope.truncated",
	"eval.completed", "eval.scored", "eval.started",
	"goal.closed", "goal.evaluated",
	"import.applied",
	"interrupt.requested", "interrupt.resolved",
	"lease.acquired", "lease.handed-off", "lease.lost", "lease.renewed",
	"log.appended",
	"memory.compacted", "memory.written",
	"model.capability-insufficient", "model.capability-substituted",
	"negotiation.decided",
	"node.cancelled", "node.completed", "node.dispatched", "node.failed", "node.resumed",
	"node.retried", "node.skipped", "node.started", "node.suspend-failed", "node.suspended",
	"orchestrator.decided",
	"output.chunk",
	"prompt.composed",
	"proposal.activated", "proposal.created",
	"provider.usage",
	"replay.diverged", "replay.diverged-at-refusal",
	"roster.run-initiated",
	"run.cancelled", "run.completed", "run.dead-lettered", "run.failed", "run.paused",
	"run.restored-from-snapshot", "run.resume-started", "run.resumed", "run.started",
	"tool.session-closed", "tool.session-opened",
	"trigger.delivery-attempted", "trigger.subscription-state-changed",
	"variable.changed",
	"version.pinned",
	"voice.barge-in", "voice.cancelled", "voice.endpoint-candidate", "voice.speech-start",
	"voice.synthesis-chunk", "voice.transcript", "voice.turn-commit",
	"workflow-chain.confidence-escalated", "workflow-chain.event",
	"workflow.loopback-limit", "workflow.restored", "workflow.stalled",
	"workspace.updated",
}

// vendorEventType is the vendor form "<org>.<name>[.<sub>]" of RFC 0171
// §A.1; "openwop." is reserved.
var vendorEventType = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*(\.[a-z][a-z0-9]*(-[a-z0-9]+)*)?$`)

// Registered reports whether t is a type OpenWOP registers.
func (t EventType) Registered() bool {
	_, found := slices.BinarySearch(registeredEventTypes, string(t))
	return found
}

// Valid reports whether t may name a run event: a registered type, or a
// vendor type "<org>.<name>" whose org is neither "openwop" nor a
// namespace OpenWOP registers types in. So "acme.audit-noted" is a vendor
// type, while "run.cancelling" is neither registered nor vendor: it
// squats on the registered "run." namespace.
func (t EventType) Valid() bool {
	if t.Registered() {
		return true
	}
	s := string(t)
	if !vendorEventType.MatchString(s) {
		return false
	}
	org, _, _ := strings.Cut(s, ".")
	return org != "openwop" && !registeredNamespace(org)
}

// registeredNamespace reports whether some registered type starts with
// org + ".".
func registeredNamespace(org string) bool {
	prefix := org + "."
	i, _ := slices.BinarySearch(registeredEventTypes, prefix)
	return i < len(registeredEventTypes) && strings.HasPrefix(registeredEventTypes[i], prefix)
}
