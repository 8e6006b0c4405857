//! The layer packer and the image writer, over the OCI documents of `document` (re-exported
//! here, where other crates name them). The native builder packs a directory into one gzip
//! layer (every entry under `app/`), writes a config carrying the run command, working
//! directory, environment and port, and a manifest naming both. Everything is deterministic —
//! sorted entries, owner 0:0, one fixed modification time, no creation date — so building the
//! same tree twice gives the same digests and the store keeps one copy.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use flate2::{Compression, GzBuilder};
use serde_json::{Value, json};

use crate::digest::{Digest, HashingWriter, ImageError};
use crate::document::to_json;
pub use crate::document::{
    CONFIG_MEDIA_TYPE, Descriptor, INDEX_MEDIA_TYPE, Index, LAYER_GZIP_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE, Manifest, REF_NAME_ANNOTATION,
};
use crate::store::ImageStore;

/// Modification time of every packed entry: 1980-01-01, the usual reproducible-build epoch
/// (also given to build commands as `SOURCE_DATE_EPOCH`).
pub const SOURCE_DATE_EPOCH: u64 = 315_532_800;
/// Directory the packed tree lives under inside the image.
pub const APP_ROOT: &str = "app";

/// A layer just stored: its descriptor and the digest of its uncompressed tar (the config's
/// `rootfs.diff_ids` entry).
#[derive(Debug, Clone)]
pub struct Layer {
    /// The compressed blob.
    pub descriptor: Descriptor,
    /// `sha256:` of the uncompressed tar.
    pub diff_id: Digest,
    /// False when an identical blob was already stored.
    pub new: bool,
}

/// Packs `dir` as one gzip layer with every entry under `app/`, streaming into the store.
/// Symbolic links are stored as links (never followed), so nothing outside `dir` is read;
/// sockets and FIFOs are skipped.
pub fn pack_layer(store: &ImageStore, dir: &Path) -> Result<Layer, ImageError> {
    let mut temp = store.temp_file()?;
    let (digest, size, diff_id) = {
        let outer = HashingWriter::new(BufWriter::new(temp.as_file_mut()));
        let gz = GzBuilder::new().mtime(0).write(outer, Compression::fast());
        let mut tar = tar::Builder::new(HashingWriter::new(gz));
        let root = std::fs::metadata(dir)?;
        let mut header = base_header(tar::EntryType::Directory, root.permissions().mode());
        tar.append_data(&mut header, APP_ROOT, std::io::empty())?;
        append_tree(&mut tar, dir, Path::new(APP_ROOT))?;
        let inner = tar.into_inner()?;
        let (gz, diff_id, _) = inner.finish();
        let outer = gz.finish()?;
        let (mut buffered, digest, size) = outer.finish();
        buffered.flush()?;
        (digest, size, diff_id)
    };
    let new = store.commit_temp(temp, &digest)?;
    Ok(Layer {
        descriptor: Descriptor {
            media_type: LAYER_GZIP_MEDIA_TYPE.to_owned(),
            digest: digest.to_string(),
            size,
            annotations: BTreeMap::new(),
        },
        diff_id,
        new,
    })
}

fn base_header(kind: tar::EntryType, mode: u32) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode & 0o7777);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(SOURCE_DATE_EPOCH);
    header.set_size(0);
    header
}

fn append_tree<W: std::io::Write>(
    tar: &mut tar::Builder<W>,
    dir: &Path,
    at: &Path,
) -> Result<(), ImageError> {
    let mut entries = std::fs::read_dir(dir)?.collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let name = at.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&path)?;
        let mode = meta.permissions().mode();
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(&path)?;
            let mut header = base_header(tar::EntryType::Symlink, 0o777);
            tar.append_link(&mut header, &name, &target)?;
        } else if kind.is_dir() {
            let mut header = base_header(tar::EntryType::Directory, mode);
            tar.append_data(&mut header, &name, std::io::empty())?;
            append_tree(tar, &path, &name)?;
        } else if kind.is_file() {
            let mut header = base_header(tar::EntryType::Regular, mode);
            header.set_size(meta.len());
            tar.append_data(&mut header, &name, std::fs::File::open(&path)?)?;
        }
    }
    Ok(())
}

/// What the image config says about running the image.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// `config.Cmd`.
    pub cmd: Vec<String>,
    /// `config.WorkingDir`, absolute.
    pub working_dir: String,
    /// `config.Env`, `NAME=value`.
    pub env: Vec<String>,
    /// The service port, exposed as `<port>/tcp`.
    pub port: Option<u16>,
    /// `config.Labels`.
    pub labels: BTreeMap<String, String>,
}

/// The architecture name OCI uses for this machine.
pub fn oci_architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

