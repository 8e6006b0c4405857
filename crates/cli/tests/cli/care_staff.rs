//! `slipway care tasks` and `slipway care answer` against a real `slipway care serve --demo`:
//! an answered request corrected through `…/amend` is listed amended, in a table and as
//! JSON, and its answer names the fields corrected; without a configured service the
//! commands say which variable to set; `--amend-window` refuses what is not a duration.

use std::process::{Command, Output, Stdio};

use crate::care_crash::{free_port, request, wait_ready};

const DEMO_REQUEST: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";

fn answers(weight: &str) -> String {
    serde_json::json!([
        { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f01", "value": "1980-05-06" },
        { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f02", "value": weight },
        { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f03", "value": "Evening" },
        { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f04", "value": "true" },
    ])
    .to_string()
}

fn slipway(port: Option<u16>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_slipway"));
    cmd.args(args)
        .env_remove("SLIPWAY_CARE_URL")
        .env_remove("SLIPWAY_CARE_TOKEN")
        .env_remove("SLIPWAY_CARE_NAMESPACE");
    if let Some(port) = port {
        cmd.env("SLIPWAY_CARE_URL", format!("http://127.0.0.1:{port}"))
            .env("SLIPWAY_CARE_TOKEN", "demo-staff");
    }
    cmd.output().expect("slipway runs")
}

/// The server, killed however the test ends (a panic too, or it would hold the test's
/// output open).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn an_amended_answer_is_listed_and_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_slipway"))
            .args([
                "care",
                "serve",
                "--demo",
                "--amend-window",
                "2h",
                "--listen",
            ])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data-dir")
            .arg(dir.path())
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("slipway care serve starts"),
    );
    wait_ready(port, &mut server.0);
    let path = format!("/care/missingInformationRequest/{DEMO_REQUEST}");
    let (status, body) = request(port, "POST", &path, &answers("72.5")).expect("submit");
    assert_eq!(status, 200, "{body}");

    // Answered, not yet corrected: not among the amended.
    let out = slipway(Some(port), &["care", "tasks", "--amended", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(listed, serde_json::json!([]));

    let (status, body) =
        request(port, "POST", &format!("{path}/amend"), &answers("27.5")).expect("amend");
    assert_eq!(status, 200, "{body}");

    let out = slipway(Some(port), &["care", "tasks", "--amended", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(listed[0]["uuid"], DEMO_REQUEST, "{listed}");
    assert_eq!(listed[0]["amended"], true);
    assert_eq!(listed[0]["status"], "completed");

    let out = slipway(Some(port), &["care", "tasks", "--status", "completed"]);
    let table = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(table.contains("completed (amended)"), "{table}");
    assert!(table.contains(DEMO_REQUEST), "{table}");

    let out = slipway(Some(port), &["care", "answer", DEMO_REQUEST]);
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(shown.contains("amended"), "{shown}");
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("Weight (kg) ") && l.trim_end().ends_with(" 27.5")),
        "{shown}"
    );
    assert!(
        shown.contains("corrected by") && shown.contains(": Weight (kg)"),
        "{shown}"
    );
    assert!(shown.contains("You can correct it until"), "{shown}");

    // A bad status is refused naming the rule; nothing is asked of the service.
    let out = slipway(Some(port), &["care", "tasks", "--status", "done"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("\"done\" is none of requested"),
        "{}",
        text(&out.stderr)
    );
    drop(server);

    // No service configured: which variable to set.
    let out = slipway(None, &["care", "tasks"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("SLIPWAY_CARE_URL"),
        "{}",
        text(&out.stderr)
    );

    // Not a duration: clap names the flag, and no server starts.
    let out = slipway(None, &["care", "serve", "--amend-window", "soon"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--amend-window"),
        "{}",
        text(&out.stderr)
    );
}
