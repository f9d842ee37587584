// Package a2a serves A2A 1.0 over a host's RunStore, exactly as the OpenWOP
// v2 interop map requires (RULES §3–§8, §10, §16, §19: R27–R82, R90–R99,
// R141, R142, R149, R150). An A2A Task is the host's run: the server keeps no task
// state of its own.
//
// Build a [Server] with [New] and mount its handlers on the host's mux:
//
//	mux.Handle("/.well-known/agent-card.json", srv.AgentCard())
//	mux.Handle("/a2a", srv.JSONRPC())                                   // required binding
//	mux.Handle("/a2a/rest/", http.StripPrefix("/a2a/rest", srv.HTTPJSON())) // optional binding
//
// (The root package wopinterop does this from one Config.)
//
// # How a request flows
//
// A binding (jsonrpc.go, rest.go) limits and strictly decodes the request,
// then prepare (call.go) resolves the Subject, decides the version with the
// negotiate policy and hands the negotiation.decided record to the auditor
// as a host event of the caller's tenant — an inbound request never writes
// to a run's log, so a refused request appends no event. gate refuses a row
// whose `requires` facet is off with the row's error (R51, R52); withAgent
// resolves a per-agent routing value only for an authenticated caller and
// answers any value outside the caller's inventory like a never-minted one
// (R37, R38). The operation (service.go) reads the run under the caller's
// Subject — unreadable is unknown (R74) — applies the multi-turn rules
// (R41–R45, R71–R73) and calls the RunStore; project.go turns the Run into
// a Task through the interop map's state rows (R58–R60); stream.go drives
// SendStreamingMessage and SubscribeToTask from the run's watch (R46, R50).
//
// # Errors
//
// Operations return *Error values built from the interop map's error table
// (errors.go; R63). Each binding turns them into wire bytes in exactly one
// function: JSON-RPC errors carry data as an array with one
// google.rpc.ErrorInfo (R64), HTTP+JSON errors are google.rpc.Status (R65),
// and every refusal on an interface URL — authentication, oversize,
// malformed JSON, unknown method, wrong verb — is in the binding's shape,
// never the OpenWOP envelope (R66). Not-found answers are byte-identical for
// unknown and unreadable tasks (R67). [WriteJSONRPCError] and
// [WriteHTTPJSONError] let host middleware refuse in the same shapes.
//
// # Push notifications
//
// With Capabilities.PushNotifications and Config.Push, the four push-config
// rows run over a push.Service (pushconfig.go; R52, R90–R98): the task is
// read under the caller's Subject first, so an unreadable task and another
// task's config id answer -32001 byte for byte like unknown ones; the URL
// passes the egress guard or the request is -32602 on "url"; responses
// never carry the token or the credentials; Delete is idempotent. A config
// sent with SendMessage (configuration.taskPushNotificationConfig) is
// judged before the message is applied and registered on its task. Push
// bodies are rendered by the same projection as the streams (pushEvents),
// so a push shows what SubscribeToTask would. [Server.Start] and
// [Server.Close] own the delivery worker. Without the facet all four rows
// answer -32003, never -32601.
//
// # Cards
//
// The public card (card.go) is selected by A2A-Version (absent → preferred,
// R21), lists only routed interfaces with URLs from configuration (R27),
// capabilities equal to the facets (R28), one skill per routed workflow
// (R29) and the security the SubjectResolver enforces (R30). Per-agent
// cards are served through GetExtendedAgentCard with the agent's routing
// value as tenant (R34–R40).
package a2a
