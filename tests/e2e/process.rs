//! A scaffolded app really runs: the devfile's own build and run commands start the
//! python-api template (with the durable overlay) as a plain process that answers on $PORT.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use slipway_toolkit::call;

/// A minimal HTTP/1.1 GET over loopback: returns the status code.
fn get(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn python_api_with_durable_overlay_runs_from_its_devfile_commands() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        "scaffold_app",
        json!({"app_name": "runs", "app_type": "python-api", "output_directory": dir.path(), "durable": true}),
    )
    .unwrap();
    assert_eq!(out["success"], true, "{out}");
    let project = std::path::PathBuf::from(out["project_path"].as_str().unwrap());
    let devfile = std::fs::read_to_string(project.join("devfile.yaml")).unwrap();
    let service = slipway_devfile::Devfile::parse(&devfile)
        .unwrap()
        .services()
        .remove(0);
    let (build, build_dir) = service.build_command.expect("build command");
    let (run, run_dir) = service.run_command.expect("run command");

    let status = Command::new("sh")
        .arg("-c")
        .arg(&build)
        .current_dir(project.join(build_dir))
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the devfile build command failed: {build}"
    );

    let port = free_port();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec {run}"))
        .current_dir(project.join(run_dir))
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut health = None;
    while Instant::now() < deadline && health.is_none() {
        health = get(port, &service.health_path);
        if health.is_none() {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    let durable = get(port, "/restate/discover");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(health, Some(200), "GET {} on $PORT", service.health_path);
    let durable = durable.expect("the Restate endpoint answers under /restate");
    assert!(durable < 500, "Restate discovery answered {durable}");
}
