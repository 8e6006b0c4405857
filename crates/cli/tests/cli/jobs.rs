//! `slipway jobs` against a real platform process: a project whose devfile has a scheduled
//! job is built; `jobs list` shows it with its schedule and next due time, `run-now` starts a
//! run, `runs --json` lists it succeeded, and `log` prints its output.

use std::time::{Duration, Instant};

use crate::daily::{platform, slipway};
use crate::stateful_crash::{build, wait_status};

const SERVER: &str = r#"import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

const DEVFILE: &str = r#"schemaVersion: 2.2.0
metadata:
  name: nightly
  displayName: Nightly
components:
  - name: api-image
    image:
      imageName: api
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: api
    attributes:
      healthPath: /health
    container:
      image: api
      endpoints:
        - name: http
          targetPort: 8004
commands:
  - id: build
    exec:
      component: api
      commandLine: "true"
      workingDir: ${PROJECT_SOURCE}
      group: { kind: build, isDefault: true }
  - id: run
    exec:
      component: api
      commandLine: python3 server.py
      workingDir: ${PROJECT_SOURCE}
      group: { kind: run, isDefault: true }
  - id: report
    attributes:
      schedule: "0 3 * * *"
      timeZone: UTC
    exec:
      component: api
      commandLine: echo "report for $SLIPWAY_JOB"
"#;

fn stdout(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn jobs_are_listed_run_by_hand_and_their_output_read_from_the_cli() {
    let work = tempfile::tempdir().unwrap();
    let (_server, _gateway, env) = platform(work.path());
    let project = work.path().join("nightly");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("devfile.yaml"), DEVFILE).unwrap();
    std::fs::write(project.join("server.py"), SERVER).unwrap();
    std::fs::write(project.join("Dockerfile"), "FROM scratch\nCOPY . /app\n").unwrap();
    build(&project, &env);
    wait_status(&project, &env, &["RUNNING"]);

    let list = stdout(&slipway(&project, &env, &["jobs", "list", "nightly"]));
    for shown in ["JOB", "report", "0 3 * * *", "UTC", "T03:00:00", "never"] {
        assert!(list.contains(shown), "{shown} in {list}");
    }
    let started = stdout(&slipway(
        &project,
        &env,
        &["jobs", "run-now", "nightly", "report"],
    ));
    let run_id = started
        .split_whitespace()
        .find(|w| w.starts_with("run_"))
        .unwrap_or_else(|| panic!("a run id in {started}"))
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let json = stdout(&slipway(
            &project,
            &env,
            &["jobs", "runs", "nightly", "report", "--json"],
        ));
        let runs: serde_json::Value = serde_json::from_str(&json).unwrap();
        let run = &runs["runs"][0];
        if run["status"] == "succeeded" {
            assert_eq!(run["id"], run_id.as_str());
            assert_eq!(run["trigger"], "manual");
            break;
        }
        assert!(Instant::now() < deadline, "never succeeded: {json}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = stdout(&slipway(
        &project,
        &env,
        &["jobs", "log", "nightly", "report", &run_id],
    ));
    assert_eq!(log.trim(), "report for report");
    // A job the app does not have: an error that says so.
    let out = slipway(&project, &env, &["jobs", "run-now", "nightly", "nope"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no scheduled job named \"nope\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
