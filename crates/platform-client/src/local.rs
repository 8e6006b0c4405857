//! Local builds: an image built on this machine by a build client, then uploaded as prebuilt.
//!
//! The engine comes from `BUILDER_HOST` in the tool server's own environment: a BuildKit
//! address for `buildctl` (`docker-container://NAME`, `tcp://HOST:PORT`, `unix:///PATH`), or
//! `buildah` / `podman` to build with those tools directly. Reachability is checked before any
//! work so a misconfiguration fails fast with what to set.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use slipway_devfile::ServiceSpec;

use crate::error::ToolError;

/// The variable naming the build engine.
pub const ENV_BUILDER_HOST: &str = "BUILDER_HOST";

/// What to tell a user whose local build cannot start.
const HOW_TO: &str = "Set BUILDER_HOST in the environment of the process that runs the Slipway tools (your MCP client's server config, or the shell that starts slipway), not only in a user shell: \
BUILDER_HOST=docker-container://buildkitd (start BuildKit with `docker run -d --name buildkitd --privileged moby/buildkit`), \
BUILDER_HOST=tcp://127.0.0.1:1234 (BuildKit started with that port published), \
or BUILDER_HOST=buildah / BUILDER_HOST=podman to build with those tools. Or use build_mode: \"remote\"";

/// A checked, reachable build engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Builder {
    /// `buildctl --addr <addr>`.
    Buildctl(String),
    /// `buildah`.
    Buildah,
    /// `podman`.
    Podman,
}

impl Builder {
    /// Reads and checks `BUILDER_HOST`.
    pub fn from_env() -> Result<Self, ToolError> {
        Self::check(std::env::var(ENV_BUILDER_HOST).ok().as_deref())
    }

    /// Checks a `BUILDER_HOST` value (None = unset).
    pub fn check(value: Option<&str>) -> Result<Self, ToolError> {
        let value = value
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                ToolError::NotConfigured(format!(
                    "the local build engine is unreachable: {ENV_BUILDER_HOST} is not set. {HOW_TO}"
                ))
            })?;
        let unreachable = |why: String| {
            ToolError::NotConfigured(format!(
                "the local build engine at {ENV_BUILDER_HOST}={value} is unreachable: {why}. {HOW_TO}"
            ))
        };
        match value {
            "buildah" | "buildah://" => runs("buildah")
                .map(|()| Builder::Buildah)
                .map_err(unreachable),
            "podman" | "podman://" => runs("podman")
                .map(|()| Builder::Podman)
                .map_err(unreachable),
            _ => {
                runs("buildctl").map_err(|e| {
                    unreachable(format!(
                        "{e} (buildctl, BuildKit's client, must be on PATH)"
                    ))
                })?;
                if let Some(addr) = value.strip_prefix("tcp://") {
                    let target = addr
                        .to_socket_addrs()
                        .ok()
                        .and_then(|mut a| a.next())
                        .ok_or_else(|| unreachable(format!("{addr:?} is not a host:port")))?;
                    TcpStream::connect_timeout(&target, Duration::from_secs(2))
                        .map_err(|e| unreachable(format!("cannot connect to {addr}: {e}")))?;
                } else if let Some(path) = value.strip_prefix("unix://") {
                    if !Path::new(path).exists() {
                        return Err(unreachable(format!("socket {path} does not exist")));
                    }
                } else if let Some(name) = value.strip_prefix("docker-container://") {
                    let out = Command::new("docker")
                        .args(["inspect", "-f", "{{.State.Running}}", name])
                        .output();
                    match out {
                        Ok(o) if String::from_utf8_lossy(&o.stdout).trim() == "true" => {}
                        Ok(_) => {
                            return Err(unreachable(format!("container {name:?} is not running")));
                        }
                        Err(e) => {
                            return Err(unreachable(format!(
                                "the docker CLI is needed to reach a docker-container:// engine: {e}"
                            )));
                        }
                    }
                } else {
                    return Err(unreachable("unknown scheme; use docker-container://, tcp://, unix://, buildah or podman".into()));
                }
                Ok(Builder::Buildctl(value.to_owned()))
            }
        }
    }

    /// Builds `service` for `linux/<arch>` and returns an OCI image archive (a temp file).
    pub fn build(
        &self,
        root: &Path,
        service: &ServiceSpec,
        arch: &str,
        app: &str,
    ) -> Result<tempfile::NamedTempFile, ToolError> {
        let archive = tempfile::Builder::new()
            .prefix("slipway-image-")
            .suffix(".tar")
            .tempfile()
            .map_err(|e| ToolError::io("create", Path::new("/tmp"), &e))?;
        let target = Target {
            dockerfile: root.join(service.dockerfile.as_deref().unwrap_or("Dockerfile")),
            context: root.join(&service.build_context),
            platform: format!("linux/{arch}"),
            tag: format!("localhost/slipway-{app}-{}:build", service.name),
            dest: archive.path().display().to_string(),
        };
        for step in self.steps(root, target) {
            run_step(&step, &service.name)?;
        }
        Ok(archive)
    }

    /// The commands that build `target` with this engine and leave its OCI archive at
    /// `target.dest`: BuildKit writes the archive itself; buildah and podman build a tagged
    /// image, write it out, and remove the tag.
    fn steps(&self, root: &Path, target: Target) -> Vec<Vec<String>> {
        let Target {
            dockerfile,
            context,
            platform,
            tag,
            dest,
        } = target;
        match self {
            Builder::Buildctl(addr) => {
                let dir = dockerfile.parent().unwrap_or(root).display().to_string();
                let file = dockerfile
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "Dockerfile".into());
                vec![vec![
                    "buildctl".into(),
                    "--addr".into(),
                    addr.clone(),
                    "build".into(),
                    "--frontend".into(),
                    "dockerfile.v0".into(),
                    "--local".into(),
                    format!("context={}", context.display()),
                    "--local".into(),
                    format!("dockerfile={dir}"),
                    "--opt".into(),
                    format!("filename={file}"),
                    "--opt".into(),
                    format!("platform={platform}"),
                    "--output".into(),
                    format!("type=oci,dest={dest}"),
                ]]
            }
            Builder::Buildah => {
                let mut build = vec!["buildah".into(), "build".into()];
                build.extend(["--isolation".into(), "chroot".into()]);
                build.extend(dockerfile_build(platform, &dockerfile, &tag, &context));
                let push = vec![
                    "buildah".into(),
                    "push".into(),
                    tag.clone(),
                    format!("oci-archive:{dest}"),
                ];
                vec![build, push, vec!["buildah".into(), "rmi".into(), tag]]
            }
            Builder::Podman => {
                let mut build = vec!["podman".into(), "build".into()];
                build.extend(dockerfile_build(platform, &dockerfile, &tag, &context));
                let save = vec![
                    "podman".into(),
                    "save".into(),
                    "--format".into(),
                    "oci-archive".into(),
                    "-o".into(),
                    dest,
                    tag.clone(),
                ];
                vec![build, save, vec!["podman".into(), "rmi".into(), tag]]
            }
        }
    }
}

