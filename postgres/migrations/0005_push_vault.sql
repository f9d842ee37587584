-- The push credential vault (OpenWOP RFC 0214 §A: a config record carries
-- only a reference to its secret). A row holds the secret encrypted with
-- AES-256-GCM, never the plaintext: key_id names the configured key that
-- sealed it (so keys can rotate), nonce is the GCM nonce, sealed the
-- ciphertext with its tag. The ref is the row's identity and is bound to
-- the ciphertext as additional data, so a row's sealed bytes do not open
-- under another ref.
CREATE TABLE wopinterop_push_secrets (
    ref       text PRIMARY KEY,
    key_id    text NOT NULL,
    nonce     bytea NOT NULL,
    sealed    bytea NOT NULL,
    sealed_at timestamptz NOT NULL DEFAULT now()
);
