-- Build jobs: one row per service per upload. The uploaded context is a file under
-- DATA_DIR/contexts/<context_id>; the log is DATA_DIR/builds/<id>/log; images live in the
-- content-addressed store DATA_DIR/images. Portable types only, as in 0001.

CREATE TABLE build (
    id TEXT PRIMARY KEY,
    app_id TEXT NOT NULL REFERENCES app (id),
    service TEXT NOT NULL,
    -- queued | in_progress | succeeded | failed | cancelled
    status TEXT NOT NULL,
    -- native | buildah
    builder TEXT NOT NULL,
    -- The devfile text of the upload, so a queued job does not depend on later uploads.
    devfile TEXT NOT NULL,
    context_id TEXT NOT NULL,
    -- zstd | gzip
    context_encoding TEXT NOT NULL,
    image_uri TEXT,
    manifest_digest TEXT,
    error TEXT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    updated_at BIGINT NOT NULL
);

CREATE INDEX build_app ON build (app_id, created_at, id);
CREATE INDEX build_status ON build (status);
