-- Accounts, users, bearer tokens, apps, their service principals and access-control resources.
-- One file for SQLite and PostgreSQL: portable types only (TEXT UUIDs, BIGINT epoch
-- milliseconds and 0/1 flags). Never edit a migration that has shipped; add a new one.

CREATE TABLE platform_setting (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE account (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE account_user (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES account (id),
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    -- 'owner' for the user an account was created with, 'member' otherwise.
    account_role TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Only the SHA-256 of a token is stored; the token itself is shown once.
CREATE TABLE api_token (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES account_user (id),
    created_at BIGINT NOT NULL
);

CREATE TABLE app (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES account (id),
    -- App names become DNS labels, so they are unique across the whole platform.
    name TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    description TEXT NOT NULL,
    status TEXT NOT NULL,
    url TEXT,
    devfile TEXT,
    enabled BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Keyset pagination of one account's apps walks this index.
CREATE INDEX app_account_page ON app (account_id, created_at, id);

CREATE TABLE service_principal (
    id TEXT PRIMARY KEY,
    app_id TEXT NOT NULL UNIQUE REFERENCES app (id),
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- The access-control resource of an app has the app's UUID as its id.
CREATE TABLE acl_resource (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    account_id TEXT NOT NULL REFERENCES account (id),
    created_at BIGINT NOT NULL
);

CREATE TABLE acl_grant (
    resource_id TEXT NOT NULL REFERENCES acl_resource (id),
    user_id TEXT NOT NULL REFERENCES account_user (id),
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (resource_id, user_id, role)
);

CREATE INDEX acl_grant_user ON acl_grant (user_id, resource_id);
