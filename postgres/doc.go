// Package postgres keeps the state a replicated wopinterop host shares in
// PostgreSQL, on github.com/jackc/pgx/v5. It is its own Go module, so the
// core module never inherits a database driver.
//
// # Schema
//
// The schema is a sequence of numbered SQL migrations embedded in the
// module (migrations/NNNN_name.sql). Nothing here changes it implicitly:
// a host applies them with [Migrate] when it starts (the example host's
// -postgres flag does), and [New] refuses a database that is behind
// ([ErrSchemaBehind]). Migrate is versioned (the
// wopinterop_schema_migrations table), idempotent, refuses a shipped
// migration that was edited, and is safe when replicas call it together.
// Every table is prefixed wopinterop_; put them in a schema of their own
// with the connection's search_path if the database is shared.
//
// # Runs on many replicas
//
// [Store] is an [interop.RunStore], [interop.EventSink],
// [interop.HostEventFeed], [interop.AgentInventory] and
// [interop.RunWaiter] that passes the
// conformance kit (package interoptest) and that any number of replicas
// run over one database. Runs, their event logs (OpenWOP RunEventDocs),
// interrupts, messages and artifacts live in the database; workflow code
// lives in the process, registered per tenant like the embedded
// memstore's ([WorkflowDef], [WorkflowFunc], [RunContext]), and every
// replica registers the same workflows. The agent inventory
// ([Store.AddAgent]) and host events are in the database too, so every
// replica answers alike.
//
//   - Any replica serves any call. GetRun, ListRuns, WatchRun, WaitRun,
//     CancelRun and ResolveInterrupt work on every replica, whichever one
//     started the run: they read and write the database, and a write on
//     one replica wakes the others.
//   - A run's workflow executes in one replica at a time, under a lease
//     (lease_owner, lease_epoch, lease_until on the run) that the replica
//     renews every third of [WithLeaseTTL]. An interrupt answered on
//     another replica, or a cancel, reaches it through a notification.
//     Every write the workflow makes checks the lease under the run's row
//     lock, so a replica that lost it cannot write.
//   - When a replica dies (or closes: [Store.Close] hands its runs back), a
//     live replica claims each of its runs once the lease expires and runs
//     the workflow again from the start, replaying the effects already
//     recorded: an interrupt raised is not raised again (its recorded
//     resolution is returned, or awaited), an artifact published is not
//     published again. Workflows must therefore be deterministic in their
//     effects; see [WorkflowFunc].
//
// # What the guarantees rest on
//
//   - Idempotent creation: a unique index on (tenant, principal,
//     idempotency key); the creation that loses a race finds the winner's
//     run.
//   - Ordered, gap-free watch across replicas: a run's sequence numbers are
//     assigned under its row lock, so they commit in order; WatchRun reads
//     by sequence and waits on LISTEN/NOTIFY wake-ups with a poll
//     ([WithPollInterval]) behind them, so a lost notification delays an
//     event but never loses it.
//   - A blocking A2A SendMessage or MCP tools/call reads the run's status,
//     not its log: [Store.WaitRun] reads the status row, waits on the same
//     wake-ups and poll as WatchRun, and reads the whole run once it
//     settles.
//   - At-most-once resolution and refusals that change nothing: every
//     write checks and changes a run in one transaction holding its row
//     lock.
//   - Stable listing that costs a page: keyset pagination on (tenant,
//     status_at, id), run ids compared byte-wise (COLLATE "C"), and a
//     listing's Total read from counts a trigger keeps.
//   - Unreadable is unknown: every read starts from the Subject's tenant
//     (and workspace), and a refused lookup reads the same whether the id
//     is foreign or was never minted.
//   - Host events per tenant and workspace, numbered under the tenant's
//     head row so that they commit in publication order, resumable with
//     Last-Event-ID within retention.
//
// # Beside the run store
//
// [Ledger] is the MRTR single-use ledger (sealed.Ledger, package
// github.com/wopinterop/wopinterop/mcp/sealed) every replica
// shares: a requestState id is consumed by an INSERT … ON CONFLICT DO
// NOTHING on the id's primary key, so exactly one replica opens a state,
// and expired ids are deleted lazily in bounded batches.
//
// [Vault] is the push credential vault (push.Vault, OpenWOP RFC 0214 §A)
// every replica shares. Each secret is stored encrypted with AES-256-GCM
// under the first key of [VaultConfig].Keys, with a fresh random nonce,
// the id of the key that sealed it, and its ref bound in as additional
// data; the plaintext never reaches the database. Every configured key
// opens, so keys rotate by putting the new one first; a secret sealed
// under a key no longer configured fails to open ([ErrVaultKeyUnknown]),
// as does one altered in the table ([ErrVaultCorrupt]). Refs are 130
// random bits from crypto/rand. It passes the Vault checks of package
// push/pushtest.
//
// [Configs] is the push config store (push.ConfigStore, OpenWOP RFC 0214)
// every replica shares. A record holds its secret's vault ref, never the
// secret. Put runs in one transaction holding an advisory lock on the
// task, so the per-task limit holds across replicas: of concurrent
// registrations on a task with room for n, exactly n succeed. A
// replacement keeps the record's place in registration order, and Finish
// is a compare-and-set on the secret ref, so a replacement registered
// meanwhile keeps its own. It passes the ConfigStore checks of package
// push/pushtest.
//
// [Outbox] is the push outbox (push.Outbox, OpenWOP RFC 0214 §A), the
// leased work queue the delivery workers of every replica drain. Put is
// an INSERT … ON CONFLICT (id) DO NOTHING ordered by an identity column;
// each lane (task, config) has one row holding its head and the head's
// lease (owner, expiry on the database clock), so Lease reads unleased
// heads and expired leases from two partial indexes, FOR UPDATE SKIP
// LOCKED: concurrent Leases on any replicas never grant a delivery twice,
// an expired lease is taken over, and leasing k among n lanes costs
// O(k log n). A removed delivery stays ten minutes as a tombstone, so a
// late Put of the same push is a no-op; Removes sweep expired tombstones
// in batches of two. It passes the Outbox checks of package push/pushtest.
//
// The example host on PostgreSQL (cmd/host) opens all of them on one pool:
// its replicas share runs, the ledger, push configs, secrets and queued
// pushes, and encrypt the secrets under one -vault-key (by default derived
// from their shared -seal-key).
package postgres
