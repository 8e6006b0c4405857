//! How Slipway turns a service into an image and an image into something running.
//!
//! - [`build`]: the two builders. `native` runs the devfile's build command and packs the
//!   result as an OCI image; `buildah` builds the service's Dockerfile. Both take a plain
//!   [`build::Job`] and write into an [`slipway_image::ImageStore`]; neither knows about
//!   databases, accounts or HTTP.
//! - [`runtime::Runtime`]: the backend trait, with [`process`] (process groups on this host)
//!   and [`container`] (podman or docker through [`engine`]). [`supervisor`] watches one
//!   running instance and [`health`] probes it.
//! - [`layers`]: the process runtime's shared unpacked layers.
//! - [`pgroup`]: the one place that spawns a command as a process group and kills the group.
//!
//! The modules' layer order (no module circles) is in `module_layers.rs`.
//!
//! **Invariant:** nothing runs from an image whose signature does not verify
//! ([`runtime::ImageRequest::verify`], over [`slipway_image::verify_image`], is the first
//! step of every runtime's `prepare`).

pub mod base_image;
pub mod build;
pub mod container;
pub mod engine;
pub mod health;
pub mod layers;
#[cfg(test)]
mod module_layers;
pub mod pgroup;
pub mod process;
pub mod runtime;
pub mod supervisor;
pub mod volumes;
