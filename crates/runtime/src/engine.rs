//! The container engine's command line (podman or docker, which take the same arguments for
//! everything used here): finding it, running its commands with errors that name the
//! command, writing an image of the store as an archive both engines `load`, and the
//! start-up probe that proves the engine can run a container at all.
//!
//! The probe does not need a registry or a binary inside an image: it loads an image with an
//! empty layer and runs a command that does not exist in it. An engine that can run
//! containers gets as far as looking the command up and fails with exit code 127 naming it;
//! one that cannot (no daemon, no privileges — `crun: setrlimit … Operation not permitted`
//! in unprivileged sandboxes) fails earlier, differently, and the server refuses to start.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;

use slipway_image::oci::{
    CONFIG_MEDIA_TYPE, Descriptor, INDEX_MEDIA_TYPE, Index, MANIFEST_MEDIA_TYPE, Manifest,
    REF_NAME_ANNOTATION, oci_architecture,
};
use slipway_image::store::to_json;
use slipway_image::{Digest, ImageError, ImageStore};

/// The command the probe runs: absent from the probe image on purpose.
pub const PROBE_COMMAND: &str = "/slipway-probe-missing";
/// Exit code of podman and docker when a container's command does not exist: the container
/// was created and started, so the engine can run containers.
pub const COMMAND_NOT_FOUND: i32 = 127;
/// The tag prefix of images the platform loads.
pub use crate::build::IMAGE_HOST as IMAGE_PREFIX;

/// A container engine's CLI.
#[derive(Debug, Clone)]
pub struct Engine {
    program: PathBuf,
}

impl Engine {
    /// `explicit` (a name on `PATH` or a path), else `podman`, else `docker`, whichever
    /// answers `--version`.
    pub fn find(explicit: Option<&Path>) -> Result<Self, String> {
        let candidates: Vec<PathBuf> = match explicit {
            Some(p) => vec![p.to_path_buf()],
            None => vec!["podman".into(), "docker".into()],
        };
        let mut tried = Vec::new();
        for program in candidates {
            let engine = Self { program };
            match engine.run(&["--version"]) {
                Ok(_) => return Ok(engine),
                Err(e) => tried.push(e),
            }
        }
        Err(format!(
            "the container runtime needs podman or docker, and none runs here: {}",
            tried.join("; ")
        ))
    }

    /// The program's file name (`podman`, `docker`), for messages.
    pub fn name(&self) -> String {
        self.program.file_name().map_or_else(
            || self.program.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// A command of the engine, its environment inherited (the CLI needs `HOME`,
    /// `XDG_RUNTIME_DIR`, `DOCKER_HOST`, …).
    pub fn command(&self) -> Command {
        Command::new(&self.program)
    }

    /// The same, for async use.
    pub fn async_command(&self) -> tokio::process::Command {
        tokio::process::Command::new(&self.program)
    }

    /// `engine args…` as written in messages, with the program as given.
    pub fn display(&self, args: &[&str]) -> String {
        format!("{} {}", self.program.display(), args.join(" "))
    }

    /// Runs `engine args…` to completion; an error names the command, its exit status and
    /// the last lines of its stderr.
    pub fn run(&self, args: &[&str]) -> Result<Output, String> {
        let output = self
            .command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("`{}` could not run: {e}", self.display(args)))?;
        if output.status.success() {
            Ok(output)
        } else {
            Err(format!(
                "`{}` failed ({}): {}",
                self.display(args),
                status_text(&output),
                stderr_tail(&output)
            ))
        }
    }

    /// Proves the engine can run a container (see the module documentation); the error says
    /// what was tried and what the engine answered.
    pub fn probe(&self, scratch: &Path) -> Result<(), String> {
        self.run(&["info"])
            .map_err(|e| format!("{e}; the engine is not usable"))?;
        let store_dir = tempfile::Builder::new()
            .prefix(".engine-probe-")
            .tempdir_in(scratch)
            .map_err(|e| {
                format!(
                    "cannot make a scratch directory in {}: {e}",
                    scratch.display()
                )
            })?;
        let reference = format!("{IMAGE_PREFIX}/probe:{}", uuid::Uuid::new_v4().simple());
        let archive = store_dir.path().join("probe.tar");
        probe_image(store_dir.path(), &reference, &archive)
            .map_err(|e| format!("cannot write the probe image: {e}"))?;
        let archive_arg = archive.display().to_string();
        self.run(&["load", "-i", &archive_arg])?;
        let args = [
            "run",
            "--rm",
            "--network",
            "none",
            &reference,
            PROBE_COMMAND,
        ];
        let ran = self
            .command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("`{}` could not run: {e}", self.display(&args)));
        let _ = self.run(&["rmi", "-f", &reference]);
        let ran = ran?;
        let stderr = String::from_utf8_lossy(&ran.stderr);
        if ran.status.code() == Some(COMMAND_NOT_FOUND) && stderr.contains(PROBE_COMMAND) {
            return Ok(());
        }
        Err(format!(
            "{} cannot run containers here: after loading an empty probe image, `{}` was \
             expected to fail with exit code {COMMAND_NOT_FOUND} naming the missing command \
             (which shows a container started), but it ended with {}: {}",
            self.name(),
            self.display(&args),
            status_text(&ran),
            stderr_tail(&ran)
        ))
    }
}

