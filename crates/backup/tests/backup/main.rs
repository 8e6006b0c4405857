//! Backups and restores of real servers, each on SQLite and on PostgreSQL
//! (`SLIPWAY_TEST_PG_URL`; required under CI, skipped loudly otherwise): a platform backed up
//! while a client writes secrets and restored into a new data directory and database that a
//! new server then serves; the archive's bytes; the care service's round trip; and every
//! refusal of a restore, which must leave its target as it was.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one scenario; the 100-line limit is for production code"
)]

mod care;
mod platform;
mod refusals;
mod resources;
mod support;