/// Writes the config and manifest of a one-or-more-layer image and lists the manifest in
/// `index.json` as `ref_name`. Returns the manifest's descriptor (its digest names the image).
pub fn write_image(
    store: &ImageStore,
    layers: &[Layer],
    run: &RunConfig,
    ref_name: &str,
) -> Result<Descriptor, ImageError> {
    let mut exposed = serde_json::Map::new();
    if let Some(port) = run.port {
        exposed.insert(format!("{port}/tcp"), json!({}));
    }
    let config = json!({
        "architecture": oci_architecture(),
        "os": "linux",
        "config": {
            "Cmd": run.cmd,
            "WorkingDir": run.working_dir,
            "Env": run.env,
            "ExposedPorts": Value::Object(exposed),
            "Labels": run.labels,
        },
        "rootfs": {
            "type": "layers",
            "diff_ids": layers.iter().map(|l| l.diff_id.to_string()).collect::<Vec<_>>(),
        },
    });
    let config_bytes = to_json(&config)?;
    let (config_digest, _) = store.put_bytes(&config_bytes)?;
    let manifest = Manifest {
        schema_version: 2,
        media_type: MANIFEST_MEDIA_TYPE.to_owned(),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.to_owned(),
            digest: config_digest.to_string(),
            size: config_bytes.len() as u64,
            annotations: BTreeMap::new(),
        },
        layers: layers.iter().map(|l| l.descriptor.clone()).collect(),
        annotations: BTreeMap::new(),
    };
    store_manifest(store, &manifest, ref_name)
}

/// A new image made of `base`'s layers and `layer` on top, with `base`'s config (its
/// `rootfs.diff_ids` extended): how a sync build replaces a service's files without
/// rebuilding what lies under them (its dependencies). Listed in `index.json` as `ref_name`.
pub fn extend_image(
    store: &ImageStore,
    base: &Digest,
    layer: &Layer,
    ref_name: &str,
) -> Result<Descriptor, ImageError> {
    let mut manifest = Manifest::parse(&store.read_blob(base)?)?;
    let config_digest = Digest::parse(&manifest.config.digest)?;
    let mut config: Value = serde_json::from_slice(&store.read_blob(&config_digest)?)
        .map_err(|e| ImageError::Document(format!("config: {e}")))?;
    config["rootfs"]["diff_ids"]
        .as_array_mut()
        .ok_or_else(|| ImageError::Document("config: rootfs.diff_ids is not a list".into()))?
        .push(Value::String(layer.diff_id.to_string()));
    let config_bytes = to_json(&config)?;
    let (config_digest, _) = store.put_bytes(&config_bytes)?;
    manifest.config.digest = config_digest.to_string();
    manifest.config.size = config_bytes.len() as u64;
    manifest.layers.push(layer.descriptor.clone());
    store_manifest(store, &manifest, ref_name)
}

/// Stores `manifest` and lists it in `index.json` as `ref_name`.
fn store_manifest(
    store: &ImageStore,
    manifest: &Manifest,
    ref_name: &str,
) -> Result<Descriptor, ImageError> {
    let manifest_bytes = to_json(manifest)?;
    let (manifest_digest, _) = store.put_bytes(&manifest_bytes)?;
    let descriptor = Descriptor {
        media_type: MANIFEST_MEDIA_TYPE.to_owned(),
        digest: manifest_digest.to_string(),
        size: manifest_bytes.len() as u64,
        annotations: BTreeMap::from([(REF_NAME_ANNOTATION.to_owned(), ref_name.to_owned())]),
    };
    store.add_to_index(&descriptor)?;
    Ok(descriptor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_the_same_tree_twice_gives_the_same_layer() {
        let data = tempfile::tempdir().unwrap();
        let store = ImageStore::open(data.path()).unwrap();
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir(tree.path().join("sub")).unwrap();
        std::fs::write(tree.path().join("sub/b.txt"), "b").unwrap();
        std::fs::write(tree.path().join("a.txt"), "a").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", tree.path().join("link")).unwrap();
        let first = pack_layer(&store, tree.path()).unwrap();
        // Touch the files: the modification time does not reach the layer.
        std::fs::write(tree.path().join("a.txt"), "a").unwrap();
        let second = pack_layer(&store, tree.path()).unwrap();
        assert_eq!(first.descriptor, second.descriptor);
        assert!(first.new && !second.new);

        let blob = store
            .read_blob(&Digest::parse(&first.descriptor.digest).unwrap())
            .unwrap();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&blob[..]));
        let mut names = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            names.push(entry.path().unwrap().display().to_string());
            if entry.header().entry_type().is_symlink() {
                // Stored as a link, never followed.
                assert_eq!(entry.size(), 0);
            }
        }
        assert_eq!(
            names,
            ["app", "app/a.txt", "app/link", "app/sub", "app/sub/b.txt"]
        );
    }
}
