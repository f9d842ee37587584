-- The agent inventory (GET /agents; OpenWOP interop.md §Per-agent cards):
-- personas with the workflows routed to them, per tenant, listed in the
-- order they were added.
CREATE TABLE wopinterop_agents (
    tenant text NOT NULL,
    id     text NOT NULL,
    added  bigint GENERATED ALWAYS AS IDENTITY,
    doc    json NOT NULL,
    PRIMARY KEY (tenant, id)
);
