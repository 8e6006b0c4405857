//! The content-addressed blob store: an OCI image layout at `DATA_DIR/images`
//! (`oci-layout`, `index.json`, `blobs/sha256/<hex>`). Blobs are written to a temporary file
//! in the same file system and renamed to their digest, so a blob is either whole or absent;
//! a blob already present is kept and the new copy dropped, so identical layers are stored
//! once.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tempfile::NamedTempFile;

use crate::digest::{Digest, ImageError, digest_file};
use crate::document::{Descriptor, INDEX_MEDIA_TYPE, Index, Manifest};
// Other crates serialise their OCI documents with `slipway_image::store::to_json`; it lives
// with the documents, below both the store and the image writer.
pub use crate::document::to_json;

/// Where images live inside the data directory.
pub const IMAGES_DIR: &str = "images";

/// Above this size a blob is not read to see whether it is a manifest.
const MANIFEST_SIZE_LIMIT: u64 = 1 << 20;

/// The blob store of one data directory.
#[derive(Debug, Clone)]
pub struct ImageStore {
    root: PathBuf,
    /// Serialises read-modify-write of `index.json` within this process.
    index_lock: Arc<Mutex<()>>,
}

impl ImageStore {
    /// Opens (creating if needed) the store under `data_dir/images`.
    pub fn open(data_dir: &Path) -> Result<Self, ImageError> {
        let root = data_dir.join(IMAGES_DIR);
        for dir in ["blobs/sha256", "tmp", "signatures"] {
            std::fs::create_dir_all(root.join(dir))?;
        }
        let layout = root.join("oci-layout");
        if !layout.exists() {
            write_atomic(&root, &layout, br#"{"imageLayoutVersion":"1.0.0"}"#)?;
        }
        let index = root.join("index.json");
        if !index.exists() {
            let empty = Index {
                schema_version: 2,
                media_type: INDEX_MEDIA_TYPE.to_owned(),
                manifests: Vec::new(),
            };
            write_atomic(&root, &index, &to_json(&empty)?)?;
        }
        Ok(Self {
            root,
            index_lock: Arc::new(Mutex::new(())),
        })
    }

    /// The store's directory (`DATA_DIR/images`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the blob `digest` is (or would be).
    pub fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.root.join("blobs/sha256").join(digest.hex())
    }

    /// Where the signature of manifest `digest` is (or would be).
    pub fn signature_path(&self, digest: &Digest) -> PathBuf {
        self.root.join("signatures").join(digest.hex())
    }

    /// A temporary file on the store's file system, for a blob being written.
    pub fn temp_file(&self) -> Result<NamedTempFile, ImageError> {
        Ok(tempfile::Builder::new()
            .prefix(".blob-")
            .tempfile_in(self.root.join("tmp"))?)
    }

    /// Moves a fully written temporary file into the store as `digest`. Returns true when the
    /// blob is new, false when an identical one was already stored (the temporary is dropped).
    pub fn commit_temp(&self, temp: NamedTempFile, digest: &Digest) -> Result<bool, ImageError> {
        let dest = self.blob_path(digest);
        if dest.exists() {
            return Ok(false);
        }
        temp.as_file().sync_all()?;
        temp.persist(&dest).map_err(|e| ImageError::Io(e.error))?;
        Ok(true)
    }

    /// Stores `bytes`; returns its digest and whether it was new.
    pub fn put_bytes(&self, bytes: &[u8]) -> Result<(Digest, bool), ImageError> {
        let digest = Digest::of(bytes);
        if self.blob_path(&digest).exists() {
            return Ok((digest, false));
        }
        let mut temp = self.temp_file()?;
        temp.write_all(bytes)?;
        let new = self.commit_temp(temp, &digest)?;
        Ok((digest, new))
    }

    /// Copies the file at `path`, whose content must hash to `digest`, into the store (used to
    /// import blobs of another OCI layout). Returns whether it was new.
    pub fn import_file(&self, path: &Path, digest: &Digest) -> Result<bool, ImageError> {
        if self.blob_path(digest).exists() {
            return Ok(false);
        }
        let mut temp = self.temp_file()?;
        std::io::copy(&mut std::fs::File::open(path)?, temp.as_file_mut())?;
        let (actual, _) = digest_file(temp.path())?;
        if &actual != digest {
            return Err(ImageError::DigestMismatch {
                expected: digest.clone(),
                actual,
            });
        }
        self.commit_temp(temp, digest)
    }

