//! The container runtime (`--runtime container`) against a **test double** of the engine:
//! `fixtures/fake_engine.py`, installed as `podman` (or `docker`) in a temporary directory
//! and given as the engine. It records every command line and emulates `load`, `run` (exec
//! of the image's command, its port on the host as a published port is) and `stop`, so the
//! exact command lines are asserted, and it injects the failures a real engine cannot be made
//! to show on demand (crun's setrlimit error, docker without a daemon). The real engine is
//! exercised in `podman.rs`.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use slipway_platform::{PlatformConfig, RuntimeKind};

use crate::deploy::{
    Service, devfile, pid_in, post, register_and_build, through_gateway, wait_gone, wait_status,
};
use crate::support::{backends, spawn_app_configured};

const FAKE_ENGINE: &str = include_str!("fixtures/fake_engine.py");

/// Installs the test double as `dir/<name>`, with `markers` (`BROKEN`, `NO_DAEMON`) beside it.
fn fake_engine(dir: &Path, name: &str, markers: &[&str]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, FAKE_ENGINE).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    for marker in markers {
        std::fs::write(dir.join(marker), "").unwrap();
    }
    path
}

/// Every command line the double received, oldest first.
fn calls(dir: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(dir.join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn find<'a>(calls: &'a [Vec<String>], head: &[&str]) -> Option<&'a Vec<String>> {
    calls
        .iter()
        .find(|c| c.len() >= head.len() && c.iter().zip(head).all(|(a, b)| a == b))
}

#[tokio::test]
async fn a_service_runs_through_the_engine_cli_and_stops_with_it() {
    for backend in backends() {
        let engine_dir = tempfile::tempdir().unwrap();
        let engine = fake_engine(engine_dir.path(), "podman", &[]);
        let app = spawn_app_configured(backend, |c| {
            c.runtime = RuntimeKind::Container;
            c.container_engine = Some(engine.clone());
        })
        .await;

        // The start-up probe: info, then an empty image loaded and a missing command run.
        let probe = calls(engine_dir.path());
        assert_eq!(probe[0], ["--version"]);
        assert_eq!(probe[1], ["info"]);
        assert_eq!(probe[2][..2], ["load", "-i"]);
        let run = &probe[3];
        assert_eq!(run[..4], ["run", "--rm", "--network", "none"], "{probe:?}");
        assert!(run[4].starts_with("slipway.local/probe:"), "{run:?}");
        assert_eq!(run[5], "/slipway-probe-missing");
        assert_eq!(probe[4], ["rmi", "-f", run[4].as_str()]);

        let df = devfile(
            "boxed",
            "echo built > BUILT",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 server.py api",
                depends_on: &[],
            }],
        );
        let id = register_and_build(&app, "boxed", &df).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        let (status, body) = through_gateway(&app, "boxed.localhost").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.starts_with("hello from api"), "{body}");
        let pid = pid_in(&body);

        let deployment = running["deployment_id"].as_str().unwrap();
        let reference = format!("slipway.local/{id}/api:{deployment}");
        let network = format!("slipway-{id}");
        let platform = std::fs::read_to_string(app.data_dir().join("engine/platform-id"))
            .expect("the platform id");
        let name = format!("slipway-{deployment}-api-0");
        let all = calls(engine_dir.path());
        let load = find(&all[5..], &["load", "-i"]).expect("the image is loaded");
        assert!(
            load[2].ends_with(&format!("{deployment}/image.tar")),
            "{load:?}"
        );
        assert!(
            all.iter().any(
                |c| c.starts_with(&["network".to_owned(), "create".to_owned()])
                    && c.last() == Some(&network)
                    && c.contains(&format!("slipway.app={id}"))
            ),
            "{all:?}"
        );
        let run = find(&all[5..], &["run"]).expect("a run");
        let port = running_port(run);
        let expected: Vec<String> = [
            "run",
            "--label",
            &format!("slipway.platform={platform}"),
            "--label",
            &format!("slipway.app={id}"),
            "--label",
            &format!("slipway.deployment={deployment}"),
            "--label",
            "slipway.service=api",
            "--pids-limit",
            "4096",
            "--name",
            &name,
            "--network",
            &network,
            "--network-alias",
            "api",
            "-p",
            &format!("127.0.0.1:{port}:{port}"),
            "--memory",
            "1073741824b",
            "--memory-swap",
            "1073741824b",
            "-e",
            "PORT",
            &reference,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        assert_eq!(run, &expected);

        // Disable: the engine stops and removes the container, the image and the network.
        let (status, _) = post(&app, &id, "disable").await;
        assert_eq!(status, StatusCode::OK);
        wait_gone(&pid).await;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let all = calls(engine_dir.path());
            let done = [
                vec!["stop", "-t", "5", name.as_str()],
                vec!["rm", "-f", name.as_str()],
                vec!["rmi", "-f", reference.as_str()],
                vec!["network", "rm", network.as_str()],
            ]
            .iter()
            .all(|head| find(&all, head).is_some());
            if done {
                break;
            }
            assert!(Instant::now() < deadline, "{all:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        app.finish().await;
    }
}

/// The host port of `-p 127.0.0.1:<port>:<port>`.
fn running_port(run: &[String]) -> u16 {
    let at = run.iter().position(|a| a == "-p").expect("-p");
    run[at + 1].rsplit(':').next().unwrap().parse().unwrap()
}

async fn refusal(config: &PlatformConfig) -> String {
    match slipway_platform::prepare(config).await {
        Ok(_) => panic!("the server started with an engine that cannot run containers"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn the_server_refuses_to_start_when_the_engine_cannot_run_containers() {
    let data = tempfile::tempdir().unwrap();
    let mut config = PlatformConfig::new("127.0.0.1:0".parse().unwrap(), data.path());
    config.runtime = RuntimeKind::Container;

    // crun's error in unprivileged sandboxes, as on this project's machines.
    let broken = tempfile::tempdir().unwrap();
    config.container_engine = Some(fake_engine(broken.path(), "podman", &["BROKEN"]));
    let message = refusal(&config).await;
    for part in [
        "--runtime container: with ",
        "probe-default.conf: podman cannot run containers here",
        "podman run --rm --network none slipway.local/probe:",
        "/slipway-probe-missing` was expected to fail with exit code 127",
        "exit code 126",
        "setrlimit `RLIMIT_NOFILE`: Operation not permitted",
        "--runtime process",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    // Refused before the database was created.
    assert!(!data.path().join("platform.sqlite3").exists());

    // docker without its daemon.
    let docker = tempfile::tempdir().unwrap();
    config.container_engine = Some(fake_engine(docker.path(), "docker", &["NO_DAEMON"]));
    let message = refusal(&config).await;
    assert!(
        message.contains("docker info` failed (exit code 1)"),
        "{message}"
    );
    assert!(
        message.contains("Cannot connect to the Docker daemon"),
        "{message}"
    );

    // No engine at all.
    config.container_engine = Some(PathBuf::from("/nonexistent/podman"));
    let message = refusal(&config).await;
    assert!(message.contains("none runs here"), "{message}");
    assert!(
        message.contains("`/nonexistent/podman --version` could not run"),
        "{message}"
    );

    // The host's own podman, when there is one: it either runs containers or is refused
    // with what it answered.
    let real = std::process::Command::new("podman")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if real {
        config.container_engine = None;
        match slipway_platform::prepare(&config).await {
            Ok(_) => eprintln!("the host's podman runs containers"),
            Err(e) => {
                let message = e.to_string();
                assert!(message.contains("podman"), "{message}");
                eprintln!("the host's podman is refused: {message}");
            }
        }
    }
}
