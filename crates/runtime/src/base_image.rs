//! Base images without a registry: `slipway platform images import` puts an image the
//! platform cannot pull into the local image storage that buildah and podman share, under the
//! name a Dockerfile's `FROM` uses, so the templates' Dockerfiles build unchanged on machines
//! that reach no image registry (behind a firewall, or this project's CI).
//!
//! Three kinds of file are taken, told apart by their entries: an OCI archive (`oci-layout`,
//! `index.json`: `podman save --format oci-archive`, `buildah push … oci-archive:`), a
//! docker archive (`manifest.json`: `docker save`), or anything else as a root file system
//! tarball (plain or compressed, as `debootstrap` + `tar` or a distribution's rootfs
//! download make), which becomes a one-layer image with the configuration given.

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// What a file to import holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An OCI image layout in a tar.
    OciArchive,
    /// A `docker save` archive.
    DockerArchive,
    /// A root file system.
    RootFs,
}

impl Source {
    /// The transport buildah pulls it with (`oci-archive`, `docker-archive`), if an archive.
    fn transport(self) -> Option<&'static str> {
        match self {
            Self::OciArchive => Some("oci-archive"),
            Self::DockerArchive => Some("docker-archive"),
            Self::RootFs => None,
        }
    }

    /// In words, for the report.
    pub fn name(self) -> &'static str {
        match self {
            Self::OciArchive => "OCI archive",
            Self::DockerArchive => "docker archive",
            Self::RootFs => "root file system tarball",
        }
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file cannot be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The name to tag with is not an image reference.
    #[error(
        "--tag {0:?} is not an image name (for example python:3.12-slim or registry.example/team/base:1)"
    )]
    Tag(String),
    /// A configuration entry is malformed.
    #[error("{0}")]
    Config(String),
    /// buildah refused a step.
    #[error("{0}")]
    Buildah(String),
}

/// Tells what `path` holds from its first entries (a compressed file is a root file system:
/// image archives are plain tars).
pub fn detect(path: &Path) -> Result<Source, ImportError> {
    let read_error = |error| ImportError::Read {
        path: path.display().to_string(),
        error,
    };
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let mut magic = [0u8; 4];
    let n = file.read(&mut magic).map_err(read_error)?;
    let compressed = n >= 2
        && (magic[..2] == [0x1f, 0x8b]
            || magic[..n.min(4)] == [0x28, 0xb5, 0x2f, 0xfd][..n.min(4)]
            || magic[..n.min(3)] == *b"BZh"
            || magic[..n.min(4)] == [0xfd, b'7', b'z', b'X'][..n.min(4)]);
    if compressed {
        return Ok(Source::RootFs);
    }
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut tar = tar::Archive::new(std::io::BufReader::new(file));
    let entries = tar.entries().map_err(read_error)?;
    let mut docker = false;
    // An image archive's metadata comes first or near it; a root file system's top level
    // never holds these names.
    for entry in entries.take(64) {
        let Ok(entry) = entry else { break };
        let Ok(name) = entry.path() else { continue };
        let name = name.strip_prefix("./").unwrap_or(&name).to_path_buf();
        if name == Path::new("oci-layout") || name == Path::new("index.json") {
            return Ok(Source::OciArchive);
        }
        docker |= name == Path::new("manifest.json");
    }
    Ok(if docker {
        Source::DockerArchive
    } else {
        Source::RootFs
    })
}

/// The fully qualified name buildah and podman resolve a short `FROM` name to
/// (`python:3.12-slim` → `docker.io/library/python:3.12-slim`), so the image is found
/// whatever short-name policy the machine has.
pub fn qualify(tag: &str) -> Result<String, ImportError> {
    let bad = || ImportError::Tag(tag.to_owned());
    if tag.is_empty()
        || tag.len() > 255
        || !tag
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/:@".contains(c))
        || tag.starts_with(['/', ':', '.', '-'])
        || tag.ends_with(['/', ':'])
        || tag.contains("//")
    {
        return Err(bad());
    }
    let (first, rest) = match tag.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (tag, None),
    };
    let has_registry =
        rest.is_some() && (first.contains('.') || first.contains(':') || first == "localhost");
    let qualified = match (has_registry, rest) {
        (true, _) => tag.to_owned(),
        (false, Some(_)) => format!("docker.io/{tag}"),
        (false, None) => format!("docker.io/library/{tag}"),
    };
    let last = qualified.rsplit('/').next().unwrap_or_default();
    if last.split(':').count() > 2 || last.starts_with(':') {
        return Err(bad());
    }
    Ok(if last.contains(':') || last.contains('@') {
        qualified
    } else {
        format!("{qualified}:latest")
    })
}

/// What [`import`] did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Imported {
    /// The name the image now has (fully qualified).
    pub image: String,
    /// buildah's image id.
    pub id: String,
    /// What the file was.
    pub source: &'static str,
}

