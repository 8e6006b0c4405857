-- The backing resources an app's devfile declares (managedInfra), keyed by app, kind and
-- name, never by release: a resource outlives deploys and rollbacks. A resource the devfile
-- no longer declares is `detached` (its data kept) until it is destroyed by name or with
-- the app. Its credentials are app secrets under `slipway/resources/`, never here.

CREATE TABLE resource (
    app_id TEXT NOT NULL REFERENCES app (id),
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    engine TEXT NOT NULL,
    memory_mb BIGINT,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (app_id, kind, name)
);
