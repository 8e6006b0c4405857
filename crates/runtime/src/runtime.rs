//! The runtime backend trait: what the deployer needs from anything that can run a service's
//! image (the `process` backend, and the `container` backend on podman or docker). Preparing
//! an image (verify
//! its signature, unpack it) is separate from starting it, so restarts after a crash reuse
//! the unpacked tree.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use slipway_image::sign::VerifiedImage;
use slipway_image::{ImageError, ImageStore, verify_image};

/// A boxed future, so the trait stays object safe without an extra crate.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Directory of unpacked images inside the data directory. Here, beside
/// [`ImageRequest::run_dir`], rather than in `process`: every runtime prepares under it, and
/// the trait's module must not use a runtime that uses it.
pub const RUN_DIR: &str = "run";

/// How long a stopped service has between SIGTERM and SIGKILL: a process group's, and a
/// container's (`<engine> stop --time`). Shared, so both runtimes stop alike.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Which image to prepare, for which deployment.
#[derive(Debug, Clone)]
pub struct ImageRequest {
    /// The app's id.
    pub app_id: String,
    /// The service.
    pub service: String,
    /// The deployment.
    pub deployment_id: String,
    /// `sha256:…` of the image manifest.
    pub digest: String,
    /// The resources the service may use (the devfile's, else the platform's defaults).
    pub limits: Limits,
    /// The volumes mounted into it.
    pub volumes: Vec<VolumeMount>,
}

/// A volume mounted into a service: its data lives in `host` (in the platform's data
/// directory, one per app and volume) and the service sees it at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeMount {
    /// The volume's name in the devfile.
    pub name: String,
    /// Where its data is on this host.
    pub host: PathBuf,
    /// Where the service sees it (absolute).
    pub path: String,
}

impl ImageRequest {
    /// Where a runtime keeps what it prepares for this request:
    /// `DATA_DIR/run/<app_id>/<service>/<deployment_id>`.
    pub fn run_dir(&self, data_dir: &Path) -> PathBuf {
        data_dir
            .join(RUN_DIR)
            .join(&self.app_id)
            .join(&self.service)
            .join(&self.deployment_id)
    }

    /// The first step of every runtime's `prepare`: the image's platform signature is
    /// checked ([`verify_image`]) before the runtime reads anything of it, so nothing of an
    /// image that does not verify is unpacked or loaded.
    pub fn verify(&self, data_dir: &Path) -> Result<Verified, RuntimeError> {
        let image = verify_image(data_dir, &self.digest).map_err(RuntimeError::Signature)?;
        let store = ImageStore::open(data_dir).map_err(RuntimeError::Signature)?;
        Ok(Verified { image, store })
    }
}

/// An image whose signature verified, and the store that holds its blobs.
#[derive(Debug)]
pub struct Verified {
    /// Its manifest and config.
    pub image: VerifiedImage,
    /// The platform's image store.
    pub store: ImageStore,
}

/// Opens `log` for appending (creating it and its directory) as a command's stdout and
/// stderr, so that a service's output and the runtime's notes land in one file.
pub fn log_output(log: &Path) -> std::io::Result<(std::process::Stdio, std::process::Stdio)> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let err = out.try_clone()?;
    Ok((out.into(), err.into()))
}

/// An image path (`/app/data`) relative to the image's root: its normal components only,
/// without the root, `.` or `..` (so it can never leave the tree it is joined to).
pub fn relative(image_path: &str) -> PathBuf {
    Path::new(image_path)
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// Removes a run directory a runtime made ([`ImageRequest::run_dir`]), if there is one; a
/// failure is logged, not returned, since the deployment it belonged to is over either way.
pub fn remove_run_dir(root: &Path) {
    if root.exists()
        && let Err(e) = std::fs::remove_dir_all(root)
    {
        tracing::warn!(path = %root.display(), error = %e, "cannot remove a run directory");
    }
}

/// A service's resource limits, as the runtimes apply them: the container runtime through
/// the engine's cgroup limits; the process runtime cannot confine a process group this way
/// and says so in its documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Memory, in bytes (`memoryLimit`); swap is not added on top.
    pub memory_bytes: Option<u64>,
    /// CPU, in millicores (`cpuLimit`).
    pub cpu_millis: Option<u64>,
}

/// An image ready to start: its command, working directory and environment as the runtime
/// will use them.
#[derive(Debug, Clone)]
pub struct PreparedImage {
    /// Where the image's files are.
    pub root: PathBuf,
    /// `Entrypoint` followed by `Cmd`.
    pub command: Vec<String>,
    /// The working directory on this host.
    pub working_dir: PathBuf,
    /// The image's environment (`NAME`, `value`), paths mapped to this host.
    pub env: Vec<(String, String)>,
    /// Set by the container backend: how the engine knows the loaded image.
    pub container: Option<ContainerImage>,
    /// The volumes to mount (the request's).
    pub volumes: Vec<VolumeMount>,
}

