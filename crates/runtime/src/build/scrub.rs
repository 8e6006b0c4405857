//! Takes out of a built image the empty files buildah leaves where it mounted the build's CA
//! bundle and pip configuration.
//!
//! buildah (up to at least 1.38, containers/buildah#5847) creates a `--volume` target that
//! the image lacks and keeps it, empty, in the committed layer. An empty file at
//! `/etc/ssl/certs/ca-certificates.crt` — the bundle OpenSSL, Go and curl read first — would
//! make the app trust no certificate at all in an image without its own bundle (UBI, Fedora,
//! busybox). So before the image is imported, every layer of the exported OCI layout that
//! holds an empty regular file at one of the mount targets is written again without it
//! (the other entries' bytes copied unchanged), and the config's `rootfs.diff_ids`, the
//! manifest and `index.json` follow. A real file at those paths is never empty, so only the
//! placeholders go.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use slipway_image::oci::{Index, LAYER_GZIP_MEDIA_TYPE, Manifest};
use slipway_image::{Digest, HashingWriter, ImageError};

use super::BuildError;

/// Removes empty regular files at `targets` (absolute paths) from every layer of the image in
/// the OCI layout at `layout`, except those `known` says were imported before (a base image's
/// layers, read once rather than on every build); returns how many entries went. The
/// layout's `index.json` then names the new manifest; blobs no longer referenced stay in the
/// layout (a build's work directory, removed with it).
pub fn remove_empty_targets(
    layout: &Path,
    targets: &[&str],
    known: impl Fn(&Digest) -> bool,
) -> Result<usize, BuildError> {
    let wanted: Vec<&str> = targets.iter().map(|t| t.trim_start_matches('/')).collect();
    let index_path = layout.join("index.json");
    let mut index: Index = serde_json::from_slice(&std::fs::read(&index_path)?)
        .map_err(|e| ImageError::Document(format!("index.json: {e}")))?;
    let Some(entry) = index.manifests.first_mut() else {
        return Err(ImageError::Document("index.json lists no image".into()).into());
    };
    let blob = |d: &Digest| layout.join("blobs/sha256").join(d.hex());
    let mut manifest = Manifest::parse(&std::fs::read(blob(&Digest::parse(&entry.digest)?))?)?;
    let config_digest = Digest::parse(&manifest.config.digest)?;
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blob(&config_digest))?)
            .map_err(|e| ImageError::Document(format!("image config: {e}")))?;
    let mut removed = 0;
    for (i, layer) in manifest.layers.iter_mut().enumerate() {
        let digest = Digest::parse(&layer.digest)?;
        if known(&digest) {
            continue;
        }
        let path = blob(&digest);
        let gzip = layer.media_type.ends_with("gzip");
        // The push asks for gzip (`--compression-format gzip`); a layer in another encoding
        // (zstd) is left as it is rather than misread as a plain tar.
        if !gzip && !layer.media_type.ends_with(".tar") {
            continue;
        }
        let ranges = placeholder_ranges(open_layer(&path, gzip)?, &wanted)?;
        if ranges.is_empty() {
            continue;
        }
        removed += ranges.len();
        let temp = tempfile::NamedTempFile::new_in(layout)?;
        let (digest, size, diff_id) = {
            let outer = HashingWriter::new(BufWriter::new(temp.as_file()));
            let mut inner = HashingWriter::new(GzEncoder::new(outer, Compression::fast()));
            copy_except(open_layer(&path, gzip)?, &mut inner, &ranges)?;
            let (gz, diff_id, _) = inner.finish();
            let (mut buffered, digest, size) = gz.finish()?.finish();
            buffered.flush()?;
            (digest, size, diff_id)
        };
        temp.persist(blob(&digest)).map_err(|e| e.error)?;
        layer.media_type = LAYER_GZIP_MEDIA_TYPE.to_owned();
        layer.digest = digest.to_string();
        layer.size = size;
        let diff_ids = config
            .pointer_mut("/rootfs/diff_ids")
            .and_then(serde_json::Value::as_array_mut)
            .ok_or_else(|| ImageError::Document("image config has no rootfs.diff_ids".into()))?;
        let slot = diff_ids.get_mut(i).ok_or_else(|| {
            ImageError::Document("image config has fewer diff_ids than layers".into())
        })?;
        *slot = serde_json::Value::String(diff_id.to_string());
    }
    if removed == 0 {
        return Ok(0);
    }
    let config_bytes = slipway_image::store::to_json(&config)?;
    let config_digest = write_blob(layout, &config_bytes)?;
    manifest.config.digest = config_digest.to_string();
    manifest.config.size = config_bytes.len() as u64;
    let manifest_bytes = slipway_image::store::to_json(&manifest)?;
    let manifest_digest = write_blob(layout, &manifest_bytes)?;
    entry.digest = manifest_digest.to_string();
    entry.size = manifest_bytes.len() as u64;
    write_atomic(layout, &index_path, &slipway_image::store::to_json(&index)?)?;
    Ok(removed)
}

