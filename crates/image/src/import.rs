//! Prebuilt images: an `oci-archive` tar (what `buildah push <image> oci-archive:<file>` or
//! `podman save --format oci-archive` writes — an OCI image layout in one tar) is unpacked
//! into a scratch directory, accepting only the layout's own files, so a hostile archive
//! cannot write anywhere else. A `docker save` archive is converted to such a layout
//! ([`crate::docker_archive`]). The layout is then imported like a buildah export: every
//! blob checked against its digest, the manifest signed.

use std::path::{Component, Path, PathBuf};

pub use crate::archive::MAX_ENTRIES;
use crate::archive::file_entries;
use crate::digest::{Digest, ImageError};
use crate::docker_archive;

/// Files Docker 25 and later write next to an OCI layout in `docker save` archives; an
/// OCI archive may hold them, and they are ignored.
const DOCKER_EXTRAS: &[&str] = &["manifest.json", "repositories"];

/// What an uploaded image archive turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// An OCI image layout (`oci-layout`, `index.json`, `blobs/`).
    Oci,
    /// A `docker save` archive (`manifest.json`, config JSON, layer tars).
    Docker,
}

impl ArchiveFormat {
    /// The name build rows record as the context encoding.
    pub fn name(self) -> &'static str {
        match self {
            Self::Oci => "oci-archive",
            Self::Docker => "docker-archive",
        }
    }
}

/// Tells the format of the tar at `archive` by its entry names: an `oci-layout` or
/// `index.json` makes it OCI (Docker 25+ archives hold both layouts and are read as OCI),
/// otherwise it is read as a docker-archive (whose errors name both formats).
pub fn sniff(archive: &Path) -> Result<ArchiveFormat, ImageError> {
    let not_tar = |e: std::io::Error| ImageError::Document(format!("not a tar archive: {e}"));
    let file = std::fs::File::open(archive)?;
    let mut tar = tar::Archive::new(std::io::BufReader::new(file));
    for entry in tar.entries().map_err(not_tar)?.take(MAX_ENTRIES) {
        let entry = entry.map_err(not_tar)?;
        let path = entry.path().map_err(not_tar)?;
        let name = path.strip_prefix("./").unwrap_or(&path);
        if name == Path::new("oci-layout") || name == Path::new("index.json") {
            return Ok(ArchiveFormat::Oci);
        }
    }
    Ok(ArchiveFormat::Docker)
}

/// Makes the OCI layout of the image archive at `archive` (either format) in `dest`, an
/// empty directory; a docker-archive is unpacked in a scratch directory beside `dest`.
pub fn unpack_image_archive(archive: &Path, dest: &Path) -> Result<ArchiveFormat, ImageError> {
    let format = sniff(archive)?;
    match format {
        ArchiveFormat::Oci => unpack_oci_archive(archive, dest)?,
        ArchiveFormat::Docker => {
            let parent = dest.parent().unwrap_or(dest);
            let scratch = tempfile::Builder::new()
                .prefix(".docker-archive-")
                .tempdir_in(parent)?;
            docker_archive::convert(archive, scratch.path(), dest)?;
        }
    }
    Ok(format)
}

/// Unpacks the OCI layout in the tar at `archive` into `dest` (an empty directory). Only
/// `oci-layout`, `index.json` and `blobs/sha256/<64 hex>` regular files are accepted
/// (directories are skipped); any other entry — a link, a device, a path outside those — is
/// an error naming it.
pub fn unpack_oci_archive(archive: &Path, dest: &Path) -> Result<(), ImageError> {
    let file = std::fs::File::open(archive)?;
    let mut tar = tar::Archive::new(std::io::BufReader::new(file));
    std::fs::create_dir_all(dest.join("blobs/sha256"))?;
    for entry in file_entries(&mut tar)? {
        let mut file = entry?;
        let Some(relative) = layout_path(&file.path) else {
            if DOCKER_EXTRAS
                .iter()
                .any(|x| file.path.strip_prefix("./").unwrap_or(&file.path) == Path::new(x))
            {
                continue;
            }
            return Err(ImageError::Document(format!(
                "{} is not part of an OCI image layout (only oci-layout, index.json and \
                 blobs/sha256/<digest> may be in the archive)",
                file.path.display()
            )));
        };
        if !file.kind.is_file() {
            return Err(ImageError::Document(format!(
                "{} must be a regular file",
                file.path.display()
            )));
        }
        let mut out = std::fs::File::create(dest.join(relative))?;
        std::io::copy(&mut file.content, &mut out)?;
    }
    if !dest.join("index.json").is_file() {
        return Err(ImageError::Document(
            "the archive has no index.json; it is not an OCI image layout (save the image with \
             `podman save --format oci-archive` or `buildah push IMAGE oci-archive:FILE`)"
                .into(),
        ));
    }
    Ok(())
}

/// The layout file an archive path stands for (`./` prefixes allowed), if it is one.
fn layout_path(raw: &Path) -> Option<PathBuf> {
    let parts: Vec<&str> = raw
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect::<Option<_>>()?;
    match parts.as_slice() {
        ["oci-layout"] | ["index.json"] => Some(PathBuf::from(parts[0])),
        ["blobs", "sha256", hex] => {
            Digest::parse(&format!("sha256:{hex}")).ok()?;
            Some(PathBuf::from("blobs/sha256").join(hex))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_layout_files_are_accepted() {
        let hex = "a".repeat(64);
        assert_eq!(
            layout_path(Path::new(&format!("./blobs/sha256/{hex}"))),
            Some(PathBuf::from(format!("blobs/sha256/{hex}")))
        );
        assert_eq!(
            layout_path(Path::new("index.json")),
            Some(PathBuf::from("index.json"))
        );
        for bad in [
            "../index.json",
            "/index.json",
            "blobs/sha256/../../x",
            "blobs/sha256/abc",
            "etc/passwd",
        ] {
            assert_eq!(layout_path(Path::new(bad)), None, "{bad}");
        }
    }

    #[test]
    fn both_formats_refuse_an_archive_over_the_entry_limit() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("many.tar");
        let mut tar = tar::Builder::new(std::fs::File::create(&archive).unwrap());
        // Directories are skipped, but they count.
        for i in 0..=MAX_ENTRIES {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Directory);
            header.set_size(0);
            header.set_mode(0o755);
            tar.append_data(&mut header, format!("d{i}/"), std::io::empty())
                .unwrap();
        }
        tar.into_inner().unwrap();
        let oci = unpack_oci_archive(&archive, &dir.path().join("oci")).unwrap_err();
        std::fs::create_dir(dir.path().join("raw")).unwrap();
        let docker = docker_archive::convert(
            &archive,
            &dir.path().join("raw"),
            &dir.path().join("layout"),
        )
        .unwrap_err();
        for e in [oci, docker] {
            assert!(e.to_string().contains("more than 10000 entries"), "{e}");
        }
    }
}