/// A service's image as loaded into a container engine.
#[derive(Debug, Clone)]
pub struct ContainerImage {
    /// The engine's image name (`slipway.local/<app_id>/<service>:<deployment_id>`).
    pub reference: String,
    /// The deployment's network, on which the service's dependencies answer.
    pub network: String,
    /// The service's host name on that network (its name).
    pub alias: String,
    /// The request it was prepared for: labels and limits come from it.
    pub request: ImageRequest,
}

/// How one instance ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// The exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// A human-readable description (`exit code 1`, `signal 9`).
    pub description: String,
}

impl Exit {
    /// An instance whose end could not be waited for.
    pub fn wait_failed(error: &std::io::Error) -> Self {
        Self {
            code: None,
            description: format!("wait failed: {error}"),
        }
    }
}

/// Why a runtime could not prepare or start an image.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The image's signature or content does not verify: it must not run.
    #[error("the image failed signature verification: {0}")]
    Signature(ImageError),
    /// The image cannot run on this backend.
    #[error("{0}")]
    Unsupported(String),
    /// The process could not be started.
    #[error("could not start {what}: {error}")]
    Start {
        /// The command.
        what: String,
        /// Why.
        error: std::io::Error,
    },
    /// The container engine refused a command.
    #[error("{0}")]
    Engine(String),
    /// A file operation failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// A running instance of a service.
pub trait Instance: Send {
    /// The OS process id, if the backend has one.
    fn pid(&self) -> Option<u32>;
    /// Whether it is still running.
    fn is_alive(&mut self) -> bool;
    /// Waits until it exits on its own (cancel safe).
    fn wait(&mut self) -> BoxFuture<'_, Exit>;
    /// Stops it (politely, then forcibly) and reaps it.
    fn stop(&mut self) -> BoxFuture<'_, ()>;
}

/// A runtime backend.
pub trait Runtime: Send + Sync + std::fmt::Debug {
    /// The backend's name (`process`).
    fn name(&self) -> &'static str;
    /// Verifies and unpacks an image (blocking: call it off the async threads). Refuses an
    /// image whose signature does not verify.
    fn prepare(&self, request: &ImageRequest) -> Result<PreparedImage, RuntimeError>;
    /// Starts one instance with `extra_env` on top of the image's environment, its output
    /// appended to `log`.
    fn start(
        &self,
        image: &PreparedImage,
        extra_env: &[(String, String)],
        log: &Path,
    ) -> Result<Box<dyn Instance>, RuntimeError>;
    /// Removes what [`Runtime::prepare`] made for a deployment's service.
    fn discard(&self, request: &ImageRequest);
    /// Stops what a previous run of the server left running when it died without stopping
    /// its services (killed, crashed, power cut), before the deployer brings apps back: no
    /// service ever runs twice. Returns how many were stopped.
    fn reap_orphans(&self) -> usize {
        0
    }
    /// Removes whatever the backend still holds for an app that is being deleted (the
    /// container backend: every container and network labelled with the app, whoever made
    /// them). Blocking.
    fn remove_app(&self, app_id: &str) {
        let _ = app_id;
    }
    /// The base URL a service reaches its dependency `service` on `port` at (`<DEP>_URL`):
    /// loopback for processes on this host; a container needs the dependency's name on the
    /// deployment's network instead, since its own loopback is not the host's.
    fn dependency_url(&self, service: &str, port: u16) -> String {
        let _ = service;
        format!("http://127.0.0.1:{port}")
    }
    /// The address an app's services reach this host's backing servers at, when it is not
    /// loopback (`None`): a container's loopback is its own, so the container backend gives
    /// the gateway of the app's network, where the platform relays each server. Blocking
    /// (the network is made if it is not there yet).
    fn host_address(&self, app_id: &str) -> Result<Option<std::net::IpAddr>, RuntimeError> {
        let _ = app_id;
        Ok(None)
    }
}
/// What an OCI image config (its `config` object) says to run, read the same way by every
/// runtime: `Entrypoint` then `Cmd`, `Env` as `(name, value)` pairs, and `WorkingDir`
/// (`/` when unset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRun {
    /// The command line.
    pub command: Vec<String>,
    /// The variables.
    pub env: Vec<(String, String)>,
    /// The working directory inside the image.
    pub working_dir: String,
}

impl ImageRun {
    /// Reads `config` (the image config's `config` object).
    pub fn of(config: &serde_json::Value) -> Self {
        let strings = |key: &str| -> Vec<String> {
            config[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut command = strings("Entrypoint");
        command.extend(strings("Cmd"));
        let env = strings("Env")
            .into_iter()
            .filter_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                Some((name.to_owned(), value.to_owned()))
            })
            .collect();
        Self {
            command,
            env,
            working_dir: config["WorkingDir"].as_str().unwrap_or("/").to_owned(),
        }
    }
}
