//! Integration tests of the care service over real HTTP, on SQLite and (when
//! `SLIPWAY_TEST_PG_URL` is set) PostgreSQL.

#![allow(
    clippy::too_many_lines,
    reason = "a test or a bench reads as one scenario; the 100-line limit is for production code"
)]

mod admin;
mod amend;
mod enrollment_effects;
mod enrollment_rules;
mod fhir;
mod metrics;
mod missing_info;
mod routing;
mod support;
mod worklist;
