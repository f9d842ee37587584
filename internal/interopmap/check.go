package interopmap

import (
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// KnownFacet reports whether name ("family.facet") is a facet of the a2a
// or mcp family record (spec/v2/facets, plus a2a.agentCards from RFC 0202
// and mcp.client from RFC 0204). Only such names may appear in `requires`.
func KnownFacet(name string) bool {
	family, field, ok := strings.Cut(name, ".")
	if !ok {
		return false
	}
	switch family {
	case "a2a":
		switch field {
		case "versions", "preferredVersion", "minimumVersion", "refreshedAt", "profiles",
			"agentCardUrl", "streaming", "pushNotifications", "durableTasks", "agentCards":
			return true
		}
	case "mcp":
		switch field {
		case "revisions", "preferredVersion", "minimumRevision", "refreshedAt", "profiles",
			"features", "serverUrls", "serverMount", "mrtr", "client":
			return true
		}
	}
	return false
}

// Problem is the closed set of consistency rules [Decode] enforces.
type Problem string

// The consistency problems.
const (
	// ProblemMissingStatus: a status projection is not total; Key is the
	// run status without a default row.
	ProblemMissingStatus Problem = "no row for run status"
	// ProblemDuplicateStatus: a run status has two default rows.
	ProblemDuplicateStatus Problem = "second row for run status"
	// ProblemDuplicateOverride: two override rows share (runStatus, interruptKind).
	ProblemDuplicateOverride Problem = "second override for run status and interrupt kind"
	// ProblemOverrideKind: an override names an interrupt kind that never
	// produces its run status, so the row could never apply.
	ProblemOverrideKind Problem = "interrupt kind never produces this run status"
	// ProblemUnknownFacet: a requires entry names no facet of the a2a or
	// mcp family record.
	ProblemUnknownFacet Problem = "requires names an unknown facet"
	// ProblemDuplicateCode: two error rows share a JSON-RPC code.
	ProblemDuplicateCode Problem = "duplicate JSON-RPC code"
	// ProblemDuplicateReason: two error rows share an ErrorInfo reason.
	ProblemDuplicateReason Problem = "duplicate ErrorInfo reason"
	// ProblemDuplicateName: two error rows share an upstream name.
	ProblemDuplicateName Problem = "duplicate error name"
	// ProblemDuplicateWire: two reverse rows share a wire state.
	ProblemDuplicateWire Problem = "duplicate reverse wire state"
	// ProblemNoReverse: a forward row emits a wire state that no reverse
	// row reads back.
	ProblemNoReverse Problem = "forward wire state has no reverse row"
	// ProblemDuplicateFeature: two mcp.features entries share an id.
	ProblemDuplicateFeature Problem = "duplicate feature id"
)

// Inconsistency names one broken consistency rule and the row that breaks
// it; mapping.Load reports each as a *mapping.RowError.
type Inconsistency struct {
	Section string  // e.g. "a2a.taskState"
	Index   int     // row index in Section, or -1 when a row is missing
	Key     string  // what identifies the row: a status, code, facet, ...
	Problem Problem // which rule
}

// check runs the consistency rules the upstream checker runs, plus two of
// ours (override kinds that can occur, forward states that read back). It
// reports every broken rule, not just the first.
func check(doc *document) []Inconsistency {
	var errs []Inconsistency
	add := func(section string, index int, key string, p Problem) {
		errs = append(errs, Inconsistency{Section: section, Index: index, Key: key, Problem: p})
	}

	// Forward projection: one default row per status, overrides unique and
	// reachable (OpenWOP interop map, a2a.taskState; RFC 0199 §D.1).
	const fwd = "a2a.taskState"
	defaults := make(map[interop.RunStatus]bool, 10)
	type overrideKey struct {
		status interop.RunStatus
		kind   interop.InterruptKind
	}
	overrides := make(map[overrideKey]bool)
	for i, r := range doc.A2A.TaskState {
		if r.InterruptKind == "" {
			if defaults[r.RunStatus] {
				add(fwd, i, string(r.RunStatus), ProblemDuplicateStatus)
			}
			defaults[r.RunStatus] = true
			continue
		}
		k := overrideKey{r.RunStatus, r.InterruptKind}
		key := string(r.RunStatus) + "/" + string(r.InterruptKind)
		if overrides[k] {
			add(fwd, i, key, ProblemDuplicateOverride)
		}
		overrides[k] = true
		if r.InterruptKind.SuspendedStatus() != r.RunStatus {
			add(fwd, i, key, ProblemOverrideKind)
		}
	}
	for _, s := range interop.AllStatuses() {
		if !defaults[s] {
			add(fwd, -1, string(s), ProblemMissingStatus)
		}
	}

	// Reverse projection: one row per wire state, and every state the
	// forward projection emits reads back (OpenWOP interop map, a2a.taskStateReverse).
	const rev = "a2a.taskStateReverse"
	wires := make(map[a2a.TaskState]bool, len(doc.A2A.TaskStateReverse))
	for i, r := range doc.A2A.TaskStateReverse {
		if wires[r.Wire] {
			add(rev, i, r.Wire.String(), ProblemDuplicateWire)
		}
		wires[r.Wire] = true
	}
	for i, r := range doc.A2A.TaskState {
		if !wires[r.Wire] {
			add(fwd, i, r.Wire.String(), ProblemNoReverse)
		}
	}

	// Error table: codes, names and reasons identify a row (OpenWOP interop map, a2a.errors; RFC 0211 §F).
	const errSection = "a2a.errors"
	codes := make(map[int]bool)
	names := make(map[string]bool)
	reasons := make(map[string]bool)
	for i, r := range doc.A2A.Errors {
		if codes[r.JSONRPC] {
			add(errSection, i, strconv.Itoa(r.JSONRPC), ProblemDuplicateCode)
		}
		codes[r.JSONRPC] = true
		if names[r.Upstream] {
			add(errSection, i, r.Upstream, ProblemDuplicateName)
		}
		names[r.Upstream] = true
		if r.Reason != "" {
			if reasons[r.Reason] {
				add(errSection, i, r.Reason, ProblemDuplicateReason)
			}
			reasons[r.Reason] = true
		}
	}

	// requires gates name real facets (OpenWOP interop.md §The operation mappings).
	checkRequires := func(section string, ops []docOperation) {
		for i, op := range ops {
			for _, f := range op.Requires {
				if !KnownFacet(f) {
					add(section, i, f, ProblemUnknownFacet)
				}
			}
		}
	}
	checkRequires("a2a.operations", doc.A2A.Operations)
	checkRequires("mcp.methods", doc.MCP.Methods)

	features := make(map[string]bool)
	for i, f := range doc.MCP.Features {
		if features[f.ID] {
			add("mcp.features", i, f.ID, ProblemDuplicateFeature)
		}
		features[f.ID] = true
	}

	// MCP task status: total over the run statuses (OpenWOP interop map, mcp.tasks.status).
	if t := doc.MCP.Tasks; t != nil {
		checkRequires("mcp.tasks.methods", t.Methods)
		const ts = "mcp.tasks.status"
		seen := make(map[interop.RunStatus]bool, 10)
		for i, r := range t.Status {
			if seen[r.RunStatus] {
				add(ts, i, string(r.RunStatus), ProblemDuplicateStatus)
			}
			seen[r.RunStatus] = true
		}
		for _, s := range interop.AllStatuses() {
			if !seen[s] {
				add(ts, -1, string(s), ProblemMissingStatus)
			}
		}
	}
	return errs
}
