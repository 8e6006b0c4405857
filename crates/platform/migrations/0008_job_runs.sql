-- Scheduled jobs' runs (devfile exec commands with attributes.schedule): one row per time a
-- job was due (run, skipped under concurrency forbid, or missed while the platform was down)
-- and per run asked for by hand (`scheduled_at` NULL). The unique index makes a due time
-- claimed once, whichever deployment's scheduler gets there first. The newest runs of each
-- job are kept (the platform trims older ones).

CREATE TABLE job_run (
    id TEXT PRIMARY KEY,
    app_id TEXT NOT NULL REFERENCES app (id),
    job TEXT NOT NULL,
    deployment_id TEXT,
    status TEXT NOT NULL,
    trigger TEXT NOT NULL,
    scheduled_at BIGINT,
    started_at BIGINT,
    ended_at BIGINT,
    exit_code BIGINT,
    reason TEXT,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX job_run_due ON job_run (app_id, job, scheduled_at);
CREATE INDEX job_run_newest ON job_run (app_id, job, created_at);
