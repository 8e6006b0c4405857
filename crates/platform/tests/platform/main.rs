//! Integration tests of the platform server over real HTTP, each run on SQLite and on
//! PostgreSQL (`SLIPWAY_TEST_PG_URL`; required under CI, skipped loudly otherwise).

mod apps;
mod auth;
mod bootstrap;
mod buildah;
mod builds;
mod container;
mod deploy;
mod history;
mod isolation;
mod matrix;
mod openapi;
mod pagination;
mod podman;
mod prebuilt;
mod scan;
mod secrets;
mod sharing;
mod stream;
mod support;
mod sync;
mod template;
mod users;
mod vault_deploy;
