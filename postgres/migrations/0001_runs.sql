-- Runs, their event logs, interrupts and recorded workflow effects: the
-- tables behind the reference interop.RunStore (OpenWOP interop.md, the
-- run operations of the interop map).

-- One row per run. Run ids are tenant-bound ("tenant/opaque") and compared
-- byte-wise (COLLATE "C"), so that ORDER BY id agrees with the listing order
-- every store keeps (status time descending, then run id descending).
CREATE TABLE wopinterop_runs (
    id              text COLLATE "C" PRIMARY KEY,
    tenant          text NOT NULL,
    workspace       text NOT NULL DEFAULT '',
    principal       text NOT NULL,
    workflow_id     text NOT NULL,
    status          text NOT NULL,
    status_at       timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    -- The newest event's timestamp: appends never go back in time, also
    -- when replicas' clocks differ.
    last_event_at   timestamptz NOT NULL,
    transport       text NOT NULL DEFAULT '',
    context_id      text NOT NULL DEFAULT '',
    idempotency_key text,
    inputs          json NOT NULL,
    trace_parent    text NOT NULL DEFAULT '',
    trace_state     text NOT NULL DEFAULT '',
    trust_boundary  text NOT NULL DEFAULT '',
    messages        json NOT NULL DEFAULT '[]',
    artifacts       json NOT NULL DEFAULT '[]',
    output          json,
    failure_message text NOT NULL DEFAULT '',
    failure_code    text NOT NULL DEFAULT '',
    fault           boolean NOT NULL DEFAULT false,
    cancel_reason   text NOT NULL DEFAULT '',
    last_sequence   bigint NOT NULL DEFAULT -1,
    -- How many workflow effects (interrupts raised, artifacts published)
    -- are recorded: a replica that takes the run over replays them.
    effects         integer NOT NULL DEFAULT 0,
    -- The replica executing the run and until when (database clock); NULL
    -- once the run is terminal. lease_epoch fences a replica that lost it.
    lease_owner     text,
    lease_epoch     bigint NOT NULL DEFAULT 0,
    lease_until     timestamptz
);

-- Idempotent creation: one run per tenant, principal and key, also when
-- creations race (the insert that loses the race finds the winner's row).
CREATE UNIQUE INDEX wopinterop_runs_idempotency
    ON wopinterop_runs (tenant, principal, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Keyset pagination in listing order, unfiltered and by contextId.
CREATE INDEX wopinterop_runs_listing ON wopinterop_runs (tenant, status_at, id);
CREATE INDEX wopinterop_runs_listing_context ON wopinterop_runs (tenant, context_id, status_at, id);

-- Live runs by lease expiry, for takeover; ended runs by age, for retention.
CREATE INDEX wopinterop_runs_leases ON wopinterop_runs (lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX wopinterop_runs_ended ON wopinterop_runs (status_at) WHERE lease_until IS NULL;

-- A run's event log: OpenWOP RunEventDocs (run-event.schema.json), sequence
-- 0, 1, 2, … assigned under the run's row lock, so commits happen in
-- sequence order and a reader by sequence never sees a gap.
CREATE TABLE wopinterop_run_events (
    run_id         text COLLATE "C" NOT NULL REFERENCES wopinterop_runs (id) ON DELETE CASCADE,
    sequence       bigint NOT NULL,
    event_id       text NOT NULL,
    type           text NOT NULL,
    node_id        text NOT NULL DEFAULT '',
    causation_id   text NOT NULL DEFAULT '',
    at             timestamptz NOT NULL,
    schema_version integer NOT NULL,
    payload        json NOT NULL,
    -- Not part of the document: the run's status after the event, and the
    -- artifact chunk an artifact.created event carries.
    status         text NOT NULL,
    chunk          json,
    PRIMARY KEY (run_id, sequence)
);

-- Every interrupt a run raised (OpenWOP interrupt.md): open, resolved (at
-- most once) or withdrawn.
CREATE TABLE wopinterop_interrupts (
    run_id     text COLLATE "C" NOT NULL REFERENCES wopinterop_runs (id) ON DELETE CASCADE,
    id         text COLLATE "C" NOT NULL,
    step       integer NOT NULL,
    key        text NOT NULL,
    kind       text NOT NULL,
    state      text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'resolved', 'withdrawn')),
    spec       json NOT NULL,
    resolution json,
    PRIMARY KEY (run_id, id),
    UNIQUE (run_id, key)
);

-- The effects a workflow performed, in order, so that a replay skips them.
CREATE TABLE wopinterop_run_effects (
    run_id text COLLATE "C" NOT NULL REFERENCES wopinterop_runs (id) ON DELETE CASCADE,
    step   integer NOT NULL,
    kind   text NOT NULL CHECK (kind IN ('interrupt', 'artifact')),
    key    text NOT NULL,
    PRIMARY KEY (run_id, step)
);

-- Run counts per tenant, workspace, workflow and status, kept by trigger,
-- so that a listing's Total costs the same at a thousand runs as at a
-- million. Each run counts in one of eight shards, so that transitions of
-- different runs seldom wait on one counter row.
CREATE TABLE wopinterop_run_counts (
    tenant      text NOT NULL,
    workspace   text NOT NULL,
    workflow_id text NOT NULL,
    status      text NOT NULL,
    shard       smallint NOT NULL,
    n           bigint NOT NULL,
    PRIMARY KEY (tenant, workspace, workflow_id, status, shard)
);

CREATE FUNCTION wopinterop_runs_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO wopinterop_run_counts AS c
        VALUES (NEW.tenant, NEW.workspace, NEW.workflow_id, NEW.status, hashtext(NEW.id) & 7, 1)
        ON CONFLICT (tenant, workspace, workflow_id, status, shard) DO UPDATE SET n = c.n + 1;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE wopinterop_run_counts SET n = n - 1
        WHERE (tenant, workspace, workflow_id, status, shard) =
              (OLD.tenant, OLD.workspace, OLD.workflow_id, OLD.status, hashtext(OLD.id) & 7);
    ELSIF OLD.status IS DISTINCT FROM NEW.status THEN
        -- Both rows in status order: two transitions never lock them in
        -- opposite orders, so they cannot deadlock on them.
        INSERT INTO wopinterop_run_counts AS c
        SELECT NEW.tenant, NEW.workspace, NEW.workflow_id, v.status, hashtext(NEW.id) & 7, v.delta
        FROM (VALUES (OLD.status, -1), (NEW.status, 1)) AS v (status, delta)
        ORDER BY v.status
        ON CONFLICT (tenant, workspace, workflow_id, status, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER wopinterop_runs_count
    AFTER INSERT OR DELETE OR UPDATE OF status ON wopinterop_runs
    FOR EACH ROW EXECUTE FUNCTION wopinterop_runs_count();

-- Secrets every replica shares, e.g. the key that signs listing cursors.
CREATE TABLE wopinterop_secrets (
    name  text PRIMARY KEY,
    value bytea NOT NULL
);