/// The uncompressed tar of the layer blob at `path`.
fn open_layer(path: &Path, gzip: bool) -> std::io::Result<Box<dyn Read>> {
    let file = BufReader::new(std::fs::File::open(path)?);
    Ok(if gzip {
        Box::new(MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    })
}

/// The byte ranges of the uncompressed tar `layer` that hold an empty regular file at one of
/// `wanted` (relative paths), each with any extension headers (PAX, GNU long names) before it.
fn placeholder_ranges(layer: impl Read, wanted: &[&str]) -> Result<Vec<(u64, u64)>, BuildError> {
    let mut archive = tar::Archive::new(layer);
    let mut ranges = Vec::new();
    // Where the previous entry ended: an entry's own extension headers start there.
    let mut end = 0u64;
    for entry in archive.entries()? {
        let entry = entry?;
        let start = end;
        // `size()` honours a PAX `size` record, which the header's own field does not.
        let size = entry.size();
        end = entry.raw_file_position() + size.div_ceil(512) * 512;
        let path = entry.path()?;
        let path = path.to_string_lossy();
        let path = path.trim_start_matches("./").trim_start_matches('/');
        if entry.header().entry_type() == tar::EntryType::Regular
            && size == 0
            && wanted.contains(&path)
        {
            ranges.push((start, end));
        }
    }
    Ok(ranges)
}

/// Copies `from` to `to` without the byte `ranges` (sorted, disjoint).
fn copy_except(
    mut from: impl Read,
    to: &mut impl Write,
    ranges: &[(u64, u64)],
) -> std::io::Result<()> {
    let mut at = 0u64;
    for &(start, end) in ranges {
        std::io::copy(&mut (&mut from).take(start - at), to)?;
        std::io::copy(&mut (&mut from).take(end - start), &mut std::io::sink())?;
        at = end;
    }
    std::io::copy(&mut from, to)?;
    Ok(())
}

/// Writes `bytes` as a blob of the layout; returns its digest.
fn write_blob(layout: &Path, bytes: &[u8]) -> Result<Digest, BuildError> {
    let digest = Digest::of(bytes);
    write_atomic(
        layout,
        &layout.join("blobs/sha256").join(digest.hex()),
        bytes,
    )?;
    Ok(digest)
}

fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use flate2::read::GzDecoder;

    use slipway_image::ImageStore;
    use slipway_image::oci::{Descriptor, Layer, RunConfig, write_image};

    /// A gzip layer of `(path, content)` regular files, stored in `store`.
    fn layer(store: &ImageStore, files: &[(&str, &str)]) -> Layer {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, content) in files {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(0o755);
            header.set_size(content.len() as u64);
            tar.append_data(&mut header, path, content.as_bytes())
                .unwrap();
        }
        let plain = tar.into_inner().unwrap();
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(&plain).unwrap();
        let (digest, _) = store.put_bytes(&gz.finish().unwrap()).unwrap();
        Layer {
            descriptor: Descriptor {
                media_type: LAYER_GZIP_MEDIA_TYPE.to_owned(),
                size: std::fs::metadata(store.blob_path(&digest)).unwrap().len(),
                digest: digest.to_string(),
                annotations: BTreeMap::new(),
            },
            diff_id: Digest::of(&plain),
            new: true,
        }
    }

    /// The `(path, size)` entries of each layer of the image in `store`'s layout, checking each
    /// layer's digest and diff_id.
    fn entries(store: &ImageStore) -> Vec<Vec<(String, u64)>> {
        let index: Index =
            serde_json::from_slice(&std::fs::read(store.root().join("index.json")).unwrap())
                .unwrap();
        let manifest = Manifest::parse(
            &store
                .read_blob(&Digest::parse(&index.manifests[0].digest).unwrap())
                .unwrap(),
        )
        .unwrap();
        let config: serde_json::Value = serde_json::from_slice(
            &store
                .read_blob(&Digest::parse(&manifest.config.digest).unwrap())
                .unwrap(),
        )
        .unwrap();
        manifest
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let gz = store.read_blob(&Digest::parse(&l.digest).unwrap()).unwrap();
                assert_eq!(gz.len() as u64, l.size);
                let mut plain = Vec::new();
                GzDecoder::new(&gz[..]).read_to_end(&mut plain).unwrap();
                assert_eq!(
                    config["rootfs"]["diff_ids"][i].as_str().unwrap(),
                    Digest::of(&plain).to_string()
                );
                tar::Archive::new(&plain[..])
                    .entries()
                    .unwrap()
                    .map(|e| {
                        let e = e.unwrap();
                        (e.path().unwrap().display().to_string(), e.size())
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn only_empty_files_at_the_targets_leave_the_layers() {
        let data = tempfile::tempdir().unwrap();
        let store = ImageStore::open(data.path()).unwrap();
        let long = format!("{}/file", "d".repeat(150));
        let base = layer(&store, &[("etc/os-release", "x"), (&long, "long")]);
        let run = layer(
            &store,
            &[
                (&long, "again"),
                ("etc/ssl/certs/ca-certificates.crt", ""),
                ("etc/empty", ""),
                ("etc/xdg/pip/pip.conf", ""),
                ("app/main.py", "print()"),
            ],
        );
        let copied = layer(&store, &[("etc/xdg/pip/pip.conf", "[global]\n")]);
        let config = RunConfig {
            cmd: vec!["/app".into()],
            working_dir: "/".into(),
            env: Vec::new(),
            port: None,
            labels: BTreeMap::new(),
        };
        write_image(&store, &[base, run.clone(), copied], &config, "x/y").unwrap();
        let targets = [
            crate::build::trust::CA_TARGET,
            crate::build::trust::PIP_CONF_TARGET,
        ];

        // A layer imported before is not read again.
        let run_digest = Digest::parse(&run.descriptor.digest).unwrap();
        assert_eq!(
            remove_empty_targets(store.root(), &targets, |d| d == &run_digest).unwrap(),
            0
        );
        assert_eq!(
            remove_empty_targets(store.root(), &targets, |_| false).unwrap(),
            2
        );
        let layers = entries(&store);
        assert_eq!(
            layers[1],
            [
                (long.clone(), 5),
                ("etc/empty".to_owned(), 0),
                ("app/main.py".to_owned(), 7)
            ]
        );
        // A file with content at a target stays, as do the layers without a placeholder.
        assert_eq!(layers[2], [("etc/xdg/pip/pip.conf".to_owned(), 9)]);
        assert_eq!(layers[0], [("etc/os-release".to_owned(), 1), (long, 4)]);
        // Nothing more to do the second time.
        assert_eq!(
            remove_empty_targets(store.root(), &targets, |_| false).unwrap(),
            0
        );
    }
}
