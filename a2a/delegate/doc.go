// Package delegate is the host as an A2A client: it delegates a workflow
// step to a remote agent the host admitted, over a2a-go's a2aclient.
//
// # Connecting
//
// A remote agent is reached only through an [Admission] the host
// configures — alias, card URL, admitted skills pinned by [SkillDigest],
// credential by reference, limits — never through a URL taken from a
// message or model output (OpenWOP admission-boundaries §18.3). [New]
// validates the admissions; [Client.Admit] and [Client.Revoke] change them
// at runtime. [Client.Connect] opens a [Conn] for one run, step by step,
// sending nothing to the agent's interfaces until the last:
//
//  1. admission: the alias names an admission, or [ErrUnknownAgent];
//  2. card: fetched through the egress guard (package egress: https to
//     public addresses only, exact-origin allowlist for local agents,
//     redirects refused), asking for the preferred version's card with
//     A2A-Version, within CardTimeout and MaxCardBytes, decoded
//     strictly — exact member names, the members A2A 1.0 §8.2 requires
//     ([*CardError]);
//  3. signature: verified with the admission's [CardVerifier] when the
//     admission requires it, and whenever the card is signed and keys are
//     configured; it fails closed ([*SignatureError]; A2A 1.0 §8.4);
//  4. re-admission: every admitted skill is on the card with the digest it
//     was admitted with — the lowercase hex SHA-256 of its RFC 8785
//     canonical JSON — or the agent must be admitted again
//     ([*ReadmissionError]);
//  5. negotiation: negotiate.Policy.Outbound decides the version from the
//     versions of the card's JSON-RPC and HTTP+JSON interfaces (of
//     Admission.Versions, when the admission restricts them; an
//     unauthenticated exchange never below the preferred version, nothing
//     ever below the floor), and exactly one negotiation.decided record
//     goes on the run's log for every outcome, its peerDigest the SHA-256
//     of the interface's origin (OpenWOP interop.md §Negotiation is a
//     protocol, §The floor, §The audit event). A refusal is
//     outbound.VersionUnsupported("a2a", runID, …) — 400
//     interop_version_unsupported naming the run in details — and a peer
//     that offers only 0.3 is never sent a request;
//  6. transport: the JSON-RPC interface of that version, else the
//     HTTP+JSON one, behind an a2aclient.Client whose every request goes
//     through the guard with the negotiated A2A-Version, the credential
//     (resolved again at each request) and the interface's tenant in the
//     request's tenant field (A2A 1.0 §AgentInterface); tenant propagation
//     from the context is off.
//
// # The transports
//
// JSON-RPC goes through this package's own a2aclient.Transport, because
// a2aclient's is where a2a-go is weakest as a client: it ignores the body
// of any non-200 answer, fails a whole response whose error.data is a
// legacy object, classifies by code alone, reads bodies without a limit,
// decodes results leniently and copies the peer's message into the error.
// Ours reads error bodies on every status; identifies an error by its code
// or its ErrorInfo reason with data as an array or a legacy object and
// metadata of any type (OpenWOP RFC 0211 §F) as a [*PeerError] on which
// errors.Is holds for a2a-go's sentinels (a2a.ErrTaskNotFound, ...); caps
// every body and every SSE event at MaxResponseBytes; and decodes results
// strictly — our id echoed, exactly one known result kind, exact member
// names, the required members present — so that a malformed answer is an
// [*InvalidResponseError] (A2A InvalidAgentResponseError, -32006) and never
// reaches run state. No error keeps the peer's message or body.
//
// HTTP+JSON is a2aclient's REST transport over the same guarded client,
// wrapped with the same headers, caps and result checks (rest.go says what
// a wrapper cannot fix, and why JSON-RPC is preferred).
//
// [ProjectError] is the one place an error of this package becomes the
// OpenWOP error a host renders: a peer's error by the interop map's
// a2a.errors client projection (-32009 to interop_version_unsupported,
// -32006 and malformed answers to validation_error, never internal_error
// for an error the library knows), the library's own refusals by kind.
//
// [WithTraceContext] carries the run's W3C trace context; messages sent
// under it carry it in metadata.openwop (OpenWOP interop.md §Trace
// context).
//
// # Delegating
//
// [Conn.Delegate] sends one step and follows it until the remote task
// settles, asks for input or Limits.Deadline passes (admission-boundaries
// §18.4, §18.9):
//
//   - the [Step] names an admitted skill and an admitted data-release class,
//     or it is refused before anything is sent ([ErrStepRefused]);
//   - each send is one attempt: its id is the messageId (peers deduplicate
//     by it, A2A 1.0 §3.3.1), and the [Outcome] correlates it with the
//     remote task and context ids;
//   - the task is followed by stream when the connection streams, else by
//     polling GetTask after a returnImmediately send;
//   - remote states map onto run statuses by the interop map's
//     a2a.taskStateReverse rows: AUTH_REQUIRED is waiting-input with the
//     auth sub-kind and is never answered, REJECTED is failed with reason
//     rejected_by_remote, an unknown state is pending with a warning —
//     never completed;
//   - an input request reaches the host's [InputDecider], a fresh decision
//     each round; without one (or when the admission forbids input) the
//     remote task is cancelled, never answered automatically;
//   - returned artifacts are admitted before the host sees them: the
//     expected task, media type, size, count, a complete chunked transfer,
//     and metadata.sha256 when the peer gives one ([ErrArtifactRefused]);
//   - remote completion is recorded as execution succeeded, acceptance
//     pending verification ([AcceptancePendingVerification]) — never as
//     accepted on the agent's word.
//
// A step may carry a work unit (Step.Unit; package workunit, the
// canonical payload envelope): its part goes in the message, which lists
// the extension, and every request of the delegation activates it with
// A2A-Extensions (A2A 1.0 §3.2.6). A card that does not declare the
// extension refuses the step before anything is sent. When the task
// completes, Outcome.Unit records the completion as pending verification;
// it becomes accepted ([AcceptanceAccepted]) only when every response
// echoed the extension and exactly one result carries a unit that opens
// with a matching digest and names the unit sent as the unit it is the
// result of — any other result unit leaves it pending, with
// [WarningResultUnitRefused].
//
// [Conn.Cancel] and the ends that are not a settled task carry an
// outbound.Reconciliation: cancelled-before-admission, remote-cancelled
// (read back with GetTask), completed-before-cancel,
// cancel-requested-remote-unknown, failed-no-effect (refused before
// execution), failed-possible-effect (a timeout or a failure mid-task —
// never "nothing happened") and disconnected-still-active.
// [Conn.Submit] is Delegate's first half, for a host that hands a step off
// and comes back later: one returnImmediately send, the task as its answer
// shows it, nothing followed.
// [Conn.Resume] re-attaches with SubscribeToTask or GetTask; nothing ever
// re-sends a message. A failure that proves no effect is retried within
// Limits.Attempts with a new attempt id; a failure of unknown effect only
// when Admission.IdempotentSends says the peer deduplicates.
//
// Two content-free run events go on the run's log (admission-boundaries
// §18.10): [EventTranslationLoss] counts what the projection dropped or
// coerced, [EventReconciled] records a delegation that ended without a
// verified remote state.
package delegate
