//! What both Slipway servers (the platform and the care service) need from a server and
//! must not each write again: the database connection and its one write strategy
//! ([`db`]), the clock ([`clock`]), which SQL errors mean what and what of them may be logged
//! ([`sql_error`]), request logging, bearer tokens and body limits ([`http`]), serving until a
//! signal ([`serve`]), the one atomic file write ([`file`]) and token generation and hashing
//! ([`token`]), and running a server on a thread of its own for the programs that embed one
//! ([`background`]), started on first use and shared ([`first_use`]), and HTTPS with
//! certificates replaced while serving (`tls`, feature `tls`). With the `testing`
//! feature, [`testing`] gives tests their databases; with `metrics`, `metrics` counts requests
//! by route template and writes the `/metrics` answer.
//!
//! Not here: each service's error enum and wire format (care answers an array of
//! `{errorCode, message, fields}`, the platform `{"error": {code, message, field}}`), its
//! migrations and its routes. This crate knows nothing of either service.

#[cfg(feature = "http")]
pub mod background;
pub mod clock;
#[cfg(feature = "db")]
pub mod db;
pub mod file;
pub mod first_use;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "json")]
pub mod json;
#[cfg(test)]
mod layers;
#[cfg(feature = "metrics")]
pub mod metrics;
#[cfg(feature = "seal")]
pub mod seal;
#[cfg(feature = "http")]
pub mod serve;
#[cfg(feature = "db")]
pub mod sql_error;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "tls")]
pub mod tls;
pub mod token;