/// What a local build makes: the image of `dockerfile` over `context` for `platform`, tagged
/// `tag` while the engine holds it, written as an OCI archive to `dest`.
struct Target {
    dockerfile: PathBuf,
    context: PathBuf,
    platform: String,
    tag: String,
    dest: String,
}

/// The arguments buildah's and podman's `build` share after their own flags.
fn dockerfile_build(platform: String, dockerfile: &Path, tag: &str, context: &Path) -> [String; 7] {
    [
        "--platform".into(),
        platform,
        "-f".into(),
        dockerfile.display().to_string(),
        "-t".into(),
        tag.to_owned(),
        context.display().to_string(),
    ]
}

/// Runs one build command; a failure names the command and ends with the last lines of
/// what it wrote to stderr.
fn run_step(step: &[String], service: &str) -> Result<(), ToolError> {
    let out = Command::new(&step[0])
        .args(&step[1..])
        .output()
        .map_err(|e| ToolError::Unavailable(format!("{}: {e}", step[0])))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = err
        .lines()
        .rev()
        .take(15)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Err(ToolError::BuildFailed(format!(
        "local build of {service:?} failed at `{} {}`:\n{}",
        step[0],
        step[1],
        tail.join("\n")
    )))
}

fn runs(program: &str) -> Result<(), String> {
    match Command::new(program).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`{program} --version` failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(_) => Err(format!("{program} is not installed or not on PATH")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_builder_host_says_what_to_set() {
        let e = Builder::check(None).unwrap_err().to_string();
        assert!(e.contains("BUILDER_HOST is not set"), "{e}");
        assert!(
            e.contains("docker-container://buildkitd") && e.contains("tcp://127.0.0.1:1234"),
            "{e}"
        );
    }

    #[test]
    fn an_address_with_nothing_behind_it_fails_fast() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        for value in [
            format!("tcp://127.0.0.1:{port}"),
            "unix:///nonexistent/buildkitd.sock".into(),
            "docker-container://buildkitd".into(),
            "ftp://x".into(),
        ] {
            let started = std::time::Instant::now();
            let e = Builder::check(Some(&value)).unwrap_err().to_string();
            assert!(
                e.contains("unreachable") && e.contains("Set BUILDER_HOST"),
                "{value}: {e}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{value} took too long"
            );
        }
    }
}
