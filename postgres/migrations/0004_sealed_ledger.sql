-- The MRTR single-use ledger (OpenWOP interop map, mcp.mrtr: "single use:
-- a second retry with it MUST fail"): one row per consumed requestState
-- id. The primary key is what makes a consumption atomic across replicas:
-- of any number of concurrent INSERT … ON CONFLICT DO NOTHING with one id,
-- exactly one inserts a row.
CREATE TABLE wopinterop_sealed_ledger (
    id           text PRIMARY KEY,
    -- The state's expiry plus the retention slack: after it every replica
    -- refuses the state as expired, so the row may be deleted.
    retain_until timestamptz NOT NULL
);

-- The bounded cleanup deletes the oldest expired rows first.
CREATE INDEX wopinterop_sealed_ledger_retain ON wopinterop_sealed_ledger (retain_until);
