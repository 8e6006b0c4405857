//! The OCI documents themselves: media types, descriptors, the image index and the manifest,
//! and their one serialisation. A leaf apart from the layer packer and image writer (`oci`),
//! because the blob store reads these documents (`index.json`, the manifests a kept image
//! reaches) while the writer writes into the store: in one module the two would use each
//! other. `oci` re-exports them, so `slipway_image::oci::Manifest` is unchanged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::digest::ImageError;

/// Media type of an image manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of an image config.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// Media type of a gzip-compressed layer.
pub const LAYER_GZIP_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// Media type of an image index (`index.json`).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// Annotation naming an image in `index.json`.
pub const REF_NAME_ANNOTATION: &str = "org.opencontainers.image.ref.name";

/// A pointer to a blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// What the blob is.
    pub media_type: String,
    /// `sha256:…`.
    pub digest: String,
    /// Bytes.
    pub size: u64,
    /// Free annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// `index.json` of an OCI layout.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    /// Always 2.
    pub schema_version: u32,
    /// [`INDEX_MEDIA_TYPE`].
    #[serde(default)]
    pub media_type: String,
    /// The images.
    #[serde(default)]
    pub manifests: Vec<Descriptor>,
}

/// An image manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_MEDIA_TYPE`].
    #[serde(default)]
    pub media_type: String,
    /// The config blob.
    pub config: Descriptor,
    /// The layer blobs, bottom first.
    pub layers: Vec<Descriptor>,
    /// Free annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Manifest {
    /// Parses a manifest blob.
    pub fn parse(bytes: &[u8]) -> Result<Self, ImageError> {
        serde_json::from_slice(bytes).map_err(|e| ImageError::Document(format!("manifest: {e}")))
    }
}

/// Serialises an OCI document.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, ImageError> {
    serde_json::to_vec(value).map_err(|e| ImageError::Document(e.to_string()))
}
