-- Git sources (docs/git.md): the repository an app deploys from, its credential and webhook
-- secret (sealed together with the vault's master key: key_id, nonce, ciphertext), the
-- deploy waiting to be fetched (kept here, so a restart loses no acknowledged push; a newer
-- push replaces it), and what the last attempt did. Webhook deliveries already acted on, so
-- a redelivery queues nothing. Builds and deployments remember the commit they came from.

CREATE TABLE git_source (
    app_id TEXT PRIMARY KEY REFERENCES app (id),
    repo_url TEXT NOT NULL,
    branch TEXT NOT NULL,
    path TEXT NOT NULL,
    -- none, token, deploy_key.
    auth TEXT NOT NULL,
    deploy_key TEXT,
    key_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    ciphertext TEXT NOT NULL,
    poll_seconds BIGINT,
    -- The deploy waiting: the ref to fetch, the commit the event named, what asked, when.
    pending_ref TEXT,
    pending_sha TEXT,
    pending_trigger TEXT,
    pending_at BIGINT,
    last_sha TEXT,
    last_branch TEXT,
    last_author TEXT,
    last_subject TEXT,
    last_error TEXT,
    polled_at BIGINT,
    -- How many pull requests may have a preview at once (0: no previews).
    max_previews BIGINT NOT NULL,
    -- A preview's source: the app whose pull request it builds, and the request's number.
    preview_of TEXT,
    preview_number BIGINT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX git_source_preview ON git_source (preview_of, preview_number);

CREATE TABLE git_delivery (
    app_id TEXT NOT NULL REFERENCES app (id),
    delivery_id TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (app_id, delivery_id)
);

ALTER TABLE build ADD COLUMN commit_sha TEXT;
ALTER TABLE build ADD COLUMN commit_branch TEXT;
ALTER TABLE build ADD COLUMN commit_author TEXT;
ALTER TABLE build ADD COLUMN commit_subject TEXT;

ALTER TABLE deployment ADD COLUMN commit_sha TEXT;
ALTER TABLE deployment ADD COLUMN commit_branch TEXT;
ALTER TABLE deployment ADD COLUMN commit_author TEXT;
ALTER TABLE deployment ADD COLUMN commit_subject TEXT;
