//! The `container` runtime: runs a service's image as a container of podman or docker
//! ([`Engine`]), for hosts that can run containers. Chosen with `--runtime container`; the
//! server checks at start that the engine can run a container ([`Engine::probe`], trying the
//! platform's own podman configurations in turn: [`Engine::candidates`]) and refuses to
//! start otherwise.
//!
//! Preparing verifies the platform signature first, like the process runtime, then writes
//! the image as an archive and `load`s it as `slipway.local/<app_id>/<service>:<deployment_id>`,
//! and creates the app's network `slipway-<app_id>` (per app, not per deployment: a service
//! kept unchanged by a newer deployment must still answer its dependents by name). An instance is `<engine>
//! run` of that image (its own command, working directory and environment) with `PORT` and
//! the deployment's variables as `-e`, attached so that its output goes to the runtime log
//! and its exit code is the container's, on the app's network under the service's
//! name (so `<DEP>_URL` is `http://<dep>:<port>`), with `PORT` published on `127.0.0.1` for
//! the health checks and the gateway. The service must listen on all of the container's
//! interfaces (`0.0.0.0:$PORT`): the container's loopback is its own.
//!
//! Every container and network carries labels naming this platform (a random id kept in
//! `DATA_DIR/engine/platform-id`, so two platforms on one machine never touch each other's),
//! the app, the deployment and the service; the platform finds its own by those labels at
//! start (what a killed platform left running is removed before anything is brought back)
//! and when an app is deleted. Memory and CPU limits are the engine's (`--memory` with no
//! extra swap, `--cpus`), with a pids limit; a container killed at its memory limit ends
//! with that reason.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::engine::{ENGINE_DIR, Engine, IMAGE_PREFIX, write_archive};
use crate::pgroup::Group;
use crate::runtime::{
    BoxFuture, ContainerImage, Exit, ImageRequest, Instance, Limits, PreparedImage, RUN_DIR,
    Runtime, RuntimeError, STOP_GRACE, Verified, VolumeMount, log_output, remove_run_dir,
};
use slipway_image::{Digest, ImageStore};

/// The container backend.
#[derive(Debug)]
pub struct ContainerRuntime {
    data_dir: PathBuf,
    engine: Engine,
    /// This platform's id in the `slipway.platform` label.
    platform_id: String,
    /// Makes container names unique across restarts of a service.
    starts: AtomicU64,
}

/// Label keys on every container and network the platform makes.
pub const LABEL_PLATFORM: &str = "slipway.platform";
/// The app's id.
pub const LABEL_APP: &str = "slipway.app";
/// The deployment's id.
pub const LABEL_DEPLOYMENT: &str = "slipway.deployment";
/// The service's name.
pub const LABEL_SERVICE: &str = "slipway.service";
/// Most processes one container may hold: a fork bomb in one app cannot exhaust the host.
pub const PIDS_LIMIT: u32 = 4096;
/// The exit code of a container whose process was killed by SIGKILL (128 + 9), which is how
/// the kernel's OOM killer ends it.
pub const SIGKILL_EXIT: i32 = 137;

