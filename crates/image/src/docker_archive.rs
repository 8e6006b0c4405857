//! `docker save` archives (also `podman save --format docker-archive` and `buildah push IMAGE
//! docker-archive:FILE`): `manifest.json` naming a config JSON and uncompressed layer tars,
//! plus legacy files (`repositories`, `<id>/json`, `<id>/VERSION`, `<id>/layer.tar` links).
//! The archive is unpacked into a scratch directory (regular files at plain relative paths
//! only; symbolic links are remembered, never created, and may only point inside the
//! archive), then converted to the OCI image layout the store keeps: the config is kept byte
//! for byte (Docker's config is the OCI config), each layer becomes a blob checked against
//! the config's `rootfs.diff_ids` — the only digests such an archive carries — and a new OCI
//! manifest and `index.json` name them.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::archive::file_entries;
use crate::digest::{Digest, HashingWriter, ImageError, digest_file};
use crate::document::{
    CONFIG_MEDIA_TYPE, Descriptor, INDEX_MEDIA_TYPE, Index, LAYER_GZIP_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE, Manifest, to_json,
};

/// Media type of an uncompressed layer, what `docker save` writes.
pub const LAYER_TAR_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar";

/// Links followed at most when resolving a layer path (legacy archives link once).
const MAX_LINKS: usize = 8;

/// One image of `manifest.json`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Entry {
    config: String,
    #[serde(default)]
    layers: Vec<String>,
}

/// Converts the docker-archive tar at `archive` into an OCI image layout at `layout` (an
/// empty directory), using `scratch` (another empty directory) for the unpacked archive.
/// The first image of `manifest.json` is converted, as the first of an OCI `index.json` is.
pub fn convert(archive: &Path, scratch: &Path, layout: &Path) -> Result<(), ImageError> {
    let links = unpack(archive, scratch)?;
    let entry = first_image(scratch)?;
    let unpacked = Unpacked {
        root: scratch,
        links: &links,
    };
    let blobs = layout.join("blobs/sha256");
    std::fs::create_dir_all(&blobs)?;
    let config = Config::read(&unpacked, &entry)?;
    std::fs::write(blobs.join(config.digest.hex()), &config.bytes)?;
    let layers = entry
        .layers
        .iter()
        .zip(&config.diff_ids)
        .map(|(name, expected)| move_layer(&unpacked, name, expected, &blobs))
        .collect::<Result<Vec<_>, _>>()?;
    write_layout(layout, &blobs, config.descriptor(), layers)
}

/// The unpacked archive: its regular files under `root`, and its symbolic links.
struct Unpacked<'a> {
    root: &'a Path,
    links: &'a HashMap<PathBuf, PathBuf>,
}

impl Unpacked<'_> {
    /// The file `name` of `manifest.json` ([`resolve`]).
    fn file(&self, name: &str) -> Result<PathBuf, ImageError> {
        resolve(self.root, self.links, name)
    }
}

/// The first image `manifest.json` lists; an archive without `manifest.json` is neither
/// format, and the error says how to save one that is.
fn first_image(scratch: &Path) -> Result<Entry, ImageError> {
    let manifest_path = scratch.join("manifest.json");
    if !manifest_path.is_file() {
        return Err(ImageError::Document(
            "the archive has neither index.json nor manifest.json; it is neither an OCI image \
             layout nor a docker-archive (save the image with `podman save --format \
             oci-archive` or `docker save`)"
                .into(),
        ));
    }
    let entries: Vec<Entry> = serde_json::from_slice(&std::fs::read(&manifest_path)?)
        .map_err(|e| ImageError::Document(format!("manifest.json: {e}")))?;
    entries
        .into_iter()
        .next()
        .ok_or_else(|| ImageError::Document("manifest.json lists no image".into()))
}

/// The image's config, kept byte for byte, and the layer digests it records.
struct Config {
    bytes: Vec<u8>,
    digest: Digest,
    /// `rootfs.diff_ids`: the uncompressed digest of each layer, in order.
    diff_ids: Vec<String>,
}

