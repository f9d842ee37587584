// Command loadbench is the end-to-end load bench: it starts four servers
// on loopback HTTP in this one process and drives the same scenarios
// against each with closed-loop keep-alive clients.
//
//	go run ./cmd/loadbench                      # every scenario, default counts
//	go run ./cmd/loadbench -n 20000 -c 32       # more requests, more clients
//	go run ./cmd/loadbench -scenarios gettask,toolscall -json
//
// The servers:
//
//	ours   the example host (examples/host/hostapp, its Backend seam) over
//	       interop/memstore with the conformance fixtures: the library as a
//	       host mounts it, authentication, audit and request logging (at
//	       error level) included; messages go to a bench agent through its
//	       per-agent routing value, as the host's own interface routes
//	       only conformance-approval
//	a2ago  a2a-go v2.4.0's full server stack: a2asrv.NewJSONRPCHandler over
//	       a2asrv.NewHandler with its in-memory task store and an
//	       AgentExecutor that completes at once
//	gosdk  go-sdk v1.8.0's StreamableHTTPHandler, stateless, JSON
//	       responses, with one no-op tool
//	bare   a plain net/http handler doing the same wire work: it decodes
//	       the JSON-RPC request and encodes a fixed answer of the shape
//	       ours answers
//
// The scenarios (A2A over JSON-RPC 2.0, A2A 1.0.1 §9.4; MCP over Streamable
// HTTP, MCP 2026-07-28 basic/transports): GetTask of a completed task,
// SendMessage of a no-op task answered completed, ListTasks (a page of 50
// of a tenant holding -list-size tasks), tools/list, tools/call of a
// no-op tool, SubscribeToTask fan-out (-subscribers SSE streams on one
// task; the time until one update has reached all of them) and push (a
// burst of run events on one task with one push config, the deliveries a
// loopback receiver takes per second on that one lane; ours allows the
// receiver's origin through its egress guard with -push-allow, a2a-go's
// sender is built with AllowPrivateNetworks). A server that does not
// speak a scenario's protocol is left out of it.
//
// Rounds alternate between the servers (-rounds per scenario, the order
// rotating each round), so background load on a shared machine falls on
// all of them alike. Every answer is validated, not only its status: a
// wrong answer is an error and makes the command exit 1.
//
// # Columns
//
// req/s is requests completed per second of wall time over all rounds
// (fan-out: updates that reached every subscriber; push: deliveries);
// p50 and p99 are request latencies as the client saw them (for fan-out:
// the time until the update reached every subscriber; push has none).
// cpu/req is the process's CPU time (user + system, getrusage(2)) over
// the rounds divided by the requests. The clients run in the same
// process, so that figure includes their work: they do as little as
// they can (one shared keep-alive transport per server, bodies built by
// appending bytes, answers decoded once to validate them), and the bare
// handler's figure is the baseline, mostly client and net/http cost, to
// subtract or compare: −bare is cpu/req less bare's in the same scenario,
// the server's work beyond decoding and encoding the wire, client cost
// removed (CPU time suffers less than throughput from the machine's
// other load). ×bare and ×sdk are throughput ratios, ours (or
// any server) over bare and over the SDK stack of that protocol (a2ago
// or gosdk): above 1 the server is faster.
package main
