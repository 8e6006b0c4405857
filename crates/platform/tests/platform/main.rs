//! Integration tests of the platform server over real HTTP, each run on SQLite and on
//! PostgreSQL (`SLIPWAY_TEST_PG_URL`; required under CI, skipped loudly otherwise).

#![allow(
    clippy::too_many_lines,
    reason = "a test or a bench reads as one scenario; the 100-line limit is for production code"
)]

mod apps;
mod auth;
mod bootstrap;
mod build_urls;
mod buildah;
mod builds;
mod container;
mod deploy;
mod domains;
mod git;
mod history;
mod isolation;
mod jobs;
mod matrix;
mod mcp;
mod metrics;
mod notifications;
mod oauth;
mod openapi;
mod pagination;
mod people;
mod podman;
mod prebuilt;
mod resources;
mod scan;
mod scopes;
mod secret_entry;
mod secrets;
mod sharing;
mod stream;
mod support;
mod sync;
mod template;
mod users;
mod vault_deploy;
