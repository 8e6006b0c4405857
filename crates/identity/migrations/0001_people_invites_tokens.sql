-- People, invites, token lifetimes, SSO links and the identity audit.
-- The tables account, account_user and api_token were made by the platform's first migration,
-- before identity was a crate of its own; from here on this migration set changes them.
-- Portable types only (TEXT UUIDs, BIGINT epoch milliseconds), one file for SQLite and
-- PostgreSQL. Never edit a migration that has shipped; add a new one.

-- Account roles are admin and member; the user an account was created with was its "owner".
UPDATE account_user SET account_role = 'admin' WHERE account_role = 'owner';
-- A removed person is kept (audit entries, app history and their created_by still name them)
-- but can no longer sign in and is listed nowhere.
ALTER TABLE account_user ADD COLUMN removed_at BIGINT;
-- The last time one of their tokens was used, to the minute.
ALTER TABLE account_user ADD COLUMN last_active_at BIGINT;
-- The OpenID Connect subject a person signed in with first: later sign-ins match on it, so a
-- provider account whose e-mail changes (or is reassigned) cannot take over another person.
ALTER TABLE account_user ADD COLUMN oidc_issuer TEXT;
ALTER TABLE account_user ADD COLUMN oidc_subject TEXT;
CREATE UNIQUE INDEX account_user_oidc ON account_user (oidc_issuer, oidc_subject);

-- Tokens get an id (to list and revoke them without the secret), a name, a lifetime and a
-- last use. Tokens made before have no lifetime and keep working; their id is the start of
-- their hash.
ALTER TABLE api_token ADD COLUMN id TEXT;
ALTER TABLE api_token ADD COLUMN name TEXT;
ALTER TABLE api_token ADD COLUMN expires_at BIGINT;
ALTER TABLE api_token ADD COLUMN last_used_at BIGINT;
UPDATE api_token SET id = substr(token_hash, 1, 32), name = 'made before tokens had names';
CREATE UNIQUE INDEX api_token_id ON api_token (id);
CREATE INDEX api_token_user ON api_token (user_id);

-- An invite: only the SHA-256 of its code is kept. Pending while none of accepted_at,
-- revoked_at is set and expires_at is in the future.
CREATE TABLE account_invite (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES account (id),
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    code_hash TEXT NOT NULL UNIQUE,
    invited_by TEXT NOT NULL REFERENCES account_user (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    accepted_at BIGINT,
    accepted_by TEXT,
    revoked_at BIGINT
);
CREATE INDEX account_invite_email ON account_invite (account_id, email);

-- Who did what to whom, and when. The actor's e-mail is copied so an entry still reads
-- after the actor is removed. Never a code or a token.
CREATE TABLE identity_audit (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    actor_id TEXT,
    actor_email TEXT,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX identity_audit_page ON identity_audit (account_id, at, id);
