//! SQL access, one module per resource. Functions take the request's transaction so a
//! request is all-or-nothing; none of them commits.

pub mod access;
pub mod accounts;
pub mod apps;
pub mod audit;
pub mod builds;
pub mod deployments;
pub mod secrets;
pub mod service_ports;
pub mod settings;
pub mod tokens;

pub use slipway_server::sql_error::is_unique_violation;