/// The platform id in `DATA_DIR/engine/platform-id`, made on first use.
fn platform_id(data_dir: &Path) -> Result<String, String> {
    let file = data_dir.join(ENGINE_DIR).join("platform-id");
    match std::fs::read_to_string(&file) {
        Ok(id) if !id.trim().is_empty() => return Ok(id.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    }
    let id = uuid::Uuid::new_v4().simple().to_string();
    slipway_server::file::write(&file, id.as_bytes(), slipway_server::file::Mode::Ordinary)
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(id)
}

impl ContainerRuntime {
    /// Finds the engine (`engine`, else podman, else docker) and proves it can run a
    /// container; blocking. The error is the message the server stops with.
    pub fn open(data_dir: &Path, engine: Option<&Path>) -> Result<Self, String> {
        let found = Engine::find(engine)?;
        let scratch = data_dir.join(RUN_DIR);
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        let mut failures = Vec::new();
        for mut candidate in found.candidates(data_dir)? {
            match candidate.probe(&scratch) {
                Ok(()) => {
                    candidate.settle(data_dir)?;
                    tracing::info!(engine = %candidate.name(), config = %candidate.setup(), "the container engine runs containers");
                    return Ok(Self {
                        data_dir: data_dir.to_path_buf(),
                        engine: candidate,
                        platform_id: platform_id(data_dir)?,
                        starts: AtomicU64::new(0),
                    });
                }
                Err(e) => failures.push(format!("with {}: {e}", candidate.setup())),
            }
        }
        Err(format!(
            "{}. Start the platform with --runtime process on this host, or fix the engine",
            failures.join("; ")
        ))
    }

    /// The arguments of `<engine> run` for one instance named `name` of `container`: the
    /// labels, limits, network and name, `port` published on loopback, and `extra_env`
    /// passed by name only.
    fn run_args(
        &self,
        container: &ContainerImage,
        name: &str,
        port: &str,
        extra_env: &[(String, String)],
    ) -> Vec<String> {
        let publish = format!("127.0.0.1:{port}:{port}");
        let request = &container.request;
        let mut args: Vec<String> = [
            "run",
            "--label",
            &self.platform_label(),
            "--label",
            &format!("{LABEL_APP}={}", request.app_id),
            "--label",
            &format!("{LABEL_DEPLOYMENT}={}", request.deployment_id),
            "--label",
            &format!("{LABEL_SERVICE}={}", request.service),
            "--pids-limit",
            &PIDS_LIMIT.to_string(),
            "--name",
            name,
            "--network",
            &container.network,
            "--network-alias",
            &container.alias,
            "-p",
            &publish,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.extend(limit_args(&request.limits));
        for v in &request.volumes {
            args.push("--volume".into());
            args.push(format!(
                "{}:{}",
                volume_name(&request.app_id, &v.name),
                v.path
            ));
        }
        // `-e NAME` without a value makes the engine read the value from its own environment:
        // values (app secrets among them) never appear on a command line, where `ps` and error
        // messages would show them.
        for (key, _) in extra_env {
            args.push("-e".into());
            args.push(key.clone());
        }
        args.push(container.reference.clone());
        args
    }

    /// Loads image `digest` of `store` into the engine as `reference`, through an archive
    /// in the run directory `root` that is removed once loaded.
    fn load(
        &self,
        store: &ImageStore,
        digest: &Digest,
        reference: &str,
        root: &Path,
    ) -> Result<(), RuntimeError> {
        let archive = root.join("image.tar");
        write_archive(store, digest, reference, &archive).map_err(RuntimeError::Signature)?;
        let archive_arg = archive.display().to_string();
        let loaded = self.engine.run(&["load", "-i", &archive_arg]);
        let _ = std::fs::remove_file(&archive);
        loaded.map_err(RuntimeError::Engine)?;
        Ok(())
    }

    /// Creates the app's network, labelled as this platform's, unless it exists already (a
    /// service of the app kept by a newer deployment is attached to it); returns its name.
    fn create_network(&self, app_id: &str) -> Result<String, RuntimeError> {
        let network = network_name(app_id);
        let labels = [self.platform_label(), format!("{LABEL_APP}={app_id}")];
        let mut args = vec!["network", "create"];
        for label in &labels {
            args.extend(["--label", label]);
        }
        args.push(&network);
        if let Err(e) = self.engine.run(&args)
            && !e.contains("exists")
        {
            return Err(RuntimeError::Engine(e));
        }
        Ok(network)
    }

    /// Creates the engine's named volume of an app's volume, unless it exists: the local
    /// driver binding the directory the platform keeps the volume's data in, so the data
    /// is where the process runtime and backups find it too.
    fn create_volume(&self, app_id: &str, volume: &VolumeMount) -> Result<(), RuntimeError> {
        std::fs::create_dir_all(&volume.host)?;
        let name = volume_name(app_id, &volume.name);
        if self.engine.run(&["volume", "exists", &name]).is_ok() {
            return Ok(());
        }
        let device = format!("device={}", volume.host.display());
        let labels = [self.platform_label(), format!("{LABEL_APP}={app_id}")];
        let mut args = vec!["volume", "create", "--driver", "local"];
        for label in &labels {
            args.extend(["--label", label]);
        }
        args.extend([
            "--opt",
            "type=none",
            "--opt",
            "o=bind",
            "--opt",
            &device,
            &name,
        ]);
        match self.engine.run(&args) {
            Err(e) if !e.contains("exists") => Err(RuntimeError::Engine(e)),
            _ => Ok(()),
        }
    }

    /// This platform's `slipway.platform` label value.
    pub fn platform_label(&self) -> String {
        format!("{LABEL_PLATFORM}={}", self.platform_id)
    }

    /// Names of this platform's containers (running or not), or of its networks when
    /// `networks`, that also carry the label `extra` (`k=v`) when given.
    fn owned(&self, networks: bool, extra: Option<String>) -> Vec<String> {
        let mut args: Vec<String> = if networks {
            vec!["network".into(), "ls".into()]
        } else {
            vec!["ps".into(), "-a".into()]
        };
        args.push("--filter".into());
        args.push(format!("label={}", self.platform_label()));
        if let Some(extra) = extra {
            args.push("--filter".into());
            args.push(format!("label={extra}"));
        }
        args.push("--format".into());
        args.push(if networks { "{{.Name}}" } else { "{{.Names}}" }.into());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        match self.engine.run(&refs) {
            Ok(out) => String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the platform's containers or networks");
                Vec::new()
            }
        }
    }

    /// Removes this platform's containers and then networks matching `extra` (all of them
    /// when `None`); returns how many containers were removed.
    fn sweep(&self, extra: Option<String>) -> usize {
        let containers = self.owned(false, extra.clone());
        if !containers.is_empty() {
            let mut args = vec!["rm", "-f", "-t", "0"];
            args.extend(containers.iter().map(String::as_str));
            if let Err(e) = self.engine.run(&args) {
                tracing::warn!(error = %e, "cannot remove containers");
            }
        }
        for network in self.owned(true, extra) {
            if let Err(e) = self.engine.run(&["network", "rm", "-f", &network]) {
                tracing::warn!(error = %e, "cannot remove a network");
            }
        }
        containers.len()
    }
}

/// The engine's name for a deployment's image of a service.
pub fn image_reference(request: &ImageRequest) -> String {
    format!(
        "{IMAGE_PREFIX}/{}/{}:{}",
        request.app_id, request.service, request.deployment_id
    )
}

/// The engine's named volume of an app's volume.
pub fn volume_name(app_id: &str, volume: &str) -> String {
    format!("slipway-{app_id}-{volume}")
}

/// The network of an app.
pub fn network_name(app_id: &str) -> String {
    format!("slipway-{app_id}")
}

impl Runtime for ContainerRuntime {
    fn name(&self) -> &'static str {
        "container"
    }

    fn host_address(&self, app_id: &str) -> Result<Option<std::net::IpAddr>, RuntimeError> {
        let network = self.create_network(app_id)?;
        let inspected = self
            .engine
            .run(&[
                "network",
                "inspect",
                "--format",
                "{{range .Subnets}}{{.Gateway}} {{end}}",
                &network,
            ])
            .map_err(RuntimeError::Engine)?;
        let gateway = String::from_utf8_lossy(&inspected.stdout);
        gateway
            .split_whitespace()
            .find_map(|g| g.parse::<std::net::Ipv4Addr>().ok())
            .map(|g| Some(std::net::IpAddr::V4(g)))
            .ok_or_else(|| {
                RuntimeError::Engine(format!(
                    "the network {network} has no IPv4 gateway (its subnets' gateways: {gateway:?})"
                ))
            })
    }

    fn prepare(&self, request: &ImageRequest) -> Result<PreparedImage, RuntimeError> {
        let Verified { image, store } = request.verify(&self.data_dir)?;
        let root = request.run_dir(&self.data_dir);
        std::fs::create_dir_all(&root)?;
        let reference = image_reference(request);
        self.load(&store, &image.digest, &reference, &root)?;
        let network = self.create_network(&request.app_id)?;
        let run = crate::runtime::ImageRun::of(&image.config["config"]);
        Ok(PreparedImage {
            root,
            command: run.command,
            working_dir: PathBuf::from(run.working_dir),
            env: run.env,
            container: Some(ContainerImage {
                reference,
                network,
                alias: request.service.clone(),
                request: request.clone(),
            }),
            volumes: request.volumes.clone(),
        })
    }

    fn start(
        &self,
        image: &PreparedImage,
        extra_env: &[(String, String)],
        log: &Path,
    ) -> Result<Box<dyn Instance>, RuntimeError> {
        let container = image.container.as_ref().ok_or_else(|| {
            RuntimeError::Unsupported("the image was not prepared by the container runtime".into())
        })?;
        let port = extra_env
            .iter()
            .find(|(name, _)| name == "PORT")
            .map(|(_, value)| value.clone())
            .ok_or_else(|| RuntimeError::Unsupported("no PORT to publish".into()))?;
        let (out, err) = log_output(log)?;
        let name = format!(
            "slipway-{}-{}-{}",
            container.request.deployment_id,
            container.alias,
            self.starts.fetch_add(1, Ordering::Relaxed)
        );
        for v in &container.request.volumes {
            self.create_volume(&container.request.app_id, v)?;
        }
        let args = self.run_args(container, &name, &port, extra_env);
        let mut command = self.engine.async_command();
        command
            .args(&args)
            .envs(extra_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let client = Group::spawn(&mut command).map_err(|error| RuntimeError::Start {
            what: format!("{} {}", self.engine.name(), args.join(" ")),
            error,
        })?;
        Ok(Box::new(ContainerInstance {
            client,
            engine: self.engine.clone(),
            name,
            limits: container.request.limits,
        }))
    }

    fn reap_orphans(&self) -> usize {
        self.sweep(None)
    }

    fn remove_app(&self, app_id: &str) {
        let removed = self.sweep(Some(format!("{LABEL_APP}={app_id}")));
        let label = format!("label={LABEL_APP}={app_id}");
        if let Ok(out) = self.engine.run(&["volume", "ls", "-q", "--filter", &label]) {
            let names = String::from_utf8_lossy(&out.stdout).into_owned();
            for name in names.lines().filter(|n| !n.is_empty()) {
                if let Err(e) = self.engine.run(&["volume", "rm", "-f", name]) {
                    tracing::warn!(error = %e, "cannot remove a deleted app's volume");
                }
            }
        }
        if removed > 0 {
            tracing::info!(
                app_id,
                removed,
                "removed the deleted app's remaining containers"
            );
        }
    }

    fn discard(&self, request: &ImageRequest) {
        let reference = image_reference(request);
        if let Err(e) = self.engine.run(&["rmi", "-f", &reference]) {
            tracing::warn!(error = %e, "cannot remove a loaded image");
        }
        // Fails while any container of the app is attached (another service, or the newer
        // deployment's instances); the last one's discard removes it.
        let _ = self
            .engine
            .run(&["network", "rm", &network_name(&request.app_id)]);
        remove_run_dir(&request.run_dir(&self.data_dir));
    }

    fn dependency_url(&self, service: &str, port: u16) -> String {
        format!("http://{service}:{port}")
    }
}

/// The engine's flags for `limits`: memory without extra swap (so the limit is the limit),
/// CPU as a fraction of cores.
pub fn limit_args(limits: &Limits) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(bytes) = limits.memory_bytes {
        args.extend([
            "--memory".into(),
            format!("{bytes}b"),
            "--memory-swap".into(),
            format!("{bytes}b"),
        ]);
    }
    if let Some(millis) = limits.cpu_millis {
        args.extend(["--cpus".into(), format!("{}", millis as f64 / 1000.0)]);
    }
    args
}

