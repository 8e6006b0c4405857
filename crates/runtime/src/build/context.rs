//! Build contexts: the compressed tar a client uploads (`application/zstd` for tar.zst,
//! `application/gzip` for tar.gz). One walk checks every entry — no absolute paths, no `..`,
//! no link pointing outside the context, no device or FIFO, bounded entry count and unpacked
//! size — and either reads the devfile (on upload) or unpacks into a clean directory (in the
//! build job). Nothing is held whole in memory.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Most entries a context may have.
pub const MAX_ENTRIES: u64 = 200_000;
/// Most bytes a context may unpack to (4 GiB), so a small upload cannot fill the disk.
pub const MAX_UNPACKED_BYTES: u64 = 4 << 30;
/// Largest devfile read.
pub const MAX_DEVFILE_BYTES: u64 = 1 << 20;
/// Largest Dockerfile read for the devfile's port check.
const MAX_DOCKERFILE_BYTES: u64 = 256 << 10;
/// Devfile names looked up at the context root, in this order (the devfile standard's).
pub const DEVFILE_NAMES: [&str; 4] = [
    "devfile.yaml",
    ".devfile.yaml",
    "devfile.yml",
    ".devfile.yml",
];

/// How the uploaded tar is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// tar.zst, `Content-Type: application/zstd`.
    Zstd,
    /// tar.gz, `Content-Type: application/gzip`.
    Gzip,
}

impl Encoding {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Zstd => "zstd",
            Encoding::Gzip => "gzip",
        }
    }

    /// The encoding a stored name stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "zstd" => Some(Encoding::Zstd),
            "gzip" => Some(Encoding::Gzip),
            _ => None,
        }
    }

    /// The encoding a `Content-Type` names (parameters ignored).
    pub fn from_content_type(raw: &str) -> Option<Self> {
        let essence = raw
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/zstd" | "application/x-zstd" => Some(Encoding::Zstd),
            "application/gzip" | "application/x-gzip" => Some(Encoding::Gzip),
            _ => None,
        }
    }

    /// The file-name suffix.
    pub fn extension(self) -> &'static str {
        match self {
            Encoding::Zstd => "tar.zst",
            Encoding::Gzip => "tar.gz",
        }
    }
}

/// Why a context was refused.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// The server could not read its own copy.
    #[error("i/o error: {0}")]
    Io(std::io::Error),
    /// Not a compressed tar of the announced kind.
    #[error("the context is not a valid {0}")]
    NotAnArchive(String),
    /// An entry's path or link is not allowed.
    #[error("entry {path:?}: {reason}")]
    Unsafe {
        /// The entry's path as written in the archive.
        path: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// Too many entries or too many bytes.
    #[error("{0}")]
    TooLarge(String),
    /// No devfile at the context root.
    #[error("no devfile.yaml (or .devfile.yaml) at the root of the context")]
    NoDevfile,
    /// The devfile is not UTF-8 or too large.
    #[error("{0}")]
    BadDevfile(String),
}

/// What an upload check found: the devfile and the small Dockerfiles the port check reads.
#[derive(Debug, Clone, Default)]
pub struct Inspected {
    /// The devfile text.
    pub devfile: String,
    /// Dockerfile-like files by normalised relative path.
    pub files: HashMap<String, String>,
}

impl slipway_devfile::ProjectFiles for Inspected {
    fn read(&self, relative_path: &str) -> Option<String> {
        let key = normalise_str(relative_path)?;
        self.files.get(&key).cloned()
    }
}

fn normalise_str(raw: &str) -> Option<String> {
    let path = normalise(Path::new(raw)).ok()??;
    Some(path.to_string_lossy().into_owned())
}

/// Checks an upload and returns its devfile (and Dockerfiles).
pub fn inspect(archive: &Path, encoding: Encoding) -> Result<Inspected, ContextError> {
    let mut found = Inspected::default();
    let mut devfiles: HashMap<&'static str, String> = HashMap::new();
    walk(archive, encoding, |entry, path| {
        if !entry.header().entry_type().is_file() {
            return Ok(());
        }
        let text_path = path.to_string_lossy().into_owned();
        if let Some(name) = DEVFILE_NAMES.iter().find(|n| **n == text_path) {
            if entry.size() > MAX_DEVFILE_BYTES {
                return Err(ContextError::BadDevfile(format!(
                    "{name} is larger than {MAX_DEVFILE_BYTES} bytes"
                )));
            }
            devfiles.insert(name, read_text(entry, name)?);
        } else if is_dockerfile(path)
            && entry.size() <= MAX_DOCKERFILE_BYTES
            && let Ok(text) = read_text(entry, &text_path)
        {
            found.files.insert(text_path, text);
        }
        Ok(())
    })?;
    found.devfile = DEVFILE_NAMES
        .iter()
        .find_map(|n| devfiles.remove(n))
        .ok_or(ContextError::NoDevfile)?;
    Ok(found)
}

/// Unpacks an (already inspected) upload into `dest`, an empty directory.
pub fn unpack(archive: &Path, encoding: Encoding, dest: &Path) -> Result<(), ContextError> {
    walk(archive, encoding, |entry, path| {
        let raw = path.display().to_string();
        match entry.unpack_in(dest) {
            Ok(true) => Ok(()),
            Ok(false) => Err(ContextError::Unsafe {
                path: raw,
                reason: "the path leaves the context",
            }),
            Err(e) => Err(ContextError::NotAnArchive(format!(
                "archive (cannot unpack {raw:?}: {e})"
            ))),
        }
    })
}

