// Package workunit is the canonical payload envelope: it carries one
// structured work unit across A2A and MCP without loss, and both ends
// prove it arrived unchanged. The host uses it as a client (sending a unit
// to a remote agent or tool, verifying the result) and as a server
// (reading a unit a peer sent); it fails closed everywhere.
//
// # The unit and its seal
//
// A [Unit] is a kind, an optional id, an optional resultOf (the digest of
// the unit it answers) and a JSON body. [Seal] writes it as one JSON
// object {"body", "id", "kind", "resultOf"} in RFC 8785 canonical form
// (JSON Canonicalization Scheme: members sorted, no whitespace, numbers as
// ECMAScript prints IEEE-754 doubles, minimal escapes) and computes the
// lowercase hex SHA-256 of those bytes. The canonical bytes are the unit:
// they travel exactly, and the digest covers exactly them. [Open]
// recomputes the digest and refuses any difference; it also refuses bytes
// that match their digest but are not the canonical form of a unit as
// Seal writes it, so Open accepts exactly what Seal produces and
// Seal(Open(x)) is x. Every refusal wraps one of [ErrNotActivated],
// [ErrNoUnit], [ErrMalformed], [ErrDigestMismatch] and [ErrNotCanonical],
// and none quotes the unit's content.
//
// # The extension
//
// [ExtensionURI] (https://github.com/wopinterop/wopinterop/workunit/v1)
// names the extension on both protocols; this documentation is its
// specification. A breaking change gets a new URI and a new MCP member
// name.
//
// A2A. An agent that reads units declares the extension in
// capabilities.extensions of its card ([AgentExtension]; not required). A
// client activates it per request with the A2A-Extensions service
// parameter (A2A 1.0 §3.2.6; A2A extensions §Extension Activation) and
// lists it in the message's extensions; the agent echoes the extensions it
// activated in the response's A2A-Extensions. The unit is one part of the
// message or artifact ([Envelope.A2APart]): a raw part holding the
// canonical bytes (base64 on the JSON wire), media type application/json,
// metadata {ExtensionURI: {"sha256": digest}}. [FromA2A] and
// [FromMessage] read it and refuse: the extension not activated for the
// exchange, no part or more than one naming the extension, a part that is
// not raw application/json, metadata other than exactly the digest, and
// every refusal of Open.
//
// Why a raw part: measured through a2a-go and @a2a-js/sdk, raw bytes and a
// text part holding the canonical text arrive byte for byte, but a data
// part does not — a2a-go escapes <, > and U+2028 when it writes one and
// decodes it into maps and float64, and @a2a-js/sdk re-serializes the
// parsed value with integer-like member names first — so a data part's
// bytes no longer match the digest. A raw application/json part says
// exactly what it holds, and a host keeps raw bytes by reference rather
// than feeding them to a model as text (OpenWOP interop map, a2a.fields).
//
// MCP. The unit travels in a tool's arguments under the reserved member
// [ArgumentName] as {"sha256": digest, "unit": the canonical text}
// ([Envelope.MCPArgument]): a string, which no client's re-encoding of the
// arguments (member order, number spelling, escapes) can change. MCP's
// extensions (capabilities.extensions of server/discover and of each
// request's client capabilities) extend the protocol for a whole mount;
// the envelope belongs to one tool's arguments, so the rule is the tool's
// own declaration, which every client reads in tools/list: a tool whose
// input schema declares the member ([InputSchema], [Declares]) reads a
// unit from its arguments, and a tool that does not never does, whatever
// the arguments hold. A client opts in by sending the member to a tool
// that declares it. The member's schema lets a server refuse a malformed
// envelope before any run starts. [FromMCPArguments] refuses: the tool not declaring it, the
// member absent or repeated, its value not exactly the two strings, and
// every refusal of Open.
//
// # Where a host checks
//
// On this module's A2A server the activated extensions reach the host
// with the message (interop.Message.ActivatedExtensions; a2a.Options
// Extensions declares them), and on its MCP server the arguments are the
// run's inputs (interop.CreateRunRequest.Inputs). A host that opens the
// unit in RunStore.CreateRun and refuses with an interop.InputError when it
// does not open answers the caller with the protocol's invalid-params
// error and starts no run.
//
// # Execution is not acceptance
//
// When a remote peer reports that it completed a unit, the host records
// [RemoteCompleted]: execution succeeded, acceptance pending verification
// ([PendingVerification]) — never accepted. [Completion.Verify] moves it
// to [Accepted] only with a result unit that opened with a matching digest
// and whose resultOf is the digest of the unit sent.
package workunit
