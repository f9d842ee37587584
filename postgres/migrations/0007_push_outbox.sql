-- The push outbox (OpenWOP RFC 0214 §A; package push, Outbox): the
-- deliveries queued and not yet finished, a leased work queue every
-- replica drains.
--
-- wopinterop_push_outbox holds one row per delivery id. "queued" orders
-- deliveries as they were first Put. A removed delivery stays a while as
-- a tombstone (removed_at set, body dropped), so that the same push
-- queued again by a late watcher is a no-op; Remove sweeps expired
-- tombstones in small batches.
CREATE TABLE wopinterop_push_outbox (
    id         text PRIMARY KEY,
    queued     bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    task_id    text NOT NULL,
    config_id  text NOT NULL,
    sequence   bigint NOT NULL,
    body       bytea,
    final      boolean NOT NULL,
    removed_at timestamptz
);

-- A lane's deliveries in order: its next head after a Remove.
CREATE INDEX wopinterop_push_outbox_lane ON wopinterop_push_outbox (task_id, config_id, queued)
    WHERE removed_at IS NULL;
-- The tombstones, oldest first, for the sweep.
CREATE INDEX wopinterop_push_outbox_removed ON wopinterop_push_outbox (removed_at)
    WHERE removed_at IS NOT NULL;

-- One row per lane (task, config) that holds deliveries: head is the
-- "queued" of its oldest, the only one ever leased, and the lease (owner,
-- lease_until on the database clock) is the lane's. lease_until is NULL
-- when no lease was granted since the head became head or was released.
CREATE TABLE wopinterop_push_lanes (
    task_id     text NOT NULL,
    config_id   text NOT NULL,
    head        bigint NOT NULL,
    owner       text NOT NULL DEFAULT '',
    lease_until timestamptz,
    PRIMARY KEY (task_id, config_id)
);

-- Lease reads the unleased heads oldest first, and the expired leases.
CREATE INDEX wopinterop_push_lanes_free ON wopinterop_push_lanes (head) WHERE lease_until IS NULL;
CREATE INDEX wopinterop_push_lanes_leased ON wopinterop_push_lanes (lease_until) WHERE lease_until IS NOT NULL;
