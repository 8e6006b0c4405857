-- The secrets vault: secrets (one row per path in a scope), their versions (encrypted), and
-- the audit trail of every secret operation. Values never appear in clear: a version holds
-- the nonce and AEAD ciphertext of `{"data": …, "metadata": …}` and the id of the master
-- key that sealed it. Portable types only (TEXT ids, BIGINT epoch milliseconds).

CREATE TABLE secret (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES account (id),
    -- 'user', 'app' or 'shared'.
    scope TEXT NOT NULL,
    -- Whose namespace the path lives in: the user's id (user), the app's id (app), the
    -- account's id (shared).
    owner_id TEXT NOT NULL,
    path TEXT NOT NULL,
    current_version BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (scope, owner_id, path)
);

CREATE TABLE secret_version (
    secret_id TEXT NOT NULL REFERENCES secret (id),
    version BIGINT NOT NULL,
    key_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    ciphertext TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (secret_id, version)
);

-- Who did what to which secret, when, and how it ended. Never a value.
CREATE TABLE secret_audit (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    scope TEXT NOT NULL,
    app_id TEXT,
    path TEXT,
    version BIGINT,
    outcome TEXT NOT NULL,
    at BIGINT NOT NULL
);

CREATE INDEX secret_audit_account ON secret_audit (account_id, at, id);
