//! Image builds: upload checks and unpacking ([`context`]) and the two builders ([`native`],
//! [`buildah`]), each taking one [`Job`]. The job runner that moves jobs through
//! queued → in_progress → succeeded | failed | cancelled is the platform's (`jobs.rs` in
//! `slipway-platform`), which keeps the jobs in its database. Build commands run in their own
//! process group with their output appended to the build log, so a cancel kills the whole
//! tree and the log fills while the build runs.

pub mod buildah;
pub mod context;
pub mod native;
pub mod scrub;
pub mod trust;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use slipway_devfile::ServiceSpec;
use tokio_util::sync::CancellationToken;

use crate::pgroup::Group;
use context::{ContextError, Encoding};
use slipway_image::{Digest, ImageError, ImageStore, PlatformKey};

/// Longest a single build command may run before it is killed and the build fails.
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Host name part of every image URI the platform makes (defined with the engine, which this
/// module uses and which tags the images it loads with it).
pub use crate::engine::IMAGE_HOST;

/// Everything one job needs, gathered by the runner.
#[derive(Debug, Clone)]
pub struct Job {
    /// The build's id.
    pub build_id: String,
    /// The app's name (part of the image URI).
    pub app_name: String,
    /// The service to build.
    pub service: ServiceSpec,
    /// The uploaded context.
    pub context: PathBuf,
    /// Its compression.
    pub encoding: Encoding,
    /// The job's scratch directory, emptied before and removed after the build. It is the same
    /// path for every build of one service (`DATA_DIR/work/<app_id>/<service>`), so paths that
    /// tools bake into their output (virtual environments do) repeat and identical builds give
    /// identical images.
    pub work: PathBuf,
    /// Shared download caches (`DATA_DIR/cache`).
    pub cache: PathBuf,
    /// The build log.
    pub log: BuildLog,
    /// Cancelled by a cancel request or a server shutdown.
    pub cancel: CancellationToken,
    /// The CA bundle Dockerfile builds trust while they run (`--build-ca-bundle`, by default
    /// the host's), resolved at start-up; `None` builds with the image's own roots only.
    pub ca_bundle: Option<trust::CaBundle>,
}

/// An image a builder stored and signed.
#[derive(Debug, Clone)]
pub struct BuiltImage {
    /// The manifest digest.
    pub digest: Digest,
    /// `slipway.local/<app>/<service>@sha256:…`.
    pub image_uri: String,
}

/// The image URI of a manifest.
pub fn image_uri(app: &str, service: &str, digest: &Digest) -> String {
    format!("{IMAGE_HOST}/{app}/{service}@{digest}")
}

/// The store and key builders write into.
#[derive(Debug, Clone)]
pub struct Output {
    /// The blob store.
    pub store: ImageStore,
    /// The signing key.
    pub key: PlatformKey,
}

/// Why a build did not produce an image. The `Display` text becomes the build's `error`.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The context could not be unpacked.
    #[error("the build context could not be unpacked: {0}")]
    Context(#[from] ContextError),
    /// The devfile does not say how to build this service.
    #[error("{0}")]
    Spec(String),
    /// A command exited unsuccessfully.
    #[error("the {what} failed ({status}); see the build log")]
    Command {
        /// Which command (`build command`, `buildah build`, …).
        what: String,
        /// Its exit status.
        status: String,
    },
    /// A build command failed, and its log shows a TLS certificate failing verification:
    /// behind a TLS-inspecting proxy that is the proxy's CA missing from the build's trust.
    #[error(
        "the {what} failed verifying a TLS certificate ({line}): if a proxy inspects TLS here, pass --build-ca-bundle FILE with its CA (the host's bundle is used by default; it was: {bundle}); see the build log"
    )]
    CertificateVerify {
        /// Which command.
        what: String,
        /// The log line that says so, trimmed.
        line: String,
        /// The bundle the build had (`none` or its path).
        bundle: String,
    },
    /// A build that ran again without the host's CA bundle, because a `RUN` step replaces the
    /// image's bundle, then failed verifying a certificate: `--build-ca-bundle FILE` cannot
    /// help (it would be replaced too); the CA has to come from the Dockerfile.
    #[error(
        "the {what} failed verifying a TLS certificate ({line}) when built again without the host's CA bundle, because a RUN step installs or updates ca-certificates (which replaces the mounted bundle): if a proxy inspects TLS here, add its CA in the Dockerfile before that step (COPY it into /usr/local/share/ca-certificates/ and run update-ca-certificates), or install ca-certificates in the base image; see the build log"
    )]
    CertificateVerifyUnmounted {
        /// Which command.
        what: String,
        /// The log line that says so, trimmed.
        line: String,
    },
    /// A `RUN` step tried to replace the CA bundle that `--build-ca-bundle FILE` mounts over
    /// the image's (installing or updating `ca-certificates` does).
    #[error(
        "the {what} failed: a RUN step replaces {target} (installing or updating ca-certificates does), where the build mounts --build-ca-bundle {bundle}; install ca-certificates in the base image or add the CA in the Dockerfile, or pass --build-ca-bundle none; see the build log",
        target = trust::CA_TARGET
    )]
    BundleReplaced {
        /// Which command.
        what: String,
        /// The bundle's path.
        bundle: String,
    },
    /// Buildah cannot start: base images of the Dockerfile are neither on this machine nor
    /// pullable (no registry answers). `--builder auto` falls back to the native builder.
    #[error(
        "the Dockerfile's base images {} are not on this machine and cannot be pulled (no registry answered); import them where the platform runs (`slipway platform images import <archive or root file system tarball> --tag <name>`; `bash scripts/dev images` makes the templates' base images from Debian packages) or build with --builder native",
        .0.join(", ")
    )]
    BaseImagesMissing(Vec<String>),
    /// A command ran past [`BUILD_TIMEOUT`].
    #[error("the {what} did not finish within {minutes} minutes", what = .0, minutes = BUILD_TIMEOUT.as_secs() / 60)]
    TimedOut(String),
    /// Stopped by a cancel request or a shutdown.
    #[error("cancelled")]
    Cancelled,
    /// Storing or signing the image failed.
    #[error("storing the image failed: {0}")]
    Image(#[from] ImageError),
    /// A file operation failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// The append-only log of one build, `DATA_DIR/builds/<build_id>/log`.
#[derive(Debug, Clone)]
pub struct BuildLog {
    path: PathBuf,
}

impl BuildLog {
    /// The log of `build_id` under `data_dir`.
    pub fn new(data_dir: &Path, build_id: &str) -> Self {
        Self {
            path: data_dir
                .join(slipway_image::BUILDS_DIR)
                .join(build_id)
                .join("log"),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the file for appending, creating it and its directory.
    pub fn open(&self) -> std::io::Result<std::fs::File> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
    }

    /// How long the log is now (where the output of a command about to run starts).
    pub fn size(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Calls `each` with every line written from byte `from` on (lossily decoded, read a
    /// line at a time so a huge log is never held whole), until it returns `false`.
    pub fn scan_from(&self, from: u64, mut each: impl FnMut(&str) -> bool) -> std::io::Result<()> {
        use std::io::{BufRead as _, Seek as _};
        let mut file = std::fs::File::open(&self.path)?;
        file.seek(std::io::SeekFrom::Start(from))?;
        let mut reader = std::io::BufReader::new(file);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line)? > 0 {
            if !each(&String::from_utf8_lossy(&line)) {
                break;
            }
            line.clear();
        }
        Ok(())
    }

    /// Appends a `==> message` line (best effort: a log that cannot be written must not
    /// fail the build).
    pub fn note(&self, message: &str) {
        if let Ok(mut f) = self.open() {
            let _ = writeln!(f, "==> {message}");
        }
    }
}

/// Runs `command` in its own process group with stdin closed and stdout and stderr appended
/// to the build log, until it exits, the job is cancelled (the whole group is killed) or
/// [`BUILD_TIMEOUT`] passes. After a normal exit the group is killed too, so nothing a build
/// started in the background outlives it.
pub async fn run_logged(
    mut command: tokio::process::Command,
    what: &str,
    job: &Job,
) -> Result<(), BuildError> {
    let out = job.log.open()?;
    let err = out.try_clone()?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err));
    let mut group = Group::spawn(&mut command).map_err(|e| BuildError::Command {
        what: what.to_owned(),
        status: format!("could not start: {e}"),
    })?;
    let status: ExitStatus = tokio::select! {
        status = group.wait() => {
            group.kill();
            status?
        }
        () = job.cancel.cancelled() => {
            group.kill();
            let _ = group.wait().await;
            return Err(BuildError::Cancelled);
        }
        () = tokio::time::sleep(BUILD_TIMEOUT) => {
            group.kill();
            let _ = group.wait().await;
            return Err(BuildError::TimedOut(what.to_owned()));
        }
    };
    if status.success() {
        Ok(())
    } else {
        Err(BuildError::Command {
            what: what.to_owned(),
            status: status.to_string(),
        })
    }
}

/// Empties `job.work` and unpacks the context into `job.work/src`, which it returns.
pub async fn prepare_sources(job: &Job) -> Result<PathBuf, BuildError> {
    let work = job.work.clone();
    let context = job.context.clone();
    let encoding = job.encoding;
    let src = tokio::task::spawn_blocking(move || -> Result<PathBuf, BuildError> {
        if work.exists() {
            std::fs::remove_dir_all(&work)?;
        }
        let src = work.join("src");
        std::fs::create_dir_all(&src)?;
        context::unpack(&context, encoding, &src)?;
        Ok(src)
    })
    .await
    .map_err(|e| BuildError::Io(std::io::Error::other(e)))??;
    Ok(src)
}

/// A directory of the devfile (relative to the project root) inside `root`; an error when it
/// leaves the root or does not exist.
pub fn project_dir(root: &Path, relative: &str, what: &str) -> Result<PathBuf, BuildError> {
    let mut out = root.to_path_buf();
    for component in Path::new(relative).components() {
        match component {
            std::path::Component::Normal(c) => out.push(c),
            std::path::Component::CurDir => {}
            _ => {
                return Err(BuildError::Spec(format!(
                    "the {what} {relative:?} must be relative to the project root without '..'"
                )));
            }
        }
    }
    if !out.is_dir() {
        return Err(BuildError::Spec(format!(
            "the {what} {relative:?} is not a directory of the build context"
        )));
    }
    Ok(out)
}
