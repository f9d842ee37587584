// Package a2a serves A2A 1.0 over a host's RunStore, exactly as the OpenWOP
// v2 interop map requires (its a2a rows, with OpenWOP interop.md and RFCs
// 0202, 0208, 0211 and 0214). An A2A Task is the host's run: the server keeps no task
// state of its own.
//
// Build a [Server] with [New] from its [Deps] — what it cannot run without:
// the RunStore, the SubjectResolver, the version policy, the auditor, the
// interop map, the JSON-RPC URL and the routed workflows — and its
// [Options], each with a documented default; then mount its handlers on
// the host's mux:
//
//	mux.Handle("/.well-known/agent-card.json", srv.AgentCard())
//	mux.Handle("/a2a", srv.JSONRPC())                                   // required binding
//	mux.Handle("/a2a/rest/", http.StripPrefix("/a2a/rest", srv.HTTPJSON())) // optional binding
//
// [Server.Served] reports what the server serves (its bindings and the
// a2a facets its Options turn on), for the facet check of the host's
// advertisement; the card's capabilities and the operation gate read the
// same value. (The root package wopinterop does all this from one Config.)
//
// # How a request flows
//
// The A2A methods are implemented once, behind one internal interface
// shaped like a2a-go's a2asrv.RequestHandler (operations.go): the decoded
// a2a-go request in, an a2a-go result or an *Error out, a stream as an
// iter.Seq2 of events. One table there lists, per method, everything a
// binding needs: the request's shape, its task id member, its HTTP+JSON
// route and verbs, how the result is wrapped, whether it streams. Each
// binding (jsonrpc.go, rest.go) only decodes, calls through that table and
// encodes; what both need lives apart (body.go, eventstream.go,
// errordetail.go, status.go).
//
// A binding first has prepare (call.go) take the admission step shared
// with the MCP mount (internal/admit): resolve the Subject, decide the
// version with the negotiate policy and hand the negotiation.decided
// record to the auditor as a host event of the caller's tenant — an
// inbound request never writes to a run's log, so a refused request
// appends no event — and only then reads (see Hostile input and faults)
// and strictly decodes the request. A caller the SubjectResolver does not
// accept (a missing or invalid credential, a forbidden one, a resolver
// fault) is recorded as refused, reason unauthenticated (with the
// A2A-Version it named, when well formed), for no tenant, before the 401,
// 403 or 500; an accepted authenticated request records reason ok. A
// decision the auditor cannot record fails the request with the internal
// error, refusals included: the policy negotiate.AuditorOptions.Synchronous
// documents. invoke (operations.go) gates every method once: a row whose
// `requires` facet is off is refused with the row's error (OpenWOP
// interop.md §The operation mappings; interop map, a2a.operations). The
// binding then decodes the request; the operation reads the routing value
// as described under Routing values. The operation (send.go, tasks.go,
// pushconfig.go, card.go) reads the run under the caller's
// Subject — unreadable is unknown (OpenWOP interop.md §Isolation) — applies the multi-turn rules
// (OpenWOP interop map, a2a.operations; interop.md §A2A multi-turn), judges the message (below) and calls the RunStore;
// project.go turns the Run into
// a Task through the interop map's state rows (OpenWOP interop map, a2a.taskState; RFC 0199 §D.1; a2a-task-state.schema.json); stream.go drives
// SendStreamingMessage and SubscribeToTask from the run's watch (OpenWOP interop map, a2a.operations).
//
// # Routing values
//
// The tenant of a request (params.tenant on JSON-RPC, the /{tenant} path
// segment on HTTP+JSON) is a routing hint, never a tenant of record: the
// Subject alone decides what the caller may see. It is read only where it
// selects something:
//
//   - SendMessage without taskId and GetExtendedAgentCard: the per-agent
//     routing value R, resolved only for an authenticated caller and only
//     among the caller's agents; any other value (another tenant's R, a
//     tenant name, never minted, malformed) is answered exactly like a
//     never-minted one: -32602 on "tenant", -32007 (OpenWOP interop.md
//     §Non-disclosure).
//   - ListTasks: one of the caller's R narrows the list to the runs of the
//     workflows routed to that agent, started through any surface — a
//     filter on the one run store (ListRunsQuery.WorkflowID for an agent
//     with one workflow, a run-by-run filter for several). Any other value
//     is ignored: the answer is byte for byte the one without it.
//   - Every operation on an existing task (GetTask, CancelTask,
//     SubscribeToTask, SendMessage with taskId, the push-config rows)
//     ignores it: the task id names the run.
//
// Through R, a new task runs a workflow routed to the agent that the
// caller may start: the one message.metadata.skillId names (refused -32602
// when it is not one of them), else the one Options.SelectWorkflow picks
// among several, else the agent's default — the first of
// interop.Agent.Workflows the caller may start. On the host interface a
// message needs a skillId (or SelectWorkflow) when more than one workflow
// is routed.
//
// # Shutdown
//
// [Server.Drain] tells a drain from a client that went away: a blocking
// SendMessage answers at once with the Task as it is (tasks are durable;
// the client reads the rest with GetTask), streams end cleanly after the
// events they sent, and requests that arrive later are refused before
// anything is resolved, recorded or read — JSON-RPC HTTP 503 with error
// -32000 and id null (ErrorInfo reason SERVER_ERROR, the code a2a-go reads
// as ErrServerError), HTTP+JSON 503 UNAVAILABLE with the same reason. The
// public card is still served.
//
// # What real clients send
//
// @a2a-js/sdk 1.3.0 sends ListTasks status "UNRECOGNIZED" over JSON-RPC
// when its caller set no status; it filters nothing. A chat client answers
// an approval in plain text: a message without metadata.openwop.interrupt
// and without a data part whose whole text (text parts joined by newlines,
// trimmed, compared exactly) is one of the open approval's actions
// resolves it as the data part {"action": text} would; any other text
// carries no resume value, which the store judges as before (memstore
// refuses it -32602 on resumeValue).
//
// # Nothing a peer sends is altered
//
// a2a-go decodes a Part's "data" into an any, which loses integers above
// 2^53, member order and the spelling of numbers (1.0, 1e2, -0). The
// bindings keep the bytes instead (strict.go records where each data value
// lies, data.go copies it out before decoding; send_decode.go, which reads
// SendMessage params by hand, copies them as it reads): every data part of an
// inbound message holds a json.RawMessage of exactly what the peer sent,
// and that is what reaches the run's inputs (the first data part), the
// stored message, Task.history, GetTask, ListTasks and the streams, on
// both bindings. A host's SelectWorkflow therefore sees data values as
// json.RawMessage. On the way out, encoding/json drops insignificant
// whitespace and writes <, >, & and U+2028/U+2029 inside strings as \u
// escapes: the same JSON text, never a different value.
// Message.referenceTaskIds and Message.extensions reach the host
// (interop.Message.ReferenceTaskIDs, Extensions) exactly as sent and come
// back in history; a referenced task is a hint, never read.
//
// # Extensions
//
// Options.Extensions are the A2A extensions the host implements; every
// card lists them in capabilities.extensions. A request activates those
// of them its A2A-Extensions service parameter names (A2A 1.0 §3.2.6:
// comma-separated URIs, every header line read, URIs compared exactly);
// the activated ones reach the host with the message
// (interop.Message.ActivatedExtensions, in the declared order) and come
// back in the response's A2A-Extensions header, on every operation and
// both bindings (A2A extensions §Extension Activation). A URI the server
// does not declare is ignored, and a server that declares none activates
// nothing and sends no header. Package workunit is one such extension.
//
// A completed run's output reaches A2A peers as it reaches MCP clients (as
// structuredContent): when the workflow published no artifact, the Task
// carries one artifact with artifactId "openwop.output", name "output" and
// one data part holding Run.Output exactly. The id is namespaced so that no
// workflow artifact is mistaken for it, and it only ever appears on a task
// with no other artifact. It is one projection, so SendMessage, GetTask,
// ListTasks with includeArtifacts, the streams (an artifactUpdate just
// before the terminal statusUpdate) and push bodies all show it. A run
// without output (empty or null), not completed, or with artifacts of its
// own shows none.
//
// # Judging a message before any run
//
// A message is judged against the caller's own view of the workflow it
// starts or continues — RunStore.ListWorkflows under the caller's Subject,
// cached per authorization context for Options.WorkflowTTL (a workflow
// missing from the cached set is read again before a refusal;
// [Server.InvalidateWorkflows] drops a tenant's at once) — before anything
// is written (workflows.go, content.go):
//
//   - content types (A2A 1.0 §3.1.1, ContentTypeNotSupportedError -32005):
//     every part's media type must be among the workflow's InputModes, else
//     the card's defaultInputModes, and a non-empty
//     configuration.acceptedOutputModes must admit one of its OutputModes,
//     else the card's defaultOutputModes. A part without mediaType is typed
//     by its member: text is text/plain, data application/json, raw and url
//     application/octet-stream (RFC 9110 §8.3). Media types compare on
//     type/subtype, case-insensitively, parameters ignored; */* and type/*
//     ranges match on either side. A message to an existing task is judged
//     by the task's workflow, or by the card's defaults when the caller may
//     not start that workflow itself (an approver);
//   - inputs, for a new task: the first data part's object (or {}) must
//     satisfy the workflow's input schema, exactly as MCP tools/call
//     arguments must; the refusal is -32602 with a google.rpc.BadRequest
//     whose field is the data part's path and the JSON pointer (RFC 6901)
//     of the offending value, e.g. message.parts[1].data/delayMs
//     (message.parts when there is no data part). A workflow whose schema
//     cannot be used cannot be started through A2A.
//
// A refused message creates no run and appends nothing.
//
// # Errors
//
// Operations return *Error values built from the interop map's error table
// (errors.go; OpenWOP interop map, a2a.errors). Each binding turns them
// into wire bytes in exactly one function (appendRPCError,
// jsonrpc_codec.go, around the JSON-RPC envelope of the codec shared with
// the MCP mount, internal/jsonrpc; appendStatus, status.go) around one encoding of the
// details (errordetail.go; the ErrorInfo type URL is a2a-go's
// errordetails.ErrorInfoType): JSON-RPC errors carry data as an array with one
// google.rpc.ErrorInfo (OpenWOP RFC 0211 §A), HTTP+JSON errors are google.rpc.Status (OpenWOP RFC 0211 §B),
// and every refusal on an interface URL — authentication, oversize,
// malformed JSON, unknown method, wrong verb — is in the binding's shape,
// never the OpenWOP envelope (OpenWOP RFC 0211 §C). Not-found answers are byte-identical for
// unknown and unreadable tasks (OpenWOP RFC 0211 §D). [NewError] builds a
// host middleware's own refusal (a rate limit, a maintenance window) from
// an HTTP status, a reason and a message; [WriteJSONRPCError] and
// [WriteHTTPJSONError] write it, or an authentication or size refusal, in
// the same shapes.
//
// # Push notifications
//
// With Options.Push (the a2a.pushNotifications facet), the four push-config
// rows run over internal/pushservice (pushconfig.go; OpenWOP RFC 0214): the task is
// read under the caller's Subject first, so an unreadable task and another
// task's config id answer -32001 byte for byte like unknown ones; the URL
// passes the egress guard or the request is -32602 on "url"; responses
// never carry the token or the credentials; Delete is idempotent. A config
// sent with SendMessage (configuration.taskPushNotificationConfig) is
// reserved (Service.Reserve: validated, guarded, its secret sealed,
// the config store read and, on an existing task, one of its slots held)
// after the message is judged and just before it is applied, and committed
// on the task after: a config that would be refused — push off -32003, a
// bad config or a full task -32602, a vault or config store that fails
// -32603 — refuses the message with nothing created, answered or
// appended, and a message the store refuses releases its reservation. Only
// a config store that fails between its read and the commit's write is
// left after the write, answered -32603 and logged; the same message sent
// again (idempotent on a new task) registers it. Push
// bodies are rendered by the same projection as the streams (pushEvents),
// so a push shows what SubscribeToTask would. [Server.Start] and
// [Server.Close] own the delivery worker. Without the facet all four rows
// answer -32003, never -32601.
//
// # Hostile input and faults
//
// A request costs the server nothing it has not authenticated: prepare runs
// before a byte of the body is read, and a caller the SubjectResolver does
// not accept (401, 403, a drain's 503) is answered at once — on JSON-RPC
// with id null, the body unread. Bodies are read through internal/httpbody
// into pooled buffers whose memory follows the bytes received, never the
// Content-Length a client declares, within Options.MaxBodyBytes (413) and
// Options.BodyTimeout (default 30 s; HTTP 408, JSON-RPC -32600, HTTP+JSON
// DEADLINE_EXCEEDED); a buffer grown past httpbody.MaxPooled is not pooled
// again. Streams are written by the SSE writer shared with the MCP mount
// and the example host (internal/eventstream) and outlive the
// http.Server's timeouts: each event and heartbeat write has its own
// deadline, Options.StreamWriteTimeout (default 30 s), which replaces
// WriteTimeout and cuts a client that stops reading; a keep-alive comment
// follows 15 s of idleness, written by a timer, not a goroutine per
// stream. A blocking SendMessage waits through internal/settle, saying
// what settled means for A2A: terminal or interrupted.
//
// A JSON-RPC batch holds at most Options.MaxBatch requests (default 32;
// a bigger one is refused whole, -32600 with ErrorInfo metadata
// maxBatchSize, before any of it runs); its requests run
// Options.BatchConcurrency at a time (default 4) and every blocking
// SendMessage among them stops waiting at one deadline, BlockTimeout after
// the batch began. A notification (no id) is never executed and never
// answered (JSON-RPC 2.0 §4.1): every A2A method changes state the client
// could then neither see nor retry, or only reads.
//
// A panic in the SubjectResolver, the RunStore, the AgentInventory or the
// server is answered with the binding's internal error (-32603 with its
// ErrorInfo, HTTP+JSON 500 INTERNAL) and logged once at error level with
// the stack — never the panic's value (a host's may hold a secret) or the
// request body (panic.go); mid-stream it ends the stream with that error
// as the last event, and in a batch it is that element's answer. An
// AgentInventory that fails is a server fault too (-32603, logged), never
// the never-minted answer of a routing value, which a value that resolves
// to no agent keeps. Every goroutine the server starts (a stream's
// heartbeat, a batch's workers) recovers and logs.
//
// # Cards
//
// The public card (card.go) is selected by A2A-Version (absent → preferred,
// OpenWOP interop.md §Legacy profiles are absent), lists only routed interfaces with URLs from configuration (OpenWOP interop map, a2a.card),
// capabilities equal to the facets (OpenWOP interop map, a2a.card), one skill per routed workflow
// (OpenWOP interop map, a2a.card; with the workflow's InputModes and OutputModes as the skill's
// inputModes and outputModes when it names any) and the security the
// SubjectResolver enforces (OpenWOP interop map, a2a.card). Per-agent
// cards are served through GetExtendedAgentCard with the agent's routing
// value as tenant (OpenWOP RFC 0202 §B, §C, §D.6, §D.9; interop.md §Per-agent cards).
// With Options.CardSigner every one of these cards carries a signature
// (cardsign.go; A2A 1.0 §8.4): a JWS over the card's canonical form,
// which the binding's encoding leaves unchanged, signed once per card
// version; package a2a/cardsig signs and verifies them.
package a2a
