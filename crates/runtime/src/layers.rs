//! Unpacked layers shared by the process runtime's deployments: each image layer is unpacked
//! once into `DATA_DIR/layers/<hex>` (into a temporary directory, then renamed, so a cached
//! layer is whole or absent), and a deployment's tree is put together from them.
//!
//! Unpacking is what made a redeploy slow (a Python virtual environment is thousands of small
//! files): putting a tree together takes a fraction of it. Files inside dependency
//! directories (`.venv`, `venv`, `node_modules`, `site-packages`, `dist-packages`) become hard
//! links to the shared copy — installed packages are not written at run time, and what does
//! rewrite them (Python's byte-code cache, [`crate::process::relocate_venvs`]) replaces the
//! file by a rename, which leaves the shared copy alone. Every other file (the app's own, which
//! it may well write) is a copy.

use std::io::Read;
use std::path::{Path, PathBuf};

use slipway_image::oci::{Descriptor, LAYER_GZIP_MEDIA_TYPE};
use slipway_image::{Digest, ImageStore};

use crate::runtime::RuntimeError;

/// Where unpacked layers are kept inside the data directory.
pub const LAYERS_DIR: &str = "layers";

/// Directory names whose files are shared as hard links.
const SHARED_DIRS: &[&str] = &[
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "dist-packages",
];

/// The unpacked copy of `layer`, made now if there is none.
pub fn unpacked(
    data_dir: &Path,
    store: &ImageStore,
    layer: &Descriptor,
) -> Result<PathBuf, RuntimeError> {
    let digest = Digest::parse(&layer.digest).map_err(RuntimeError::Signature)?;
    let cache = data_dir.join(LAYERS_DIR);
    let dir = cache.join(digest.hex());
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&cache)?;
    let file = std::fs::File::open(store.blob_path(&digest))?;
    let reader: Box<dyn Read> =
        if layer.media_type == LAYER_GZIP_MEDIA_TYPE || layer.media_type.ends_with("+gzip") {
            Box::new(flate2::read::GzDecoder::new(file))
        } else if layer.media_type.ends_with("tar") {
            Box::new(file)
        } else {
            return Err(RuntimeError::Unsupported(format!(
                "layer media type {} is not supported by the process runtime",
                layer.media_type
            )));
        };
    let temp = tempfile::Builder::new()
        .prefix(".unpack-")
        .tempdir_in(&cache)?;
    unpack(reader, temp.path())?;
    match std::fs::rename(temp.path(), &dir) {
        Ok(()) => {
            let _ = temp.keep();
        }
        // Another deployment unpacked the same layer meanwhile: use that one.
        Err(_) if dir.is_dir() => {}
        Err(e) => return Err(e.into()),
    }
    Ok(dir)
}

/// Unpacks a layer tar into `root`; entries are confined to `root` (`unpack_in` refuses `..`
/// and paths through symbolic links that leave it).
fn unpack(reader: impl Read, root: &Path) -> Result<(), RuntimeError> {
    let mut archive = tar::Archive::new(reader);
    archive.set_preserve_permissions(true);
    archive.set_overwrite(true);
    for entry in archive.entries()? {
        let mut entry = entry?;
        entry.unpack_in(root)?;
    }
    Ok(())
}

/// Adds the unpacked layer `layer` to the tree at `root`, replacing what lower layers put at
/// the same paths.
pub fn assemble(layer: &Path, root: &Path) -> std::io::Result<()> {
    let mut stack = vec![(layer.to_path_buf(), root.to_path_buf(), false)];
    while let Some((from, to, shared)) = stack.pop() {
        let meta = std::fs::symlink_metadata(&from)?;
        if meta.is_dir() {
            std::fs::create_dir_all(&to)?;
            std::fs::set_permissions(&to, meta.permissions())?;
            for entry in std::fs::read_dir(&from)? {
                let entry = entry?;
                let name = entry.file_name();
                let shared = shared || SHARED_DIRS.iter().any(|d| name == *d);
                stack.push((entry.path(), to.join(&name), shared));
            }
            continue;
        }
        if std::fs::symlink_metadata(&to).is_ok() {
            if std::fs::symlink_metadata(&to)?.is_dir() {
                std::fs::remove_dir_all(&to)?;
            } else {
                std::fs::remove_file(&to)?;
            }
        }
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
        } else if shared {
            std::fs::hard_link(&from, &to)?;
        } else {
            std::fs::copy(&from, &to)?;
        }
    }
    Ok(())
}

/// Removes the unpacked layers whose blob is no longer in `store` (after a retention pass);
/// returns how many.
pub fn prune(data_dir: &Path, store: &ImageStore) -> std::io::Result<usize> {
    let Ok(entries) = std::fs::read_dir(data_dir.join(LAYERS_DIR)) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let keep =
            Digest::parse(&format!("sha256:{name}")).is_ok_and(|d| store.blob_path(&d).exists());
        if !keep {
            std::fs::remove_dir_all(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;

    use super::*;

    #[test]
    fn dependencies_are_shared_and_the_apps_files_are_copies() {
        let dir = tempfile::tempdir().unwrap();
        let (lower, upper, root) = (
            dir.path().join("l"),
            dir.path().join("u"),
            dir.path().join("r"),
        );
        std::fs::create_dir_all(lower.join("app/.venv/lib")).unwrap();
        std::fs::write(lower.join("app/.venv/lib/pkg.py"), "pkg").unwrap();
        std::fs::write(lower.join("app/main.py"), "v1").unwrap();
        std::os::unix::fs::symlink("/usr/bin/python3", lower.join("app/.venv/python")).unwrap();
        std::fs::create_dir_all(upper.join("app")).unwrap();
        std::fs::write(upper.join("app/main.py"), "v2").unwrap();

        assemble(&lower, &root).unwrap();
        assemble(&upper, &root).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("app/main.py")).unwrap(),
            "v2"
        );
        let shared = std::fs::metadata(root.join("app/.venv/lib/pkg.py")).unwrap();
        let cached = std::fs::metadata(lower.join("app/.venv/lib/pkg.py")).unwrap();
        assert_eq!(shared.ino(), cached.ino(), "a hard link");
        assert_eq!(
            std::fs::read_link(root.join("app/.venv/python")).unwrap(),
            Path::new("/usr/bin/python3")
        );
        // The app writing its own file leaves the cached layer alone.
        std::fs::write(root.join("app/main.py"), "changed at run time").unwrap();
        assert_eq!(
            std::fs::read_to_string(upper.join("app/main.py")).unwrap(),
            "v2"
        );
    }
}