/// How a root file system becomes an image: its environment and command.
#[derive(Debug, Clone, Default)]
pub struct RootFsConfig {
    /// `NAME=value` entries; `PATH` gets the usual default unless given.
    pub env: Vec<String>,
    /// The default command (a shell-words list), if any.
    pub cmd: Option<String>,
}

/// The `PATH` of an image made from a root file system unless one is given.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Imports `file` as `tag` into buildah's local storage (shared with podman); blocking.
/// Errors change nothing that was there: the working container is removed and the tag is
/// only set once the image is complete.
pub fn import(file: &Path, tag: &str, config: &RootFsConfig) -> Result<Imported, ImportError> {
    let image = qualify(tag)?;
    for entry in &config.env {
        match entry.split_once('=') {
            Some((name, _))
                if !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {}
            _ => {
                return Err(ImportError::Config(format!(
                    "--env {entry:?} must be NAME=value"
                )));
            }
        }
    }
    let source = detect(file)?;
    let path = file
        .canonicalize()
        .map_err(|error| ImportError::Read {
            path: file.display().to_string(),
            error,
        })?
        .display()
        .to_string();
    let id = match source.transport() {
        Some(transport) => {
            let out = buildah(&["pull", "--quiet", &format!("{transport}:{path}")])?;
            let id = out.lines().last().unwrap_or_default().trim().to_owned();
            buildah(&["tag", &id, &image])?;
            id
        }
        None => {
            let container = buildah(&["from", "scratch"])?.trim().to_owned();
            let made = (|| {
                buildah(&["add", &container, &path, "/"])?;
                let mut args: Vec<String> = vec!["config".into()];
                if !config.env.iter().any(|e| e.starts_with("PATH=")) {
                    args.extend(["--env".into(), format!("PATH={DEFAULT_PATH}")]);
                }
                for entry in &config.env {
                    args.extend(["--env".into(), entry.clone()]);
                }
                if let Some(cmd) = &config.cmd {
                    args.extend(["--cmd".into(), cmd.clone()]);
                }
                args.extend([
                    "--label".into(),
                    "org.slipway.imported-from=rootfs".into(),
                    container.clone(),
                ]);
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                buildah(&refs)?;
                buildah(&["commit", "--quiet", &container, &image])
            })();
            let _ = buildah(&["rm", &container]);
            made?.trim().to_owned()
        }
    };
    Ok(Imported {
        image,
        id,
        source: source.name(),
    })
}

/// Runs `buildah args…`; its stdout, or an error naming the command and its last words.
fn buildah(args: &[&str]) -> Result<String, ImportError> {
    let output = Command::new("buildah")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            ImportError::Buildah(format!(
                "`buildah {}` could not run ({e}); importing base images needs buildah",
                args.join(" ")
            ))
        })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    Err(ImportError::Buildah(format!(
        "`buildah {}` failed: {}",
        args.join(" "),
        tail[tail.len().saturating_sub(3)..].join(" | ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_qualify_as_a_from_line_resolves_them() {
        assert_eq!(
            qualify("python:3.12-slim").unwrap(),
            "docker.io/library/python:3.12-slim"
        );
        assert_eq!(qualify("node").unwrap(), "docker.io/library/node:latest");
        assert_eq!(qualify("team/base:1").unwrap(), "docker.io/team/base:1");
        assert_eq!(
            qualify("registry.example:5000/team/base:1").unwrap(),
            "registry.example:5000/team/base:1"
        );
        assert_eq!(qualify("localhost/x").unwrap(), "localhost/x:latest");
        for bad in ["", "Python", "a b", "x:", ":1", "a//b", "x:1:2", "/x"] {
            assert!(qualify(bad).is_err(), "{bad:?}");
        }
    }

    fn tar_with(names: &[&str]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut tar = tar::Builder::new(file.reopen().unwrap());
        for name in names {
            let mut header = tar::Header::new_gnu();
            header.set_size(2);
            header.set_mode(0o644);
            tar.append_data(&mut header, name, &b"{}"[..]).unwrap();
        }
        tar.finish().unwrap();
        file
    }

    #[test]
    fn the_kind_of_file_is_told_by_its_entries() {
        let oci = tar_with(&["oci-layout", "index.json"]);
        assert_eq!(detect(oci.path()).unwrap(), Source::OciArchive);
        let docker = tar_with(&["abc.json", "manifest.json"]);
        assert_eq!(detect(docker.path()).unwrap(), Source::DockerArchive);
        let rootfs = tar_with(&["./bin/sh", "./etc/os-release"]);
        assert_eq!(detect(rootfs.path()).unwrap(), Source::RootFs);
        let gz = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(gz.path(), [0x1f, 0x8b, 8, 0]).unwrap();
        assert_eq!(detect(gz.path()).unwrap(), Source::RootFs);
        assert!(matches!(
            detect(Path::new("/nonexistent/x.tar")),
            Err(ImportError::Read { .. })
        ));
    }
}
