//! Images: the content-addressed OCI blob store under `DATA_DIR/images`, the OCI documents
//! (layer, config, manifest) the native builder writes, and the platform's ed25519 signatures
//! over manifest digests. [`verify_image`] is what deployments call before running anything.
//!
//! This file only declares the modules and re-exports what other crates name from the root:
//! an item defined here would be used by the modules below it and so tie each of them into a
//! circle with the crate root. The modules' order is in `layers.rs`.

mod archive;
mod digest;
pub mod docker_archive;
mod document;
pub mod import;
#[cfg(test)]
mod layers;
pub mod oci;
pub mod scan;
pub mod sign;
pub mod store;

pub use digest::{Digest, HashingWriter, ImageError, digest_file, hex};
pub use scan::BUILDS_DIR;
pub use sign::{PlatformKey, verify_image};
pub use store::ImageStore;