impl Config {
    /// Reads the config `entry` names; it must record one diff id per layer the entry
    /// lists, since those are the only digests the layers are checked against.
    fn read(unpacked: &Unpacked<'_>, entry: &Entry) -> Result<Self, ImageError> {
        let bytes = std::fs::read(unpacked.file(&entry.config)?)?;
        let config: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ImageError::Document(format!("{}: {e}", entry.config)))?;
        let diff_ids: Vec<String> = config["rootfs"]["diff_ids"]
            .as_array()
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if diff_ids.len() != entry.layers.len() {
            return Err(ImageError::Document(format!(
                "the config lists {} layers (rootfs.diff_ids) but manifest.json names {}",
                diff_ids.len(),
                entry.layers.len()
            )));
        }
        Ok(Self {
            digest: Digest::of(&bytes),
            bytes,
            diff_ids,
        })
    }

    /// The manifest's descriptor of the config.
    fn descriptor(&self) -> Descriptor {
        Descriptor {
            media_type: CONFIG_MEDIA_TYPE.into(),
            digest: self.digest.to_string(),
            size: self.bytes.len() as u64,
            annotations: Default::default(),
        }
    }
}

/// Checks layer `name` against its diff id `expected` (the digest of its uncompressed
/// content: a gzipped layer is hashed through the decoder) and moves it into `blobs`;
/// returns its descriptor.
fn move_layer(
    unpacked: &Unpacked<'_>,
    name: &str,
    expected: &str,
    blobs: &Path,
) -> Result<Descriptor, ImageError> {
    let path = unpacked.file(name)?;
    let (digest, size) = digest_file(&path)?;
    let gzip = is_gzip(&path)?;
    let diff_id = if gzip {
        let mut hashing = HashingWriter::new(std::io::sink());
        std::io::copy(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path)?),
            &mut hashing,
        )?;
        hashing.finish().1
    } else {
        digest.clone()
    };
    if diff_id.as_str() != expected {
        return Err(ImageError::Document(format!(
            "layer {name} is altered: its content is {diff_id}, the config's \
             rootfs.diff_ids says {expected}"
        )));
    }
    let target = blobs.join(digest.hex());
    if !target.exists() {
        std::fs::rename(&path, &target).or_else(|_| std::fs::copy(&path, &target).map(|_| ()))?;
    }
    Ok(Descriptor {
        media_type: if gzip {
            LAYER_GZIP_MEDIA_TYPE
        } else {
            LAYER_TAR_MEDIA_TYPE
        }
        .into(),
        digest: digest.to_string(),
        size,
        annotations: Default::default(),
    })
}

/// Writes a new OCI manifest over `config` and `layers` into `blobs`, and the `index.json`
/// and `oci-layout` that make `layout` an OCI image layout naming it.
fn write_layout(
    layout: &Path,
    blobs: &Path,
    config: Descriptor,
    layers: Vec<Descriptor>,
) -> Result<(), ImageError> {
    let manifest = Manifest {
        schema_version: 2,
        media_type: MANIFEST_MEDIA_TYPE.into(),
        config,
        layers,
        annotations: Default::default(),
    };
    let manifest_bytes = to_json(&manifest)?;
    let manifest_digest = Digest::of(&manifest_bytes);
    std::fs::write(blobs.join(manifest_digest.hex()), &manifest_bytes)?;
    let index = Index {
        schema_version: 2,
        media_type: INDEX_MEDIA_TYPE.into(),
        manifests: vec![Descriptor {
            media_type: MANIFEST_MEDIA_TYPE.into(),
            digest: manifest_digest.to_string(),
            size: manifest_bytes.len() as u64,
            annotations: Default::default(),
        }],
    };
    std::fs::write(layout.join("index.json"), to_json(&index)?)?;
    std::fs::write(
        layout.join("oci-layout"),
        br#"{"imageLayoutVersion":"1.0.0"}"#,
    )?;
    Ok(())
}

