-- The loopback port of each public service in the `ports` gateway mode: kept per app and
-- service so a service's URL stays the same across deployments and restarts.

CREATE TABLE service_port (
    app_id TEXT NOT NULL REFERENCES app (id),
    service TEXT NOT NULL,
    port INTEGER NOT NULL,
    PRIMARY KEY (app_id, service)
);