fn is_dockerfile(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|n| n.contains("dockerfile") || n.contains("containerfile"))
}

fn read_text(entry: &mut dyn Read, name: &str) -> Result<String, ContextError> {
    let mut text = String::new();
    entry
        .read_to_string(&mut text)
        .map_err(|_| ContextError::BadDevfile(format!("{name} is not UTF-8 text")))?;
    Ok(text)
}

fn open(archive: &Path, encoding: Encoding) -> Result<Box<dyn Read>, ContextError> {
    let file = std::io::BufReader::new(std::fs::File::open(archive).map_err(ContextError::Io)?);
    Ok(match encoding {
        Encoding::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(file)
                .map_err(|_| ContextError::NotAnArchive(encoding.extension().into()))?,
        ),
        Encoding::Gzip => Box::new(flate2::bufread::GzDecoder::new(file)),
    })
}

/// Walks every entry, checking each, and hands the accepted ones (with their normalised
/// relative path) to `visit`. The root entry (`.` / `./`) is skipped.
fn walk(
    archive: &Path,
    encoding: Encoding,
    mut visit: impl FnMut(&mut tar::Entry<'_, Box<dyn Read>>, &Path) -> Result<(), ContextError>,
) -> Result<(), ContextError> {
    let not_archive =
        |e: std::io::Error| ContextError::NotAnArchive(format!("{} ({e})", encoding.extension()));
    let mut tar = tar::Archive::new(open(archive, encoding)?);
    let mut count = 0u64;
    let mut bytes = 0u64;
    for entry in tar.entries().map_err(not_archive)? {
        let mut entry = entry.map_err(not_archive)?;
        count += 1;
        if count > MAX_ENTRIES {
            return Err(ContextError::TooLarge(format!(
                "the context has more than {MAX_ENTRIES} entries"
            )));
        }
        bytes = bytes.saturating_add(entry.size());
        if bytes > MAX_UNPACKED_BYTES {
            return Err(ContextError::TooLarge(format!(
                "the context unpacks to more than {MAX_UNPACKED_BYTES} bytes"
            )));
        }
        let raw_path = entry.path().map_err(not_archive)?.into_owned();
        let shown = raw_path.display().to_string();
        let unsafe_entry = |reason| ContextError::Unsafe {
            path: shown.clone(),
            reason,
        };
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() {
            continue;
        }
        let Some(path) = normalise(&raw_path).map_err(unsafe_entry)? else {
            continue;
        };
        if kind.is_symlink() || kind.is_hard_link() {
            let target = entry
                .link_name()
                .map_err(not_archive)?
                .ok_or_else(|| unsafe_entry("a link without a target"))?
                .into_owned();
            if kind.is_symlink() {
                check_symlink(&path, &target).map_err(unsafe_entry)?;
            } else if normalise(&target).map_err(unsafe_entry)?.is_none() {
                return Err(unsafe_entry("a hard link to the context root"));
            }
        } else if !(kind.is_file() || kind.is_dir() || kind.is_contiguous()) {
            return Err(unsafe_entry(
                "only files, directories and links are allowed in a context",
            ));
        }
        visit(&mut entry, &path)?;
    }
    Ok(())
}

/// The relative path with `.` components dropped; an error for absolute paths and `..`;
/// `None` for the root itself.
fn normalise(path: &Path) -> Result<Option<PathBuf>, &'static str> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(c) => out.push(c),
            Component::CurDir => {}
            Component::ParentDir => return Err("'..' is not allowed in a context path"),
            Component::RootDir | Component::Prefix(_) => {
                return Err("absolute paths are not allowed in a context");
            }
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// A symbolic link at `path` pointing to `target` must stay inside the context, resolved
/// lexically from the link's directory.
fn check_symlink(path: &Path, target: &Path) -> Result<(), &'static str> {
    let mut depth: Vec<Component<'_>> = path
        .parent()
        .map(|p| p.components().collect())
        .unwrap_or_default();
    for component in target.components() {
        match component {
            Component::Normal(_) => depth.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth.pop().is_none() {
                    return Err("a symbolic link pointing outside the context");
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err("a symbolic link to an absolute path");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_or_refused() {
        assert_eq!(
            normalise(Path::new("./a/./b")).unwrap(),
            Some(PathBuf::from("a/b"))
        );
        assert_eq!(normalise(Path::new("./")).unwrap(), None);
        assert!(normalise(Path::new("../evil")).is_err());
        assert!(normalise(Path::new("a/../../evil")).is_err());
        assert!(normalise(Path::new("/etc/passwd")).is_err());
    }

    #[test]
    fn symlinks_must_stay_inside() {
        assert!(check_symlink(Path::new("a/link"), Path::new("../b")).is_ok());
        assert!(check_symlink(Path::new("a/link"), Path::new("../../b")).is_err());
        assert!(check_symlink(Path::new("link"), Path::new("/etc/passwd")).is_err());
        assert!(check_symlink(Path::new("link"), Path::new("sub/./x")).is_ok());
    }

    #[test]
    fn content_types_name_the_encoding() {
        assert_eq!(
            Encoding::from_content_type("application/zstd"),
            Some(Encoding::Zstd)
        );
        assert_eq!(
            Encoding::from_content_type("Application/GZIP; charset=binary"),
            Some(Encoding::Gzip)
        );
        assert_eq!(Encoding::from_content_type("application/json"), None);
        for e in [Encoding::Zstd, Encoding::Gzip] {
            assert_eq!(Encoding::parse(e.as_str()), Some(e));
        }
    }
}
