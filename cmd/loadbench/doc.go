// Command loadbench is the end-to-end load bench: it starts four servers
// on loopback HTTP, each in a process of its own, and drives the same
// scenarios against each with closed-loop keep-alive clients from this
// process.
//
//	go run ./cmd/loadbench                      # every scenario, default counts
//	go run ./cmd/loadbench -n 20000 -c 32       # more requests, more clients
//	go run ./cmd/loadbench -scenarios gettask,toolscall -json
//	go run ./cmd/loadbench -scenarios push -cpuprofile lb     # lb-ours.pprof, lb-a2ago.pprof, ...
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
// sender is built with AllowPrivateNetworks; the receiver reports how
// many connections each server's pushes came on, one for a pusher that
// keeps its connection alive). A server that does not speak a scenario's
// protocol is left out of it.
//
// Every server runs in a child process: this binary re-executed
// (os.Executable) with LOADBENCH_SERVE naming the server, told its
// fixtures on stdin, answering its URLs on stdout and serving until its
// stdin closes. The clients, and the loopback push receiver, stay in this
// process. Each server process reports its own CPU time (getrusage(2),
// RUSAGE_SELF) on a small control endpoint, read before and after each
// round, so a server's CPU per request is its own alone: not the
// clients', not the other servers' heaps. The same endpoint drives the
// held task of fan-out and push (one request per update in fan-out, one
// per round in push, alike for every server).
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
// cpu/req is the server process's CPU time (user + system) over the
// rounds divided by the requests; client is the same for this process,
// the load generator. ×sdk is throughput over the SDK stack's of that
// protocol (a2ago for A2A, gosdk for MCP): above 1 the server is faster.
// cpu÷bare is cpu/req over the bare handler's: the server's cost as a
// multiple of the wire work alone. sdk÷cpu is the SDK stack's cpu/req
// over this server's: above 1 the server spends less per request.
//
// # Reading the ratios
//
// The clients cost about as much CPU per request as a lean server (the
// client column), so on a small machine the load generator saturates a
// core of its own and every throughput ratio is squeezed toward 1: a
// server cannot answer faster than the clients ask. sdk÷cpu, server CPU
// per request against the SDK stack in the same run, does not depend on
// how fast the clients are and moves least with the machine's other
// load: on a 2-core machine it is the fairest reading of a "× the SDK"
// target; ×sdk is that target's throughput reading, bounded by the
// clients.
package main
