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

use std::ffi::OsString;
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
/// Host name part of every image URI the platform makes. Here, in the engine's module, which
/// both the builders and the container runtime use, rather than in `build`: the engine tags the
/// images it loads with it, and `build` uses the engine (`runs`), so the engine must not use
/// `build` (`slipway_runtime::build::IMAGE_HOST` re-exports it).
pub const IMAGE_HOST: &str = "slipway.local";
/// The tag prefix of images the platform loads.
pub const IMAGE_PREFIX: &str = IMAGE_HOST;

/// A container engine's CLI.
#[derive(Debug, Clone)]
pub struct Engine {
    program: PathBuf,
    /// Variables every command of the engine gets (`CONTAINERS_CONF` for podman).
    env: Vec<(OsString, OsString)>,
    /// What configuration is in use, for the start-up log.
    setup: String,
    /// Where its commands run: conmon leaves files (an `oom` marker among them) in its
    /// working directory, which must be the platform's, not wherever the server started.
    cwd: Option<PathBuf>,
}

/// The directory under DATA_DIR holding the engine configuration the platform passes.
pub const ENGINE_DIR: &str = "engine";

/// podman's configuration as the platform passes it (`CONTAINERS_CONF`), never the machine's
/// global files. `default_ulimits = []` lets containers inherit the platform's own limits:
/// podman's built-in default (`nofile=1048576`) exceeds the hard limit of hosts without
/// `CAP_SYS_RESOURCE`, where every container would fail to start. `runc` is named only when
/// the default runtime cannot run a container here (crun 1.8 refuses hosts that mix cgroup v1
/// and v2 controllers).
fn podman_conf(runtime: Option<&str>) -> String {
    let mut conf = String::from(
        "# Written by the Slipway platform; passed to podman as CONTAINERS_CONF.\n\
         [containers]\ndefault_ulimits = []\n",
    );
    if let Some(runtime) = runtime {
        conf.push_str(&format!("[engine]\nruntime = \"{runtime}\"\n"));
    }
    conf
}

/// Whether `program --version` runs.
pub fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
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
            let engine = Self {
                program,
                env: Vec::new(),
                setup: "its own configuration".into(),
                cwd: None,
            };
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
    /// `XDG_RUNTIME_DIR`, `DOCKER_HOST`, …) plus the platform's configuration.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
    }

    /// The same, for async use.
    pub fn async_command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
    }

    /// Makes the configuration that worked (one of [`Engine::candidates`]) the platform's
    /// `DATA_DIR/engine/containers.conf`, where a user finds it to look at the platform's
    /// containers (`CONTAINERS_CONF=… podman ps`), and removes the other candidates.
    pub fn settle(&mut self, data_dir: &Path) -> Result<(), String> {
        let dir = data_dir.join(ENGINE_DIR);
        let Some((_, file)) = self.env.iter_mut().find(|(k, _)| k == "CONTAINERS_CONF") else {
            return Ok(());
        };
        let chosen = PathBuf::from(file.clone());
        if chosen.parent() != Some(dir.as_path()) {
            return Ok(());
        }
        let settled = dir.join("containers.conf");
        std::fs::rename(&chosen, &settled)
            .map_err(|e| format!("cannot rename {}: {e}", chosen.display()))?;
        *file = settled.clone().into_os_string();
        self.setup = self.setup.replace(
            &chosen.display().to_string(),
            &settled.display().to_string(),
        );
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("probe-") && name.ends_with(".conf") {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }

    /// Which configuration is in use, in words.
    pub fn setup(&self) -> &str {
        &self.setup
    }

    /// The configurations to try, in order: for podman without a `CONTAINERS_CONF` of the
    /// user's, the platform's own file under `DATA_DIR/engine` (see [`podman_conf`]), then the
    /// same naming runc when runc is installed; otherwise the engine as it is.
    pub fn candidates(&self, data_dir: &Path) -> Result<Vec<Engine>, String> {
        let dir = data_dir.join(ENGINE_DIR);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut this = self.clone();
        this.cwd = Some(dir.clone());
        if self.name() != "podman" || std::env::var_os("CONTAINERS_CONF").is_some() {
            return Ok(vec![this]);
        }
        let mut out = Vec::new();
        let mut runtimes = vec![None];
        if runs("runc") {
            runtimes.push(Some("runc"));
        }
        for runtime in runtimes {
            let file = dir.join(match runtime {
                Some(r) => format!("probe-{r}.conf"),
                None => "probe-default.conf".into(),
            });
            slipway_server::file::write(
                &file,
                podman_conf(runtime).as_bytes(),
                slipway_server::file::Mode::Ordinary,
            )
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            let mut engine = this.clone();
            engine.env = vec![("CONTAINERS_CONF".into(), file.clone().into_os_string())];
            engine.setup = match runtime {
                Some(r) => format!("{} (OCI runtime {r})", file.display()),
                None => file.display().to_string(),
            };
            out.push(engine);
        }
        Ok(out)
    }

    /// `engine args…` as written in messages, with the program as given.
    pub fn display(&self, args: &[&str]) -> String {
        format!("{} {}", self.program.display(), args.join(" "))
    }

    /// Runs `engine args…` to completion; an error names the command, its exit status and
    /// the last lines of its stderr.
    pub fn run(&self, args: &[&str]) -> Result<Output, String> {
        let ran = self.command().args(args).stdin(Stdio::null()).output();
        self.checked(args, ran)
    }

    /// The same, for async use: what an instance asks the engine while it runs (`inspect`,
    /// `stop`, `rm`).
    pub async fn run_async(&self, args: &[&str]) -> Result<Output, String> {
        let ran = self
            .async_command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .await;
        self.checked(args, ran)
    }

    /// What `engine args…` came to: its output when it ran and succeeded, else an error
    /// naming the command and what went wrong.
    fn checked(&self, args: &[&str], ran: std::io::Result<Output>) -> Result<Output, String> {
        let output = ran.map_err(|e| format!("`{}` could not run: {e}", self.display(args)))?;
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
