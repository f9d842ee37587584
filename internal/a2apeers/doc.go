// Package a2apeers starts real A2A peers on loopback for tests: the remote
// agents the host's A2A client (a2a/delegate) delegates to, and the hostile
// ones it must refuse. It is test support; only tests import it.
//
//	StartGo(t, Script)           a2a-go a2asrv: JSON-RPC and HTTP+JSON, streaming, A2A 1.0 card
//	StartNode(t, Script)         @a2a-js/sdk (testpeers/a2a-remote-agent.mjs): JSON-RPC, streaming
//	StartLegacy03(t, LegacyCard) a card offering only A2A 0.3; counts every call
//	StartMalformed(t, Mode)      a valid 1.0 card; every call answered as the Mode says
//
// Every peer serves its card at CardPath, JSON-RPC at JSONRPCPath and
// HTTP+JSON at RESTPath under Peer.URL, and records each request before
// acting on it: Peer.Requests (card fetches included) and Peer.Calls
// (protocol calls only) give the method, A2A-Version, Authorization,
// A2A-Extensions, tenant, messageId, task id, headers and body. Every
// server, task and process a peer runs ends with the test (t.Cleanup).
// Script.CardSigner makes StartGo and StartNode serve their card signed
// (A2A 1.0 §8.4, package a2a/cardsig), for a client that requires it.
//
// # Script commands
//
// The message that starts a task says what the task does, in its first
// text part that is a command, else in a data part's "command" field:
//
//	complete               WORKING, artifact "result" ("completed"), COMPLETED
//	echo                   WORKING, artifact "echo" holding the message's parts verbatim, COMPLETED;
//	                       also what a message naming no command does
//	artifacts:N            WORKING, artifacts "artifact-1" … "artifact-N", each in two chunks
//	                       ("artifact i chunk 1", then append and lastChunk "… chunk 2"), COMPLETED
//	ask-input              WORKING, INPUT_REQUIRED ("which value should I use?"); the next message
//	                       on the task completes it with artifact "echo" holding that message's parts
//	auth-required[:D]      AUTH_REQUIRED ("authorize the agent to continue"); after D, artifact
//	                       "result" and COMPLETED; without D, held until cancelled
//	slow:D                 WORKING; CANCELED on a cancel, else artifact "result" and COMPLETED after D
//	fail                   WORKING, FAILED ("scripted failure")
//	reject                 REJECTED ("scripted rejection")
//	unknown-state[:D]      WORKING, then a state no A2A version defines (UnknownState), held as
//	                       auth-required is
//	cancel-races-complete  WORKING until a cancel arrives, which completes the task (artifact
//	                       "result", COMPLETED) instead: the cancel is answered TaskNotCancelable
//
// D is a Go duration ("50ms", "1m"). Every task's first event is the Task
// in SUBMITTED; a cancel of any other live or input-required task gives
// CANCELED; an unreadable argument ("artifacts:x") fails the task with a
// status message naming it. The constants of script.go hold these names
// and texts.
//
// # The two SDKs differ
//
// The peers are the SDKs' stock servers, so a client meets what real
// agents do:
//   - a2a-go (StartGo) does not check A2A-Version; SubscribeToTask on a task
//     with no live execution (input-required, terminal) answers
//     TaskNotFound, though for a moment after an interrupt or a cancel it
//     may still show the task; a message to a task still working answers
//     -32603.
//   - @a2a-js/sdk (StartNode) refuses an A2A-Version its card does not list
//     (absent means 0.3) with -32009, whose ErrorInfo has no
//     supportedVersions; serves JSON-RPC only (its HTTP+JSON adapter needs
//     express, which testpeers does not depend on); writes an unknown state
//     as "UNRECOGNIZED"; and writes a card a2a-go cannot decode when it
//     declares security (Peer.Card is then nil; CardJSON holds it).
//
// # Node
//
// StartNode runs $WOPINTEROP_NODE (else node on PATH, Node 22 or later)
// with testpeers/node_modules installed (npm ci in testpeers, which .ci/run
// does). Without them the test is skipped, or fails when
// WOPINTEROP_REQUIRE_PEERS=1 (CI).
package a2apeers