/// One attached `<engine> run` client and the container it runs.
struct ContainerInstance {
    /// The client, leading a process group of its own ([`Group`]): the engine stops the
    /// container; the group is killed only when the client will not end.
    client: Group,
    engine: Engine,
    name: String,
    limits: Limits,
}

impl ContainerInstance {
    /// Whether the engine says the kernel killed the container for memory. podman on hosts
    /// with cgroup v1 memory does not always set it, so [`Instance::wait`] also reads a
    /// SIGKILL of a memory-limited container as one.
    async fn oom_killed(&self) -> bool {
        let out = self
            .engine
            .run_async(&["inspect", "--format", "{{.State.OOMKilled}}", &self.name])
            .await;
        out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true")
    }

    /// `<engine> rm -f <name>`: the container is kept after it exits only to read how it
    /// ended.
    async fn remove(&self) {
        let _ = self.engine.run_async(&["rm", "-f", &self.name]).await;
    }
}

impl Instance for ContainerInstance {
    fn pid(&self) -> Option<u32> {
        self.client.pid()
    }

    fn is_alive(&mut self) -> bool {
        self.client.is_running()
    }

    fn wait(&mut self) -> BoxFuture<'_, Exit> {
        Box::pin(async move {
            let status = self.client.wait().await;
            let oom = self.oom_killed().await;
            self.remove().await;
            match status {
                Ok(s) => match s.code() {
                    Some(code) => Exit {
                        code: Some(code),
                        description: exit_description(code, oom, &self.limits),
                    },
                    None => Exit {
                        code: None,
                        description: format!("the {} client was killed: {s}", self.engine.name()),
                    },
                },
                Err(e) => Exit::wait_failed(&e),
            }
        })
    }

    fn stop(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.client.is_running() {
                // The engine sends SIGTERM, then SIGKILL after the grace.
                let grace = STOP_GRACE.as_secs().to_string();
                let _ = self
                    .engine
                    .run_async(&["stop", "-t", &grace, &self.name])
                    .await;
                if tokio::time::timeout(STOP_GRACE + Duration::from_secs(5), self.client.wait())
                    .await
                    .is_err()
                {
                    tracing::warn!(container = %self.name, "the engine client did not end; killing it");
                    self.client.kill();
                }
            }
            let _ = self.client.wait().await;
            self.remove().await;
        })
    }
}

