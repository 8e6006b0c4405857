//! Scheduled jobs end to end on the process runtime: jobs of a devfile run on their schedule
//! in their service's image and environment (an app secret included), each run recorded with
//! its output; a run still running when the next is due is recorded as skipped under
//! `concurrency: forbid`; a failing run is recorded failed with its exit code and last lines;
//! a run asked for by hand runs at once; due times passed while the platform was down are
//! recorded as missed, and `runMissed: true` makes one run up at start.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::deploy::wait_status;
use crate::secrets::create;
use crate::support::{TestApp, backends, python_server, spawn_app, tar_zst};

fn devfile() -> String {
    r#"schemaVersion: 2.2.0
metadata:
  name: cron
  displayName: Jobs test
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
      secrets: [cfg]
    container:
      image: api
      endpoints:
        - name: http
          targetPort: 8002
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
  - id: greet
    attributes:
      schedule: "*/2 * * * * *"
    exec:
      component: api
      commandLine: echo "greeting=$GREETING job=$SLIPWAY_JOB"
  - id: slow
    attributes:
      schedule: "* * * * * *"
      concurrency: forbid
    exec:
      component: api
      commandLine: sleep 2.5
  - id: broken
    attributes:
      schedule: "0 0 1 1 *"
      timeZone: Europe/Paris
    exec:
      component: api
      commandLine: echo "cannot reach the mail server" >&2; exit 3
  - id: catchup
    attributes:
      schedule: "*/3 * * * * *"
      runMissed: true
    exec:
      component: api
      commandLine: echo caught up
"#
    .to_owned()
}

async fn get(app: &TestApp, path: &str) -> Value {
    let (status, body) = app.send(Method::GET, path, Some(&app.owner), None).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

async fn runs(app: &TestApp, id: &str, job: &str) -> Vec<Value> {
    get(app, &format!("/v1/apps/{id}/jobs/{job}/runs")).await["runs"]
        .as_array()
        .unwrap()
        .clone()
}

/// Waits until `job` has a run for which `wanted` holds; that run.
async fn wait_run(app: &TestApp, id: &str, job: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let all = runs(app, id, job).await;
        if let Some(r) = all.iter().find(|r| wanted(r)) {
            return r.clone();
        }
        assert!(Instant::now() < deadline, "{job}: no such run in {all:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn log_of(app: &TestApp, run: &Value) -> String {
    let path = run["log_path"].as_str().expect("a log path");
    let r = app
        .client
        .get(format!("{}{path}", app.base))
        .bearer_auth(&app.owner)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    r.text().await.unwrap()
}

#[tokio::test]
async fn scheduled_jobs_run_in_the_apps_environment_and_every_due_time_is_recorded() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let id = app.register(&app.owner, "cron").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, body) = create(
            &app,
            &app.owner,
            json!({"secret_type": "app", "app_id": id, "secret_path": "cfg", "data": {"GREETING": "bonjour"}}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let files = vec![
            ("devfile.yaml".to_owned(), devfile().into_bytes()),
            (
                "server.py".to_owned(),
                python_server("", "\"ok\"").into_bytes(),
            ),
            (
                "Dockerfile".to_owned(),
                b"FROM scratch\nCOPY . /app\n".to_vec(),
            ),
        ];
        let (status, body) = app
            .upload(&app.owner, &id, "", "application/zstd", tar_zst(&files))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");

        let listed = get(&app, &format!("/v1/apps/{id}/jobs")).await;
        let names: Vec<&str> = listed["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["greet", "slow", "broken", "catchup"], "{listed}");
        let broken = &listed["jobs"][2];
        assert_eq!(broken["time_zone"], "Europe/Paris");
        assert!(
            broken["next_run_at"]
                .as_str()
                .unwrap()
                .contains("-12-31T23:00:00"),
            "midnight on 1 January in Paris is 23:00 UTC: {broken}"
        );

        // On its schedule, in the service's environment (the app secret's variable).
        let ran = wait_run(&app, &id, "greet", |r| r["status"] == "succeeded").await;
        assert_eq!(ran["trigger"], "schedule");
        assert_eq!(ran["exit_code"], 0);
        assert_eq!(ran["deployment_id"], running["deployment_id"]);
        assert!(ran["scheduled_at"].is_string(), "{ran}");
        assert_eq!(
            log_of(&app, &ran).await.trim(),
            "greeting=bonjour job=greet"
        );

        // Due every second, running 2.5 s: the due times in between are skipped.
        let skipped = wait_run(&app, &id, "slow", |r| r["status"] == "skipped").await;
        assert!(
            skipped["reason"]
                .as_str()
                .unwrap()
                .contains("concurrency: forbid"),
            "{skipped}"
        );

        // By hand: runs now, and a failure says why.
        let (status, body) = app
            .send(
                Method::POST,
                &format!("/v1/apps/{id}/jobs/broken/run"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(body["trigger"], "manual");
        let failed = wait_run(&app, &id, "broken", |r| r["status"] == "failed").await;
        assert_eq!(failed["exit_code"], 3);
        let reason = failed["reason"].as_str().unwrap();
        assert!(
            reason.contains("exit code 3") && reason.contains("cannot reach the mail server"),
            "{reason}"
        );
        let (status, body) = app
            .send(
                Method::POST,
                &format!("/v1/apps/{id}/jobs/nope/run"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

        // Down over some due times: recorded missed, and one run made up at start.
        wait_run(&app, &id, "catchup", |r| r["status"] == "succeeded").await;
        app.stop().await;
        tokio::time::sleep(Duration::from_secs(7)).await;
        app.start_again().await;
        wait_status(&app, &id, &["RUNNING"]).await;
        let missed = wait_run(&app, &id, "catchup", |r| r["status"] == "missed").await;
        assert!(
            missed["reason"].as_str().unwrap().contains("not running"),
            "{missed}"
        );
        let made_up = wait_run(&app, &id, "catchup", |r| r["trigger"] == "missed").await;
        assert!(made_up["scheduled_at"].is_null(), "{made_up}");
        app.finish().await;
    }
}
