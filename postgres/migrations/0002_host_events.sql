-- Host events (OpenWOP host-event.schema.json; events.md §Host events): per
-- tenant, numbered under the tenant's head row, so that they commit in
-- publication order and a subscriber reading by number never skips one.

CREATE TABLE wopinterop_host_event_heads (
    tenant  text PRIMARY KEY,
    seq     bigint NOT NULL,
    -- How many durable events the tenant ever published: the count bound
    -- of retention is counted in durable events.
    durable bigint NOT NULL
);

CREATE TABLE wopinterop_host_events (
    tenant          text NOT NULL,
    seq             bigint NOT NULL,
    -- The event's place among the tenant's durable events; NULL for an
    -- ephemeral one, which is kept only briefly and never replayed.
    durable_ordinal bigint,
    event_id        text NOT NULL,
    type            text NOT NULL,
    at              timestamptz NOT NULL,
    published_at    timestamptz NOT NULL,
    delivery        text NOT NULL CHECK (delivery IN ('durable', 'ephemeral')),
    workspace       text NOT NULL DEFAULT '',
    payload         json NOT NULL,
    PRIMARY KEY (tenant, seq)
);

-- Last-Event-ID resumption, the count bound and the age bound.
CREATE INDEX wopinterop_host_events_id ON wopinterop_host_events (tenant, event_id);
CREATE INDEX wopinterop_host_events_durable ON wopinterop_host_events (tenant, durable_ordinal)
    WHERE durable_ordinal IS NOT NULL;
CREATE INDEX wopinterop_host_events_age ON wopinterop_host_events (published_at);
