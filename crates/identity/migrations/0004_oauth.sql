-- Assistants signing in with OAuth 2.1 to the platform's tool server (docs/mcp.md).
-- A client: registered (RFC 7591) or read from its client ID metadata document.
CREATE TABLE oauth_client (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    -- JSON list of the exact redirect URIs it may use.
    redirect_uris TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- An authorization request, from the browser's visit to the code's exchange. `id` is the
-- page's unguessable handle; `user_code` what the person types to approve it.
CREATE TABLE oauth_request (
    id TEXT PRIMARY KEY,
    user_code TEXT NOT NULL UNIQUE,
    client_id TEXT NOT NULL REFERENCES oauth_client (id),
    redirect_uri TEXT NOT NULL,
    state TEXT,
    code_challenge TEXT NOT NULL,
    resource TEXT NOT NULL,
    -- JSON TokenScope: what the client asked for (then what the page chose).
    asked_scope TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    -- Who approved it, and the scope they granted (JSON), or when it was denied.
    user_id TEXT REFERENCES account_user (id),
    scope TEXT,
    denied_at BIGINT,
    -- The authorization code (its SHA-256), made at approval; used once.
    code_hash TEXT UNIQUE,
    code_used_at BIGINT
);
-- What a person allowed a client: its access tokens are api_token rows with its id and the
-- resource they are for; its refresh token is kept as a hash and replaced on each use.
CREATE TABLE oauth_grant (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES account_user (id),
    client_id TEXT NOT NULL REFERENCES oauth_client (id),
    client_name TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT NOT NULL,
    refresh_hash TEXT NOT NULL UNIQUE,
    refresh_expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    refreshed_at BIGINT
);
CREATE INDEX oauth_grant_user ON oauth_grant (user_id);
ALTER TABLE api_token ADD COLUMN grant_id TEXT;
CREATE INDEX api_token_grant ON api_token (grant_id);
