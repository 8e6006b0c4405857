-- Notifications (docs/notifications.md): an account's channels (their settings sealed with
-- the vault's master key, as secrets are), who subscribed to which events of which app (or
-- of the whole account, app_id NULL), and each event's delivery to each channel with every
-- attempt. A delivery is written in the transaction that records what happened, so an event
-- the platform recorded is never lost; one worker sends and retries them.

CREATE TABLE notify_channel (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES account (id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    -- Where it delivers, without secrets (shown in lists).
    target TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    ciphertext TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX notify_channel_name ON notify_channel (account_id, name);

CREATE TABLE notify_subscription (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES account (id),
    channel_id TEXT NOT NULL REFERENCES notify_channel (id),
    app_id TEXT,
    -- The event names, comma-separated.
    events TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX notify_subscription_channel ON notify_subscription (channel_id);

CREATE TABLE notify_delivery (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    channel_id TEXT NOT NULL REFERENCES notify_channel (id),
    event_id TEXT NOT NULL,
    app_id TEXT,
    -- The event as the webhook receives it (never a secret: see the api crate's Notification).
    payload TEXT NOT NULL,
    -- pending, delivered, failed
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_attempt_at BIGINT,
    created_at BIGINT NOT NULL,
    delivered_at BIGINT
);

CREATE INDEX notify_delivery_due ON notify_delivery (status, next_attempt_at);
CREATE INDEX notify_delivery_newest ON notify_delivery (account_id, created_at);

CREATE TABLE notify_attempt (
    delivery_id TEXT NOT NULL REFERENCES notify_delivery (id),
    attempt BIGINT NOT NULL,
    at BIGINT NOT NULL,
    error TEXT,
    PRIMARY KEY (delivery_id, attempt)
);
