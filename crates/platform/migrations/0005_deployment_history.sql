-- What every deployment ran and why: who started it and for what (build, enable, rollback,
-- restart), the digest of the devfile, the deployment a rollback went back to, and per
-- service the app secrets it was given with their versions (never a value).

ALTER TABLE deployment ADD COLUMN cause TEXT NOT NULL DEFAULT 'build';
ALTER TABLE deployment ADD COLUMN started_by TEXT;
ALTER TABLE deployment ADD COLUMN devfile_digest TEXT;
ALTER TABLE deployment ADD COLUMN rollback_of TEXT;

CREATE TABLE deployment_secret (
    deployment_id TEXT NOT NULL REFERENCES deployment (id),
    service TEXT NOT NULL,
    secret_path TEXT NOT NULL,
    version BIGINT NOT NULL,
    PRIMARY KEY (deployment_id, service, secret_path)
);
