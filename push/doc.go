// Package push is what a host configures of A2A push delivery (OpenWOP
// RFC 0214; webhooks.md §Egress): the stores a
// multi-replica host implements over its database (configs, secrets,
// queued deliveries) with their in-memory defaults, the retry policy and
// the [Options] the A2A server takes (a2a.Options.Push). The A2A server
// runs the push-config operations and the at-least-once delivery worker
// over them (internal/pushservice), rendering run events as A2A
// StreamResponse bodies; nothing here speaks JSON-RPC.
//
// # The egress guard
//
// Every push goes through the library's one egress guard (package
// egress, [Options.Guard]): it judges the URL when a config is registered
// (OpenWOP RFC 0214 §B) and again at every delivery attempt (OpenWOP RFC
// 0214 §B; webhooks.md §Egress), re-resolving the name and dialling only
// the addresses it validated; a redirect is never followed and counts as
// a failed delivery.
//
// # Configs and secrets
//
// The A2A server's push-config operations (OpenWOP interop map,
// a2a.operations; RFC 0214 §A, §E) register, get, list and delete configs. A task may hold several
// configs; a config id is the client's or a random one,
// never encoding tenant, workspace or principal. The token and the
// authentication credentials are sealed in a [Vault] and the config
// record ([Record], kept by a [ConfigStore]) holds only the reference, so
// they never reach a response, a log line, an event or persisted task
// state; they are discarded when the config is deleted or once the
// task's final push was attempted (OpenWOP RFC 0214 §A). Get and List
// answer without them.
//
// # Delivery
//
// After the A2A server starts (a2a.Server.Start), every task with a live config is followed through
// RunStore.WatchRun under the Subject that registered it. Each run event
// is rendered once by the A2A server's projection (a statusUpdate per status change,
// an artifactUpdate per artifact chunk) and queued, through the [Outbox],
// for every config registered before it: a push is POSTed as
// application/a2a+json with "Authorization: {scheme} {credentials}", or
// "Bearer {token}" when only a token was given, and no OpenWOP signature
// (OpenWOP RFC 0214 §C). Each config's deliveries are attempted in run
// order, one at a time: a push waiting out its retries holds back the
// config's later pushes, so none overtakes it. Each push gets at least one
// attempt, and a failed one is retried under the [RetryPolicy] (OpenWOP
// RFC 0214 §C; webhooks.md §Durability). The default — 60 attempts,
// exponential backoff with full jitter from 1s up to a 5m cap per wait —
// keeps a push for 2h09m on average, 4h19m at most, and for less than an
// hour with a probability below 10⁻¹⁰, so it outlives a receiver outage of
// an hour. A network failure, a timeout, a destination the guard refuses
// now, a 3xx (never followed, and retried under the same policy), a 5xx
// and the 4xx statuses 408, 425 and 429 are retried; a Retry-After
// (seconds or an HTTP-date; RFC 9110 §10.2.3) lengthens the next wait, up
// to the cap. Any other 4xx (400, 401, 403, 404, 410, ...) is the
// receiver's final answer, and the push is dead-lettered at once. A push
// refused for good or whose schedule is spent becomes a durable host event
// of the task's tenant, [DeadLetterEventType], carrying only the task id,
// config id, attempt count and last status class — A2A clients never see
// it and recover state with GetTask. A dead letter is never dropped: a
// sink that refuses it is tried again until it takes it. A delete stops a
// config's queued deliveries before their next attempt. [Options.Clock]
// times every wait, so a test runs the hour-long schedule in milliseconds
// through the same code. Closing the A2A server (a2a.Server.Close) stops following runs and gives
// every queued push its attempt, but cuts retry waits short: a push whose
// receiver is down stays in the outbox instead of holding the shutdown
// for hours. What is left is resumed by the next Start, so a durable
// Outbox and ConfigStore make delivery survive a restart (the in-memory
// defaults lose it with the process).
//
// # Replicas and at-least-once
//
// The [Outbox] is a leased work queue, so several replicas of a host —
// each A2A server's delivery worker under its own owner name — drain one
// outbox together: a worker leases the head of a config's lane, renews
// the lease while it works ([Options.LeaseTTL]) and removes the delivery
// once it is finished. Every replica follows the run of every task with a
// live config: those registered through it at once, the others from their
// lowest watermark at its Start and then at the next
// [Options.WatchRescan], so the run of a task whose replica died is still
// pushed (and a task whose configs were deleted through another replica
// is no longer followed after the next rescan). The cost is one run watch per live task on each replica, each
// event rendered once per replica and its pushes offered to the outbox
// once per replica, and a read of ConfigStore.Live per rescan. It is safe
// because the replicas name each push alike (below) and render it alike:
// the outbox keeps a push it already holds once, and a replica skips the
// events a config's watermark says were queued; only a push queued again
// after it was sent and removed goes out twice, within the at-least-once
// window, under the same Idempotency-Key. Any replica delivers. Only a
// lane's head is leased, so a config gets its
// pushes in run order whichever replica sends them. A worker that dies
// mid-delivery loses nothing: once its lease expires another replica
// takes the push over and sends it again. Delivery is therefore at least
// once, and every attempt of a push carries the same
// Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header), an
// sf-string such as "dl-1VzDe0Vq8YvK8dNqXlE3_A" that no other push
// shares: a receiver that records the keys it accepted drops the
// duplicates. The key is derived from the task, the config, the run event
// and the body's place among that event's bodies, so the same push queued
// twice — by a watcher resuming after a fault, or by two replicas
// following one run — is one delivery in the outbox, and the same key on
// the wire if it was already sent. The kits in package push/pushtest
// check a ConfigStore, Vault or Outbox a host implements over its
// database.
//
// # Faults in host code
//
// The RunStore, the projection, the ConfigStore, the Vault, the Outbox, the
// EventSink, the resolver, the dial function and the Clock run inside the
// goroutines delivery starts (a push's dial too: its client dials on the
// delivering goroutine).
// A panic in any of them is recovered and logged once at error level —
// where, the task id and the stack, never the panic value unless it is a
// runtime error, since a value of host code may hold a push body or a
// credential — and treated as that component's error: a failed attempt is
// retried and in the end dead-lettered, a failed store read or run watch
// is retried after a pause from the last event queued. A panic costs only
// the delivery of its task, never the process.
//
// A replay fork never pushes and inherits nothing (OpenWOP RFC 0214 §D): configs belong to
// one task id and are never copied, and a config receives only events
// appended after it was registered, so history already in a log is never
// pushed.
package push
