//! The identity SQL, and only here: people, tokens, invites and the audit. Portable SQL for
//! SQLite and PostgreSQL (`$n` placeholders, TEXT ids, BIGINT milliseconds).

pub(crate) mod audit;
pub(crate) mod invites;
pub(crate) mod oauth;
pub(crate) mod people;
pub(crate) mod tokens;

pub(crate) use slipway_server::sql_error::is_unique_violation;
