//! Slipway's devfile engine: parse, validate, generate and surgically edit `devfile.yaml`.
//!
//! Architecture invariant: this crate does no I/O. Callers hand it text (and, for the port
//! check, a [`ProjectFiles`] reader) and write results themselves, atomically.

mod diagnostics;
mod edit;
mod generate;
pub mod graph;
pub mod infra;
pub mod jobs;
#[cfg(test)]
mod layers;
mod model;
mod name;
pub mod quantity;
pub mod secret_path;
pub mod validate;
pub mod yaml;

pub use diagnostics::{Diagnostic, Report, Severity};
pub use edit::{EditError, append_mapping_entry, set_image_uri};
pub use generate::{DEFAULT_PORT, GenerateError, GenerateParams, generate_devfile};
pub use infra::{ResourceDecl, ResourceKind, VolumeDecl};
pub use model::{
    Command, Component, Container, Devfile, Dockerfile, Durable, Endpoint, EnvVar, Exec, Group,
    Image, Metadata, Platform, ServiceSpec, Volume, VolumeMount,
};
pub use name::{APP_NAME_MAX, AppName, AppNameError, DnsLabelError, dns_label};
pub use validate::{ProjectFiles, SUPPORTED_SCHEMA_VERSIONS, validate};