/// How a container's end reads in the deployment's reason.
fn exit_description(code: i32, oom: bool, limits: &Limits) -> String {
    let limit = limits
        .memory_bytes
        .map(slipway_devfile::quantity::format_memory);
    match (oom, code == SIGKILL_EXIT, limit) {
        (true, _, Some(limit)) => {
            format!("out of memory: killed at its memory limit of {limit} (exit code {code})")
        }
        (true, _, None) => format!("out of memory: killed by the kernel (exit code {code})"),
        (false, true, Some(limit)) => format!(
            "killed (SIGKILL, exit code {code}), most likely out of memory at its memory limit of {limit}"
        ),
        _ => format!("exit code {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deployment `d1` of service `api` of app `a1`.
    fn request() -> ImageRequest {
        ImageRequest {
            app_id: "a1".into(),
            service: "api".into(),
            deployment_id: "d1".into(),
            digest: String::new(),
            limits: Limits::default(),
            volumes: Vec::new(),
        }
    }

    /// The runtime of platform `p1` over `engine`, without the start-up probe.
    fn runtime(engine: &Path, data_dir: &Path) -> ContainerRuntime {
        ContainerRuntime {
            data_dir: data_dir.to_path_buf(),
            engine: Engine::find(Some(engine)).unwrap(),
            platform_id: "p1".into(),
            starts: AtomicU64::new(0),
        }
    }

    #[test]
    fn names_follow_the_documented_scheme() {
        let request = request();
        assert_eq!(image_reference(&request), "slipway.local/a1/api:d1");
        assert_eq!(network_name("a1"), "slipway-a1");
        // `true` answers `--version`, which is all finding an engine asks.
        let runtime = runtime(Path::new("true"), Path::new("/nonexistent"));
        assert_eq!(runtime.platform_label(), "slipway.platform=p1");
        assert_eq!(
            runtime.dependency_url("order-db", 5000),
            "http://order-db:5000"
        );
    }

    #[test]
    fn limits_become_engine_flags_and_an_oom_reads_as_one() {
        let limits = Limits {
            memory_bytes: Some(64 << 20),
            cpu_millis: Some(500),
        };
        assert_eq!(
            limit_args(&limits),
            [
                "--memory",
                "67108864b",
                "--memory-swap",
                "67108864b",
                "--cpus",
                "0.5"
            ]
        );
        assert!(limit_args(&Limits::default()).is_empty());
        assert_eq!(
            exit_description(137, true, &limits),
            "out of memory: killed at its memory limit of 64Mi (exit code 137)"
        );
        assert!(exit_description(137, false, &limits).contains("most likely out of memory"));
        assert_eq!(
            exit_description(137, false, &Limits::default()),
            "exit code 137"
        );
        assert_eq!(exit_description(1, false, &limits), "exit code 1");
    }

    /// An engine client that does not end when the engine is told to stop the container
    /// is killed with everything it left in its process group.
    #[tokio::test]
    async fn a_client_that_will_not_end_is_killed_with_its_group() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("background.pid");
        // `run` leaves a process in the background and waits for it; `stop` and the rest do
        // nothing.
        let engine = dir.path().join("engine");
        std::fs::write(
            &engine,
            format!(
                "#!/bin/sh\ncase \"$1\" in\n  run) sleep 60 & echo $! > {}; wait ;;\nesac\n",
                pidfile.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
        let runtime = runtime(&engine, dir.path());
        let request = request();
        let image = PreparedImage {
            root: dir.path().to_path_buf(),
            command: Vec::new(),
            working_dir: PathBuf::from("/"),
            env: Vec::new(),
            container: Some(ContainerImage {
                reference: image_reference(&request),
                network: network_name(&request.app_id),
                alias: request.service.clone(),
                request,
            }),
            volumes: Vec::new(),
        };
        let port = [("PORT".to_owned(), "8000".to_owned())];
        let mut instance = runtime
            .start(&image, &port, &dir.path().join("log"))
            .unwrap();
        let background = crate::pgroup::testing::pid_in(&pidfile).await;
        instance.stop().await;
        assert!(
            crate::pgroup::testing::ended(background).await,
            "the client's background process outlived the stop"
        );
    }
}
