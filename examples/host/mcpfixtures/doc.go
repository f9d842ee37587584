// Package mcpfixtures is the fixture host the official MCP conformance
// suite (@modelcontextprotocol/conformance, scenarios of the 2026-07-28
// revision and the io.modelcontextprotocol/tasks extension) drives
// against the mcp mount: the tools, prompts, resources and completions the
// scenarios name, implemented on the mount's optional extension points
// (package mcp/ext: ext.NativeTools, ext.Prompts, ext.Resources,
// ext.Completions, answered in go-sdk's protocol types), plus memstore
// workflows for the Tasks scenarios.
//
// Two halves, both mounted in one dedicated tenant ([Tenant]):
//
//   - [Register] adds the Tasks fixtures as workflows — a task is the
//     host's run (OpenWOP interop.md §MCP tasks and cancellation): greet (never a task), slow_compute
//     (waits, cancellable), failing_job (a tool error, task support
//     required), protocol_error_job (a host fault: memstore.Fault makes
//     the task status failed), confirm_delete and multi_input (input
//     rounds on a task, one and two interrupts at once).
//   - [New] returns the [Host] serving everything that is not a workflow:
//     the tools-call-*, server-stateless and input-required-result-*
//     tools (MRTR with elicitation, sampling and roots, sealed host
//     state, capability checks), test_tool_with_task (input rounds, then
//     a hand-off to slow_compute answered as a task), the prompts, the
//     test:// resources and completions. [Host.Config] is it on every
//     extension point, for ext.New to make the mount's
//     mcp.Options.Extension.
//
// examples/host mounts them at /mcp-conformance, and its
// TestMCPConformanceSuite runs the suite there in CI.
//
// The fixtures hold no secrets and no mutable package state; every value
// a scenario checks is a constant here, written for these fixtures.
package mcpfixtures