    /// The content of blob `digest`.
    pub fn read_blob(&self, digest: &Digest) -> Result<Vec<u8>, ImageError> {
        match std::fs::read(self.blob_path(digest)) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ImageError::MissingBlob(digest.clone()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Checks that blob `digest` exists, hashes to its name and (when given) has `size` bytes.
    pub fn check_blob(&self, digest: &Digest, size: Option<u64>) -> Result<(), ImageError> {
        let path = self.blob_path(digest);
        if !path.exists() {
            return Err(ImageError::MissingBlob(digest.clone()));
        }
        let (actual, actual_size) = digest_file(&path)?;
        if &actual != digest {
            return Err(ImageError::DigestMismatch {
                expected: digest.clone(),
                actual,
            });
        }
        if size.is_some_and(|s| s != actual_size) {
            return Err(ImageError::SizeMismatch(digest.clone()));
        }
        Ok(())
    }

    /// Lists the manifest `descriptor` in `index.json` (once per digest), with its reference
    /// name annotation, so standard OCI tools can read the store.
    pub fn add_to_index(&self, descriptor: &Descriptor) -> Result<(), ImageError> {
        let _guard = self
            .index_lock
            .lock()
            .map_err(|_| ImageError::Document("index lock poisoned".into()))?;
        let path = self.root.join("index.json");
        let mut index: Index = serde_json::from_slice(&std::fs::read(&path)?)
            .map_err(|e| ImageError::Document(format!("index.json: {e}")))?;
        if index
            .manifests
            .iter()
            .any(|m| m.digest == descriptor.digest)
        {
            return Ok(());
        }
        index.manifests.push(descriptor.clone());
        write_atomic(&self.root, &path, &to_json(&index)?)
    }

    /// Keeps the images in `keep` (manifest digests) and every blob they reach, and removes
    /// everything else: other manifests and their `index.json` entries and signatures, blobs
    /// no kept image reaches, and leftover temporary files. With `dry_run` it only reports.
    ///
    /// A store has no reference counts: what is reachable is found from `keep` each time,
    /// so the caller must be the only writer (the platform runs this with the data directory
    /// locked, the server stopped). A kept digest whose manifest is missing or unreadable
    /// keeps nothing but itself; it is not an error, so one damaged image cannot block
    /// removing the others.
    pub fn retain(&self, keep: &BTreeSet<String>, dry_run: bool) -> Result<Removal, ImageError> {
        let mut reachable: BTreeSet<String> = keep.clone();
        for digest in keep {
            let Ok(parsed) = Digest::parse(digest) else {
                continue;
            };
            let Ok(bytes) = self.read_blob(&parsed) else {
                continue;
            };
            if let Ok(manifest) = Manifest::parse(&bytes) {
                reachable.insert(manifest.config.digest);
                reachable.extend(manifest.layers.into_iter().map(|l| l.digest));
            }
        }
        let mut removal = Removal::default();
        let index_path = self.root.join("index.json");
        let mut index: Index = serde_json::from_slice(&std::fs::read(&index_path)?)
            .map_err(|e| ImageError::Document(format!("index.json: {e}")))?;
        let mut manifests: BTreeSet<String> = index
            .manifests
            .iter()
            .filter(|m| !keep.contains(&m.digest))
            .map(|m| m.digest.clone())
            .collect();
        for entry in std::fs::read_dir(self.root.join("blobs/sha256"))? {
            let entry = entry?;
            let digest = format!("sha256:{}", entry.file_name().to_string_lossy());
            if reachable.contains(&digest) {
                continue;
            }
            let size = entry.metadata()?.len();
            removal.blobs += 1;
            removal.bytes += size;
            // Manifests are small documents; a large blob is a layer and is not read.
            if size <= MANIFEST_SIZE_LIMIT
                && std::fs::read(entry.path())
                    .ok()
                    .and_then(|b| Manifest::parse(&b).ok())
                    .is_some()
            {
                manifests.insert(digest);
            }
            if !dry_run {
                std::fs::remove_file(entry.path())?;
            }
        }
        removal.images = manifests.into_iter().collect();
        if dry_run {
            return Ok(removal);
        }
        for digest in &removal.images {
            if let Ok(parsed) = Digest::parse(digest) {
                match std::fs::remove_file(self.signature_path(&parsed)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                    _ => {}
                }
            }
        }
        let before = index.manifests.len();
        index.manifests.retain(|m| keep.contains(&m.digest));
        if index.manifests.len() != before {
            write_atomic(&self.root, &index_path, &to_json(&index)?)?;
        }
        for entry in std::fs::read_dir(self.root.join("tmp"))? {
            std::fs::remove_file(entry?.path())?;
        }
        Ok(removal)
    }

    /// How many blobs are stored (for tests and diagnostics).
    pub fn blob_count(&self) -> Result<usize, ImageError> {
        Ok(std::fs::read_dir(self.root.join("blobs/sha256"))?.count())
    }
}

/// What [`ImageStore::retain`] removed (or would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Removal {
    /// The removed images' manifest digests.
    pub images: Vec<String>,
    /// How many blobs (manifests, configs, layers) were removed.
    pub blobs: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// Writes `bytes` to `path` through a temporary file in `dir` and a rename.
fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), ImageError> {
    let mut temp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| ImageError::Io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_blobs_are_stored_once_and_tampering_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let store = ImageStore::open(dir.path()).unwrap();
        let (d1, new1) = store.put_bytes(b"layer").unwrap();
        let (d2, new2) = store.put_bytes(b"layer").unwrap();
        assert_eq!(d1, d2);
        assert!(new1 && !new2);
        assert_eq!(store.blob_count().unwrap(), 1);
        store.check_blob(&d1, Some(5)).unwrap();
        assert!(matches!(
            store.check_blob(&d1, Some(6)),
            Err(ImageError::SizeMismatch(_))
        ));
        std::fs::write(store.blob_path(&d1), b"LAYER").unwrap();
        assert!(matches!(
            store.check_blob(&d1, None),
            Err(ImageError::DigestMismatch { .. })
        ));
        let missing = Digest::of(b"nothing");
        assert!(matches!(
            store.read_blob(&missing),
            Err(ImageError::MissingBlob(_))
        ));
        assert_eq!(
            std::fs::read_dir(store.root().join("tmp")).unwrap().count(),
            0,
            "no temporary file left"
        );
    }

