//! Integration tests of the care service over real HTTP, on SQLite and (when
//! `SLIPWAY_TEST_PG_URL` is set) PostgreSQL.

mod admin;
mod enrollment_effects;
mod enrollment_rules;
mod fhir;
mod missing_info;
mod routing;
mod support;