fn is_gzip(path: &Path) -> std::io::Result<bool> {
    let mut magic = [0u8; 2];
    let n = std::fs::File::open(path)?.read(&mut magic)?;
    Ok(n == 2 && magic == [0x1f, 0x8b])
}

/// A plain relative path (no root, no `..`, no `.` after normalising `./`), if `raw` is one.
fn plain(raw: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in raw.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(n) => out.push(n),
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Unpacks the regular files of the archive under `dest`; returns its symbolic links (link
/// path → target as written). Any other entry (hard link, device, FIFO) or a path that is
/// not plain and relative is an error naming it.
fn unpack(archive: &Path, dest: &Path) -> Result<HashMap<PathBuf, PathBuf>, ImageError> {
    let mut tar = tar::Archive::new(std::io::BufReader::new(std::fs::File::open(archive)?));
    let mut links = HashMap::new();
    for entry in file_entries(&mut tar)? {
        let mut file = entry?;
        let relative = plain(&file.path).ok_or_else(|| {
            ImageError::Document(format!(
                "{} is not a relative path inside the archive",
                file.path.display()
            ))
        })?;
        if file.kind.is_symlink() {
            let target = file
                .content
                .link_name()
                .ok()
                .flatten()
                .ok_or_else(|| {
                    ImageError::Document(format!(
                        "{} is a link without a target",
                        file.path.display()
                    ))
                })?
                .into_owned();
            links.insert(relative, target);
            continue;
        }
        if !file.kind.is_file() {
            return Err(ImageError::Document(format!(
                "{} must be a regular file or a symbolic link",
                file.path.display()
            )));
        }
        let at = dest.join(&relative);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut out = std::fs::File::create(at)?;
        std::io::copy(&mut file.content, &mut out)?;
    }
    Ok(links)
}

/// Where the file `name` of `manifest.json` is under `root`, following the archive's links
/// (relative to the link's directory) without ever leaving the archive.
fn resolve(
    root: &Path,
    links: &HashMap<PathBuf, PathBuf>,
    name: &str,
) -> Result<PathBuf, ImageError> {
    let outside = || {
        ImageError::Document(format!(
            "{name} (named by manifest.json) points outside the archive"
        ))
    };
    let mut current = plain(Path::new(name)).ok_or_else(outside)?;
    for _ in 0..MAX_LINKS {
        let Some(target) = links.get(&current) else {
            let path = root.join(&current);
            return if path.is_file() {
                Ok(path)
            } else {
                Err(ImageError::Document(format!(
                    "{name}, named by manifest.json, is not in the archive"
                )))
            };
        };
        let mut next: Vec<&std::ffi::OsStr> = current
            .parent()
            .map(|p| p.iter().collect())
            .unwrap_or_default();
        for c in target.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    next.pop().ok_or_else(outside)?;
                }
                Component::Normal(n) => next.push(n),
                _ => return Err(outside()),
            }
        }
        current = next.iter().collect();
    }
    Err(ImageError::Document(format!(
        "{name}: more than {MAX_LINKS} symbolic links"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(tar: &mut tar::Builder<Vec<u8>>, name: &str, bytes: &[u8]) {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, name, bytes).unwrap();
    }

    fn link(tar: &mut tar::Builder<Vec<u8>>, name: &str, target: &str) {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        tar.append_link(&mut header, name, target).unwrap();
    }

    /// A hand-made archive in the legacy layout: the layer behind a `<id>/layer.tar` link.
    fn archive(layer: &[u8], diff_id: &str, extra: &[(&str, &str)]) -> Vec<u8> {
        let config = format!(
            r#"{{"architecture":"amd64","os":"linux","config":{{"Cmd":["/hello"]}},"rootfs":{{"type":"layers","diff_ids":["{diff_id}"]}}}}"#
        );
        let config_name = format!("{}.json", Digest::of(config.as_bytes()).hex());
        let mut tar = tar::Builder::new(Vec::new());
        append(&mut tar, "abc/layer-real.tar", layer);
        link(&mut tar, "abc/layer.tar", "layer-real.tar");
        link(&mut tar, "def/layer.tar", "../abc/layer.tar");
        append(&mut tar, &config_name, config.as_bytes());
        append(
            &mut tar,
            "manifest.json",
            format!(
                r#"[{{"Config":"{config_name}","RepoTags":["x:1"],"Layers":["def/layer.tar"]}}]"#
            )
            .as_bytes(),
        );
        append(&mut tar, "repositories", b"{}");
        for (name, target) in extra {
            link(&mut tar, name, target);
        }
        tar.into_inner().unwrap()
    }

    fn layer_tar() -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        append(&mut tar, "hello", b"hello");
        tar.into_inner().unwrap()
    }

    fn convert_bytes(bytes: &[u8]) -> Result<tempfile::TempDir, ImageError> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.tar");
        std::fs::write(&file, bytes).unwrap();
        std::fs::create_dir(dir.path().join("raw")).unwrap();
        std::fs::create_dir(dir.path().join("layout")).unwrap();
        convert(&file, &dir.path().join("raw"), &dir.path().join("layout"))?;
        Ok(dir)
    }

    #[test]
    fn a_legacy_archive_with_links_becomes_an_oci_layout() {
        let layer = layer_tar();
        let diff_id = Digest::of(&layer);
        let dir = convert_bytes(&archive(&layer, diff_id.as_str(), &[])).unwrap();
        let layout = dir.path().join("layout");
        let index: Index =
            serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
        let digest = Digest::parse(&index.manifests[0].digest).unwrap();
        let manifest = Manifest::parse(
            &std::fs::read(layout.join("blobs/sha256").join(digest.hex())).unwrap(),
        )
        .unwrap();
        assert_eq!(manifest.layers.len(), 1);
        assert_eq!(manifest.layers[0].digest, diff_id.as_str());
        assert_eq!(manifest.layers[0].media_type, LAYER_TAR_MEDIA_TYPE);
        assert_eq!(manifest.config.media_type, CONFIG_MEDIA_TYPE);
        for d in [&manifest.config.digest, &manifest.layers[0].digest] {
            let d = Digest::parse(d).unwrap();
            let bytes = std::fs::read(layout.join("blobs/sha256").join(d.hex())).unwrap();
            assert_eq!(Digest::of(&bytes), d);
        }
    }

    #[test]
    fn altered_layers_escaping_links_and_other_formats_are_refused() {
        let layer = layer_tar();
        let wrong = Digest::of(b"something else");
        let e = convert_bytes(&archive(&layer, wrong.as_str(), &[])).unwrap_err();
        assert!(e.to_string().contains("def/layer.tar is altered"), "{e}");

        // The manifest's layer path leading out through a link.
        let mut tar = tar::Builder::new(Vec::new());
        link(&mut tar, "l/layer.tar", "../../etc/passwd");
        append(
            &mut tar,
            "manifest.json",
            br#"[{"Config":"c.json","Layers":["l/layer.tar"]}]"#,
        );
        append(
            &mut tar,
            "c.json",
            br#"{"rootfs":{"diff_ids":["sha256:0000000000000000000000000000000000000000000000000000000000000000"]}}"#,
        );
        let e = convert_bytes(&tar.into_inner().unwrap()).unwrap_err();
        assert!(e.to_string().contains("points outside the archive"), "{e}");

        // `tar::Builder` refuses to write `..`; the name goes into the header by hand.
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().unwrap().name[..7].copy_from_slice(b"../evil");
        header.set_size(1);
        header.set_mode(0o644);
        header.set_cksum();
        let mut tar = tar::Builder::new(Vec::new());
        tar.append(&header, &b"x"[..]).unwrap();
        let e = convert_bytes(&tar.into_inner().unwrap()).unwrap_err();
        assert!(
            e.to_string().contains("../evil is not a relative path"),
            "{e}"
        );

        let mut tar = tar::Builder::new(Vec::new());
        append(&mut tar, "hello.txt", b"x");
        let e = convert_bytes(&tar.into_inner().unwrap()).unwrap_err();
        assert!(e.to_string().contains("neither an OCI image layout"), "{e}");
    }
}
