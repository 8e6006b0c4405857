-- Deployments: one row per attempt to run an app's images, and one row per service of it.
-- Runtime logs are DATA_DIR/deployments/<deployment_id>/<service>.log; unpacked images are
-- DATA_DIR/run/<app_id>/<service>/<deployment_id>. Portable types only, as in 0001.

CREATE TABLE deployment (
    id TEXT PRIMARY KEY,
    app_id TEXT NOT NULL REFERENCES app (id),
    -- deploying | RUNNING | FAILED | stopped | superseded
    status TEXT NOT NULL,
    -- Why it failed or stopped; NULL otherwise.
    reason TEXT,
    -- The devfile the deployment runs (service order, ports, health paths), so a redeploy
    -- after a restart does not depend on later uploads.
    devfile TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    finished_at BIGINT,
    updated_at BIGINT NOT NULL
);

CREATE INDEX deployment_app ON deployment (app_id, created_at, id);
CREATE INDEX deployment_status ON deployment (status);

CREATE TABLE deployment_service (
    deployment_id TEXT NOT NULL REFERENCES deployment (id),
    service TEXT NOT NULL,
    build_id TEXT NOT NULL,
    manifest_digest TEXT NOT NULL,
    -- pending | starting | healthy | failed | stopped
    status TEXT NOT NULL,
    port BIGINT,
    started_at BIGINT,
    healthy_at BIGINT,
    PRIMARY KEY (deployment_id, service)
);