    fn image(store: &ImageStore, dirs: &[&Path], name: &str) -> String {
        let layers: Vec<_> = dirs
            .iter()
            .map(|d| crate::oci::pack_layer(store, d).unwrap())
            .collect();
        let run = crate::oci::RunConfig {
            cmd: vec!["true".into()],
            working_dir: "/".into(),
            env: Vec::new(),
            port: None,
            labels: Default::default(),
        };
        crate::oci::write_image(store, &layers, &run, name)
            .unwrap()
            .digest
    }

    #[test]
    fn retain_keeps_what_kept_images_reach_and_removes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = ImageStore::open(dir.path()).unwrap();
        let (shared, old, new) = (
            dir.path().join("s"),
            dir.path().join("o"),
            dir.path().join("n"),
        );
        for (d, text) in [(&shared, "base"), (&old, "v1"), (&new, "v2")] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("f"), text).unwrap();
        }
        let first = image(&store, &[&shared, &old], "app:v1");
        let second = image(&store, &[&shared, &new], "app:v2");
        // 3 layers, 2 configs, 2 manifests.
        assert_eq!(store.blob_count().unwrap(), 7);
        std::fs::write(store.root().join("tmp/.blob-left"), b"x").unwrap();
        let keep = BTreeSet::from([second.clone()]);

        let planned = store.retain(&keep, true).unwrap();
        assert_eq!(planned.images, vec![first.clone()]);
        assert_eq!(planned.blobs, 3, "v1's manifest, config and own layer");
        assert_eq!(store.blob_count().unwrap(), 7, "a dry run removes nothing");

        let removed = store.retain(&keep, false).unwrap();
        assert_eq!(removed, planned);
        assert_eq!(store.blob_count().unwrap(), 4);
        let kept =
            Manifest::parse(&store.read_blob(&Digest::parse(&second).unwrap()).unwrap()).unwrap();
        for layer in &kept.layers {
            store
                .check_blob(&Digest::parse(&layer.digest).unwrap(), Some(layer.size))
                .unwrap();
        }
        assert!(matches!(
            store.read_blob(&Digest::parse(&first).unwrap()),
            Err(ImageError::MissingBlob(_))
        ));
        let index: Index =
            serde_json::from_slice(&std::fs::read(store.root().join("index.json")).unwrap())
                .unwrap();
        let listed: Vec<_> = index.manifests.iter().map(|m| m.digest.clone()).collect();
        assert_eq!(listed, vec![second]);
        assert_eq!(
            std::fs::read_dir(store.root().join("tmp")).unwrap().count(),
            0
        );
        assert_eq!(store.retain(&keep, false).unwrap(), Removal::default());
    }
}
