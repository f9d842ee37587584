-- Push notification configs (OpenWOP RFC 0214; A2A 1.0 §7 push
-- notification config methods): one row per (task, config id). A config
-- holds no secret, only its vault ref. "registered" orders a task's
-- configs as they were registered; a replacement keeps its row, so it
-- keeps its place.
CREATE TABLE wopinterop_push_configs (
    task_id    text NOT NULL,
    id         text NOT NULL,
    registered bigint GENERATED ALWAYS AS IDENTITY,
    url        text NOT NULL,
    scheme     text NOT NULL,
    secret_ref text NOT NULL,
    subject    json NOT NULL,
    tenant     text NOT NULL,
    workspace  text NOT NULL,
    context_id text NOT NULL,
    after_seq  bigint NOT NULL,
    done       boolean NOT NULL,
    created    timestamptz NOT NULL,
    PRIMARY KEY (task_id, id)
);

-- Live lists the configs not done, for resuming delivery.
CREATE INDEX wopinterop_push_configs_live ON wopinterop_push_configs (registered) WHERE NOT done;
