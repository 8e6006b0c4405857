//! The daily path against a real platform process: new → build → status --watch → logs.

use std::path::Path;
use std::process::{Child, Command, Output};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn slipway(dir: &Path, env: &[(&str, String)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_slipway"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("BUILDER_HOST")
        .env_remove("SLIPWAY_PLATFORM_URL")
        .env_remove("SLIPWAY_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn new_build_status_logs() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("platform");
    let port = free_port();
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_slipway"))
            .args([
                "platform",
                "serve",
                "--builder",
                "native",
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .args([
                "--gateway-listen",
                &format!("127.0.0.1:{}", free_port()),
                "--data-dir",
            ])
            .arg(&data)
            .env("RUST_LOG", "error")
            .spawn()
            .unwrap(),
    );
    let token_file = data.join("bootstrap-token");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !token_file.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let env = [
        ("SLIPWAY_PLATFORM_URL", format!("http://127.0.0.1:{port}")),
        (
            "SLIPWAY_TOKEN",
            std::fs::read_to_string(&token_file)
                .unwrap()
                .trim()
                .to_owned(),
        ),
    ];

    let out = slipway(
        work.path(),
        &env,
        &["new", "daily", "--template", "python-api"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Next: cd"));
    let project = work.path().join("daily");

    let out = slipway(&project, &env, &["build"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for step in [
        "packing the build context",
        "uploading",
        "building 1 service(s)",
    ] {
        assert!(stderr.contains(step), "progress lacks {step:?}: {stderr}");
    }
    assert!(stdout.contains("Built app "), "{stdout}");
    let app_id = stdout
        .split("Built app ")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_owned();
    std::fs::write(
        project.join(".app"),
        format!("{{\"app_id\":\"{app_id}\",\"name\":\"daily\",\"platform_url\":\"x\"}}"),
    )
    .unwrap();
    assert!(
        std::fs::read_to_string(project.join("devfile.yaml"))
            .unwrap()
            .contains("imageUri: ")
    );

    let out = slipway(&project, &env, &["status", "--watch"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("RUNNING  http://daily.localhost:"),
        "{stdout}"
    );

    let out = slipway(&project, &env, &["logs"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("=== api build") && stdout.contains("=== api runtime"),
        "{stdout}"
    );

    let out = slipway(
        work.path(),
        &[],
        &["status", "00000000-0000-4000-8000-000000000000"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("SLIPWAY_PLATFORM_URL"));
}