fn status_text(output: &Output) -> String {
    match output.status.code() {
        Some(code) => format!("exit code {code}"),
        None => "killed by a signal".into(),
    }
}

fn stderr_tail(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    if tail.is_empty() {
        "(no message)".into()
    } else {
        tail
    }
}

/// Writes the probe image — one empty layer, a config without a command — into a store at
/// `dir` and as an archive at `archive`.
fn probe_image(dir: &Path, reference: &str, archive: &Path) -> Result<(), ImageError> {
    let store = ImageStore::open(dir)?;
    let layer = tar::Builder::new(Vec::new()).into_inner()?;
    let (layer_digest, _) = store.put_bytes(&layer)?;
    let config = to_json(&json!({
        "architecture": oci_architecture(),
        "os": "linux",
        "config": {},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest.as_str()]},
    }))?;
    let (config_digest, _) = store.put_bytes(&config)?;
    let manifest = Manifest {
        schema_version: 2,
        media_type: MANIFEST_MEDIA_TYPE.into(),
        config: descriptor(CONFIG_MEDIA_TYPE, &config_digest, config.len()),
        layers: vec![descriptor(
            slipway_image::docker_archive::LAYER_TAR_MEDIA_TYPE,
            &layer_digest,
            layer.len(),
        )],
        annotations: Default::default(),
    };
    let (digest, _) = store.put_bytes(&to_json(&manifest)?)?;
    write_archive(&store, &digest, reference, archive)
}

fn descriptor(media_type: &str, digest: &Digest, size: usize) -> Descriptor {
    Descriptor {
        media_type: media_type.into(),
        digest: digest.to_string(),
        size: size as u64,
        annotations: Default::default(),
    }
}

/// Writes image `digest` of `store` as one tar that both engines load under `reference`:
/// an OCI layout whose `index.json` names it (what podman reads) and a `manifest.json` with
/// `RepoTags` over the same blobs (what docker reads), as Docker 25 itself writes.
pub fn write_archive(
    store: &ImageStore,
    digest: &Digest,
    reference: &str,
    archive: &Path,
) -> Result<(), ImageError> {
    let manifest_bytes = store.read_blob(digest)?;
    let manifest = Manifest::parse(&manifest_bytes)?;
    let blob_name = |d: &Digest| format!("blobs/sha256/{}", d.hex());
    let config = Digest::parse(&manifest.config.digest)?;
    let layers = manifest
        .layers
        .iter()
        .map(|l| Digest::parse(&l.digest))
        .collect::<Result<Vec<_>, _>>()?;
    let mut entry = descriptor(MANIFEST_MEDIA_TYPE, digest, manifest_bytes.len());
    entry
        .annotations
        .insert(REF_NAME_ANNOTATION.into(), reference.into());
    let index = Index {
        schema_version: 2,
        media_type: INDEX_MEDIA_TYPE.into(),
        manifests: vec![entry],
    };
    let docker = json!([{
        "Config": blob_name(&config),
        "RepoTags": [reference],
        "Layers": layers.iter().map(blob_name).collect::<Vec<_>>(),
    }]);
    let file = std::io::BufWriter::new(std::fs::File::create(archive)?);
    let mut tar = tar::Builder::new(file);
    let mut add = |name: &str, bytes: &[u8]| -> std::io::Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o444);
        tar.append_data(&mut header, name, bytes)
    };
    add("oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#)?;
    add("index.json", &to_json(&index)?)?;
    add("manifest.json", &to_json(&docker)?)?;
    let mut seen = std::collections::HashSet::new();
    for blob in std::iter::once(digest).chain([&config]).chain(&layers) {
        if seen.insert(blob.clone()) {
            tar.append_path_with_name(store.blob_path(blob), blob_name(blob))?;
        }
    }
    tar.into_inner()?.flush()?;
    Ok(())
}
