// Package ext serves, on the MCP mount (package mcp), what a host offers
// beside its workflows: tools that are not workflows, prompts, resources
// and argument completion. (These are the mount's optional extension
// points, not MCP protocol extensions such as io.modelcontextprotocol/tasks,
// which package mcp serves itself.) A workflow host's product is its
// workflows, and the mount serves them as tools with no help; a host that
// also has quick synchronous tools, prompts, readable resources or
// completions implements the interfaces here, builds them with [New] and
// hands the result to mcp.Options.Extension. Each is off unless set: an
// unset one serves nothing and advertises nothing (its methods stay
// -32601, server/discover does not list its capability), so the OpenWOP
// surface is unchanged (OpenWOP interop map, mcp.methods).
//
//   - [NativeTools]: tools beside the workflows in tools/list (a workflow
//     keeps its name), their arguments validated by the mount the same
//     way before the host runs. A call answers with content (text, image,
//     audio, embedded resources, resource links), with input requests, or
//     with a [Handoff] that continues the call as a run of one of the
//     caller's workflows — answered as that workflow's call would be,
//     task included, so a tool can gather input and then run long. A
//     request carrying _meta progressToken whose tool reports progress is
//     answered as an SSE stream: notifications/progress, then the result.
//     A panic in the host's tool is logged and answered -32603.
//   - [Prompts]: prompts/list (sorted, private, ttlMs) and prompts/get,
//     which checks the prompt is listed and its required arguments are
//     present and keeps arguments plain strings (OpenWOP interop map,
//     mcp.methods).
//   - [Resources]: resources/list, resources/templates/list and
//     resources/read; the URI is normalized, traversal refused and any
//     scheme outside [Config].ResourceSchemes refused before the host sees
//     it (OpenWOP interop map, mcp.methods); an unknown URI is -32602
//     "Resource not found" with data.uri, never empty contents (SEP-2164).
//     Every list and read carries ttlMs and cacheScope (OpenWOP interop
//     map, mcp.cache).
//   - [Completions]: completion/complete, at most 100 values.
//
// Native tools, prompts and reads may answer input_required
// ([InputRequired]) with elicitation (form or URL), sampling/createMessage
// and roots/list requests under keys the host chooses. Each request must
// be covered by the request's declared capabilities
// ([InputRound.Supports]), else one -32021 names everything missing
// (OpenWOP interop map, mcp.meta). The host's state is sealed into
// requestState as a host grant (mcp/sealed: principal, request digest —
// OperationDigest for prompts and reads —, TTL, round, single use); a
// retry hands the host the responses to exactly the keys it asked, and
// every refusal of the state is the mount's one -32602 (OpenWOP interop
// map, mcp.mrtr; interop.md §The MCP round ceiling). A retry without
// requestState hands the host whatever responses the client sent: SEP-2322
// lets a server complete from them, and they carry no more authority than
// arguments.
//
// # go-sdk's protocol types
//
// The values a host hands back are go-sdk's (github.com/modelcontextprotocol/go-sdk/mcp
// v1.8.0) wherever that package has the type with its 2026-07-28 members:
// content blocks (sdk.Content: TextContent, ImageContent, AudioContent,
// EmbeddedResource, ResourceLink), ResourceContents, Resource,
// ResourceTemplate, Prompt, PromptArgument, PromptMessage, the input
// requests of an InputRequestMap (ElicitParams, CreateMessageParams,
// CreateMessageWithToolsParams, ListRootsParams), the answers
// [InputResponses] decodes (ElicitResult, CreateMessageResult, Root),
// CompleteParams and CompletionResultDetails. A host that already speaks
// go-sdk writes the same values here. The envelopes around them stay ours
// where go-sdk has nothing to carry what the mount adds: [Tool] (go-sdk's
// has no execution.taskSupport), [ToolResult] (no hand-off; its result
// type is not settable), [InputRequired] and [InputRound] (the sealed host
// state), and the request and result types of prompts and reads.
//
// Importing go-sdk is this package's alone: package mcp does not, so a
// host that mounts only workflows does not link go-sdk's dependency tree
// (30 more packages in `go list -deps`).
//
// # Why the encoding is ours
//
// The mount dispatches and encodes every answer itself (package mcp says
// why, with numbers); this package encodes go-sdk's values too, in one pass
// over plain structs (encode.go), rather than through their MarshalJSON
// methods:
//
//   - the bytes are the ones clients already receive and the golden files
//     pin: go-sdk orders members by its struct fields (an image block's
//     mimeType before its data, a resource link's mimeType before its
//     uri), escapes <, > and & in text, and drops the empty text of a text
//     resource, which the schema requires;
//   - a value the wire cannot carry is refused before anything is sent (a
//     block without its required members, a prompt message whose role is
//     neither user nor assistant, a sampling-only block in a tool result);
//   - it is cheaper. For a tool result with one block of each kind
//     (BenchmarkEncodeToolResult, 2 vCPU): ~3.5 µs, 1.7 KB, 7 allocations
//     here against ~12 µs, 2.3 KB, 14 allocations for go-sdk's encoding
//     of the same sdk.CallToolResult, which encodes each block on its own
//     and compacts the result again.
//
// Members go-sdk's types carry beyond the ones above — annotations, icons,
// _meta — are sent after them when set. CreateMessageWithToolsParams keeps
// go-sdk's own encoding.
//
// Every method of the interfaces receives the request's context (cancelled
// when the client goes away or cancels the request) and the authenticated
// Subject, and does its own authorization: unreadable is unknown (OpenWOP
// interop.md §Isolation), so a name or URI the Subject may not see is
// interop.ErrNotFound like one that does not exist. An
// *interop.InputError or interop.ErrInvalidInput refuses the caller's
// input (-32602); any other error is a server fault answered with a
// generic -32603 and logged, never sent.
package ext
