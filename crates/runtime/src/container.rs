//! The `container` runtime: runs a service's image as a container of podman or docker
//! ([`Engine`]), for hosts that can run containers. Chosen with `--runtime container`; the
//! server checks at start that the engine can run a container ([`Engine::probe`]) and
//! refuses to start otherwise.
//!
//! Preparing verifies the platform signature first, like the process runtime, then writes
//! the image as an archive and `load`s it as `slipway.local/<app_id>/<service>:<deployment_id>`,
//! and creates the deployment's network `slipway-<deployment_id>`. An instance is `<engine>
//! run --rm` of that image (its own command, working directory and environment) with `PORT`
//! and the deployment's variables as `-e`, attached so that its output goes to the runtime
//! log and its exit code is the container's, on the deployment's network under the
//! service's name (so `<DEP>_URL` is `http://<dep>:<port>`), with `PORT` published on
//! `127.0.0.1` for the health checks and the gateway. The service must listen on all of the
//! container's interfaces (`0.0.0.0:$PORT`): the container's loopback is its own.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::engine::{Engine, IMAGE_PREFIX, write_archive};
use crate::process::{RUN_DIR, STOP_GRACE};
use crate::runtime::{
    BoxFuture, ContainerImage, Exit, ImageRequest, Instance, PreparedImage, Runtime, RuntimeError,
};
use slipway_image::{ImageStore, verify_image};

/// The container backend.
#[derive(Debug)]
pub struct ContainerRuntime {
    data_dir: PathBuf,
    engine: Engine,
    /// Makes container names unique across restarts of a service.
    starts: AtomicU64,
}

impl ContainerRuntime {
    /// Finds the engine (`engine`, else podman, else docker) and proves it can run a
    /// container; blocking. The error is the message the server stops with.
    pub fn open(data_dir: &Path, engine: Option<&Path>) -> Result<Self, String> {
        let engine = Engine::find(engine)?;
        let scratch = data_dir.join(RUN_DIR);
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        engine.probe(&scratch).map_err(|e| {
            format!(
                "{e}. Start the platform with --runtime process on this host, or fix the engine"
            )
        })?;
        Ok(Self {
            data_dir: data_dir.to_path_buf(),
            engine,
            starts: AtomicU64::new(0),
        })
    }

    fn root_of(&self, request: &ImageRequest) -> PathBuf {
        self.data_dir
            .join(RUN_DIR)
            .join(&request.app_id)
            .join(&request.service)
            .join(&request.deployment_id)
    }
}

/// The engine's name for a deployment's image of a service.
pub fn image_reference(request: &ImageRequest) -> String {
    format!(
        "{IMAGE_PREFIX}/{}/{}:{}",
        request.app_id, request.service, request.deployment_id
    )
}

/// The network of a deployment.
pub fn network_name(deployment_id: &str) -> String {
    format!("slipway-{deployment_id}")
}

