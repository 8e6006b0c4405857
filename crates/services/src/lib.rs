//! The backing servers the platform runs for apps that declare them in their devfile's
//! `managedInfra`: a PostgreSQL cluster and a MariaDB server shared by every app (a database
//! and a role of each app's own on them), and a Redis or memcached server of each resource's
//! own. A server starts the first time a resource needs it, so a platform whose apps declare
//! nothing runs none; it is supervised (restarted with backoff, its output kept in a log) and
//! listens on loopback only (containers reach it through a relay on their network's
//! gateway, [`Services::expose`]).
//!
//! The credentials are the platform's to keep (in its vault, as the app's binding secret):
//! this crate makes them, applies them to a server and gives them back as [`Credentials`],
//! and re-applies the ones it is given, so a resource can be brought back from the secret
//! alone.

pub mod backup;
pub mod binding;
mod dynalite;
mod error;
mod forward;
#[cfg(test)]
mod layers;
mod manager;
mod mariadb;
mod memcached;
mod postgres;
mod process;
mod queue;
mod redis;
pub mod restate;
mod seaweed;
mod sigv4;
mod spec;

pub use error::ServiceError;
pub use manager::{Services, ServicesConfig};
pub use process::{ServerExit, Serves, disk_usage, exits};
pub use spec::{Credentials, Engine, ResourceKey, ResourceSpec, S3_REGION, TableKeys};