impl Runtime for ContainerRuntime {
    fn name(&self) -> &'static str {
        "container"
    }

    fn prepare(&self, request: &ImageRequest) -> Result<PreparedImage, RuntimeError> {
        let verified =
            verify_image(&self.data_dir, &request.digest).map_err(RuntimeError::Signature)?;
        let store = ImageStore::open(&self.data_dir).map_err(RuntimeError::Signature)?;
        let root = self.root_of(request);
        std::fs::create_dir_all(&root)?;
        let reference = image_reference(request);
        let archive = root.join("image.tar");
        write_archive(&store, &verified.digest, &reference, &archive)
            .map_err(RuntimeError::Signature)?;
        let archive_arg = archive.display().to_string();
        let loaded = self.engine.run(&["load", "-i", &archive_arg]);
        let _ = std::fs::remove_file(&archive);
        loaded.map_err(RuntimeError::Engine)?;
        let network = network_name(&request.deployment_id);
        if let Err(e) = self.engine.run(&["network", "create", &network])
            && !e.contains("exists")
        {
            return Err(RuntimeError::Engine(e));
        }
        let run = crate::runtime::ImageRun::of(&verified.config["config"]);
        Ok(PreparedImage {
            root,
            command: run.command,
            working_dir: PathBuf::from(run.working_dir),
            env: run.env,
            container: Some(ContainerImage {
                reference,
                network,
                alias: request.service.clone(),
            }),
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
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)?;
        let err = out.try_clone()?;
        let name = format!(
            "slipway-{}-{}-{}",
            container.network.trim_start_matches("slipway-"),
            container.alias,
            self.starts.fetch_add(1, Ordering::Relaxed)
        );
        let publish = format!("127.0.0.1:{port}:{port}");
        let mut args: Vec<String> = [
            "run",
            "--rm",
            "--name",
            &name,
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
        // `-e NAME` without a value makes the engine read the value from its own environment:
        // values (app secrets among them) never appear on a command line, where `ps` and error
        // messages would show them.
        for (key, _) in extra_env {
            args.push("-e".into());
            args.push(key.clone());
        }
        args.push(container.reference.clone());
        let mut command = self.engine.async_command();
        command
            .args(&args)
            .envs(extra_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .process_group(0)
            .kill_on_drop(true);
        let child = command.spawn().map_err(|error| RuntimeError::Start {
            what: format!("{} {}", self.engine.name(), args.join(" ")),
            error,
        })?;
        Ok(Box::new(ContainerInstance {
            child,
            engine: self.engine.clone(),
            name,
        }))
    }

    fn discard(&self, request: &ImageRequest) {
        let reference = image_reference(request);
        if let Err(e) = self.engine.run(&["rmi", "-f", &reference]) {
            tracing::warn!(error = %e, "cannot remove a loaded image");
        }
        // Fails while other services of the deployment are attached; the last one's
        // discard removes it.
        let _ = self
            .engine
            .run(&["network", "rm", &network_name(&request.deployment_id)]);
        let root = self.root_of(request);
        if root.exists()
            && let Err(e) = std::fs::remove_dir_all(&root)
        {
            tracing::warn!(path = %root.display(), error = %e, "cannot remove a run directory");
        }
    }

    fn dependency_url(&self, service: &str, port: u16) -> String {
        format!("http://{service}:{port}")
    }
}

/// One attached `<engine> run` client and the container it runs.
struct ContainerInstance {
    child: tokio::process::Child,
    engine: Engine,
    name: String,
}

impl ContainerInstance {
    /// `<engine> rm -f <name>`, in case `--rm` did not happen (the client was killed).
    async fn remove(&self) {
        let _ = self
            .engine
            .async_command()
            .args(["rm", "-f", &self.name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await;
    }
}

impl Instance for ContainerInstance {
    fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn wait(&mut self) -> BoxFuture<'_, Exit> {
        Box::pin(async move {
            let status = self.child.wait().await;
            self.remove().await;
            match status {
                Ok(s) => match s.code() {
                    Some(code) => Exit {
                        code: Some(code),
                        description: format!("exit code {code}"),
                    },
                    None => Exit {
                        code: None,
                        description: format!("the {} client was killed: {s}", self.engine.name()),
                    },
                },
                Err(e) => Exit {
                    code: None,
                    description: format!("wait failed: {e}"),
                },
            }
        })
    }

    fn stop(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if matches!(self.child.try_wait(), Ok(None)) {
                // The engine sends SIGTERM, then SIGKILL after the grace.
                let grace = STOP_GRACE.as_secs().to_string();
                let _ = self
                    .engine
                    .async_command()
                    .args(["stop", "-t", &grace, &self.name])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .await;
                if tokio::time::timeout(STOP_GRACE + Duration::from_secs(5), self.child.wait())
                    .await
                    .is_err()
                {
                    tracing::warn!(container = %self.name, "the engine client did not end; killing it");
                    let _ = self.child.kill().await;
                }
            }
            let _ = self.child.wait().await;
            self.remove().await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_documented_scheme() {
        let request = ImageRequest {
            app_id: "a1".into(),
            service: "api".into(),
            deployment_id: "d1".into(),
            digest: String::new(),
        };
        assert_eq!(image_reference(&request), "slipway.local/a1/api:d1");
        assert_eq!(network_name("d1"), "slipway-d1");
        // `true` answers `--version`, which is all finding an engine asks.
        let runtime = ContainerRuntime {
            data_dir: PathBuf::from("/nonexistent"),
            engine: Engine::find(Some(Path::new("true"))).unwrap(),
            starts: AtomicU64::new(0),
        };
        assert_eq!(
            runtime.dependency_url("order-db", 5000),
            "http://order-db:5000"
        );
    }
}
