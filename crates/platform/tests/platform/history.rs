//! Deployment history, rollback to the exact configuration (images and secret versions), the
//! diff of two deployments, the diagnosis of a failed deployment, and retention.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use slipway_platform::Backend;

use crate::deploy::wait_status;
use crate::secrets::create;
use crate::support::{TestApp, backends, python_server, spawn_app, tar_zst};

/// Answers `/` with its release marker and the secret it was given; `crash` makes it exit
/// at start with a message on stderr.
fn server(release: &str, crash: bool) -> String {
    let start = if crash {
        "import sys\nsys.stderr.write('boom: release cannot find its config file\\n')\nsys.exit(3)\n"
    } else {
        ""
    };
    python_server(
        start,
        &format!(r#""{release}|" + os.environ.get("password", "-")"#),
    )
}

fn devfile(name: &str, release: &str) -> String {
    format!(
        r#"schemaVersion: 2.2.0
metadata:
  name: {name}
  displayName: History test ({release})
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
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: build, isDefault: true }}
  - id: run
    exec:
      component: api
      commandLine: python3 server.py
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: run, isDefault: true }}
"#
    )
}

async fn deploy(app: &TestApp, id: &str, name: &str, release: &str, crash: bool) {
    let files = vec![
        (
            "devfile.yaml".to_owned(),
            devfile(name, release).into_bytes(),
        ),
        ("server.py".to_owned(), server(release, crash).into_bytes()),
        (
            "Dockerfile".to_owned(),
            b"FROM scratch\nCOPY . /app\n".to_vec(),
        ),
    ];
    let (status, body) = app
        .upload(&app.owner, id, "", "application/zstd", tar_zst(&files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

/// The app's deployments, newest first (asserting the list answered 200).
pub(crate) async fn history(app: &TestApp, id: &str) -> Vec<Value> {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/deployments"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["deployments"].as_array().unwrap().clone()
}

/// Waits until the app has `count` deployments and the newest has finished (RUNNING or
/// FAILED); returns the history.
async fn settled(app: &TestApp, id: &str, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let all = history(app, id).await;
        if all.len() == count && matches!(all[0]["status"].as_str(), Some("RUNNING" | "FAILED")) {
            return all;
        }
        assert!(
            Instant::now() < deadline,
            "never settled at {count}: {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

async fn fetch(app: &TestApp, name: &str) -> String {
    let gateway = app.gateway.unwrap();
    app.client
        .get(format!("http://{gateway}/"))
        .header("host", format!("{name}.localhost:{}", gateway.port()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A fresh server with an app `name` that has the app secret `cfg` = `{"password"}` at
/// version 1; returns the server and the app's id.
async fn app_with_secret(backend: Backend, name: &str, password: &str) -> (TestApp, String) {
    let app = spawn_app(backend).await;
    let id = app.register(&app.owner, name).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = create(
        &app,
        &app.owner,
        json!({"secret_type": "app", "app_id": id, "secret_path": "cfg", "data": {"password": password}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (app, id)
}

fn secrets_of(deployment: &Value) -> Value {
    deployment["services"][0]["secrets"].clone()
}

#[tokio::test]
async fn rollback_restores_the_images_and_the_secret_versions_it_ran_with() {
    for backend in backends() {
        let (app, id) = app_with_secret(backend, "rolly", "pw-1").await;
        deploy(&app, &id, "rolly", "v1", false).await;
        let first = settled(&app, &id, 1).await;
        assert_eq!(first[0]["status"], "RUNNING", "{backend:?}: {first:?}");
        assert_eq!(fetch(&app, "rolly").await, "v1|pw-1");
        let v1 = first[0]["id"].as_str().unwrap().to_owned();

        update_secret(&app, &id, "pw-2").await;
        deploy(&app, &id, "rolly", "v2", false).await;
        let second = settled(&app, &id, 2).await;
        assert_eq!(second[0]["status"], "RUNNING", "{second:?}");
        assert_eq!(fetch(&app, "rolly").await, "v2|pw-2");
        let v2 = second[0]["id"].as_str().unwrap().to_owned();

        let (status, body) = rollback(&app, &id, &v1).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let third = settled(&app, &id, 3).await;
        assert_eq!(third[0]["status"], "RUNNING", "{third:?}");
        // The service sees secret version 1 again and serves v1's response.
        assert_eq!(fetch(&app, "rolly").await, "v1|pw-1", "{backend:?}");

        // The history shows all three, each with what it ran.
        assert_eq!(third[0]["cause"], "rollback");
        assert_eq!(third[0]["rollback_of"], v1.as_str());
        assert!(third[0]["started_by"].is_string());
        assert_eq!(third[1]["id"], v2.as_str());
        assert_eq!(third[2]["id"], v1.as_str());
        assert_eq!(third[2]["cause"], "build");
        assert_eq!(
            secrets_of(&third[2]),
            json!([{"path": "cfg", "version": 1}])
        );
        assert_eq!(
            secrets_of(&third[1]),
            json!([{"path": "cfg", "version": 2}])
        );
        assert_eq!(
            secrets_of(&third[0]),
            json!([{"path": "cfg", "version": 1}])
        );
        assert_eq!(
            third[0]["services"][0]["image_digest"],
            third[2]["services"][0]["image_digest"]
        );
        assert_eq!(third[0]["devfile_digest"], third[2]["devfile_digest"]);
        assert_ne!(third[1]["devfile_digest"], third[2]["devfile_digest"]);
        let text = serde_json::to_string(&third).unwrap();
        assert!(
            !text.contains("pw-1") && !text.contains("pw-2"),
            "no values"
        );

        // The diff of the rollback against v2: the image, the devfile line and the secret.
        let rollback = third[0]["id"].as_str().unwrap();
        let (status, diff) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/deployments/{rollback}/diff"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{diff}");
        assert_eq!(diff["from"], v2.as_str());
        assert_eq!(diff["images"].as_array().unwrap().len(), 1, "{diff}");
        assert_eq!(
            diff["secrets"],
            json!([{"service": "api", "path": "cfg", "from_version": 2, "to_version": 1}])
        );
        let lines = diff["devfile"]["diff"].as_str().unwrap();
        assert!(
            lines.contains("-  displayName: History test (v2)")
                && lines.contains("+  displayName: History test (v1)"),
            "{lines}"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn a_rollback_whose_image_is_gone_is_refused_and_changes_nothing() {
    for backend in backends() {
        let (app, id) = app_with_secret(backend, "gone", "x").await;
        deploy(&app, &id, "gone", "v1", false).await;
        let first = settled(&app, &id, 1).await;
        assert_eq!(first[0]["status"], "RUNNING", "{first:?}");
        let v1 = first[0]["id"].as_str().unwrap();
        let digest = first[0]["services"][0]["image_digest"].as_str().unwrap();
        let blob = app
            .data_dir()
            .join("images/blobs/sha256")
            .join(digest.trim_start_matches("sha256:"));
        std::fs::remove_file(&blob).expect("the manifest blob exists");

        let (status, body) = rollback(&app, &id, v1).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("image") && message.contains(digest),
            "{backend:?}: {message}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(history(&app, &id).await.len(), 1, "no deployment was made");
        assert_eq!(fetch(&app, "gone").await, "v1|x", "still serving");
        app.finish().await;
    }
}

#[tokio::test]
async fn the_diagnosis_names_the_crash_line_and_the_change_since_the_last_good_deployment() {
    for backend in backends() {
        let (app, id) = app_with_secret(backend, "crashy", "x").await;
        deploy(&app, &id, "crashy", "v1", false).await;
        let first = settled(&app, &id, 1).await;
        assert_eq!(first[0]["status"], "RUNNING", "{first:?}");
        deploy(&app, &id, "crashy", "v2", true).await;
        let second = settled(&app, &id, 2).await;
        assert_eq!(second[0]["status"], "FAILED", "{second:?}");
        wait_status(&app, &id, &["RUNNING", "FAILED"]).await;

        let (status, diagnosis) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/diagnosis"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{diagnosis}");
        assert_eq!(diagnosis["deployment_id"], second[0]["id"]);
        assert!(diagnosis["reason"].is_string(), "{diagnosis}");
        let failing = diagnosis["failing_services"].as_array().unwrap();
        assert_eq!(failing.len(), 1, "{diagnosis}");
        assert!(
            failing[0]["log_tail"]
                .as_str()
                .unwrap()
                .contains("boom: release cannot find its config file"),
            "{backend:?}: {diagnosis}"
        );
        assert_eq!(diagnosis["last_good_deployment_id"], first[0]["id"]);
        let changes = &diagnosis["changes_since_last_good"];
        assert_eq!(changes["images"].as_array().unwrap().len(), 1, "{changes}");
        assert!(
            changes["devfile"]["diff"]
                .as_str()
                .unwrap()
                .contains("+  displayName: History test (v2)"),
            "{changes}"
        );
        assert_eq!(diagnosis["devfile"]["valid"], true, "{diagnosis}");
        app.finish().await;
    }
}

async fn update_secret(app: &TestApp, id: &str, password: &str) {
    let (status, body) = app
        .send(
            Method::PUT,
            "/v1/secrets/entry",
            Some(&app.owner),
            Some(
                json!({"secret_type": "app", "app_id": id, "secret_path": "cfg", "data": {"password": password}})
                    .to_string(),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

pub(crate) async fn rollback(app: &TestApp, id: &str, to: &str) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/apps/{id}/rollback"),
        Some(&app.owner),
        Some(json!({ "deployment_id": to }).to_string()),
    )
    .await
}

#[tokio::test]
async fn prune_keeps_what_the_newest_deployments_need_and_says_what_it_removed() {
    for backend in backends() {
        let (mut app, id) = app_with_secret(backend, "prune", "pw-1").await;
        for (n, release) in ["v1", "v2", "v3"].into_iter().enumerate() {
            if n > 0 {
                update_secret(&app, &id, &format!("pw-{}", n + 1)).await;
            }
            deploy(&app, &id, "prune", release, false).await;
            let all = settled(&app, &id, n + 1).await;
            assert_eq!(all[0]["status"], "RUNNING", "{backend:?}: {all:?}");
        }
        let all = history(&app, &id).await;
        let (v1, v2) = (
            all[2]["id"].as_str().unwrap(),
            all[1]["id"].as_str().unwrap(),
        );
        let v1_image = all[2]["services"][0]["image_digest"].as_str().unwrap();
        let data_dir = app.data_dir();
        let url = app.config.database_url.clone();

        // A running server holds the data directory: the pass refuses and removes nothing.
        let refused = slipway_platform::prune(&data_dir, url.as_deref(), 2, false)
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("in use"), "{refused}");
        app.stop().await;

        let planned = slipway_platform::prune(&data_dir, url.as_deref(), 2, true)
            .await
            .unwrap();
        let removed = slipway_platform::prune(&data_dir, url.as_deref(), 2, false)
            .await
            .unwrap();
        for report in [&planned, &removed] {
            let digests: Vec<_> = report
                .images_removed
                .iter()
                .map(|i| i.digest.as_str())
                .collect();
            assert_eq!(digests, vec![v1_image], "{backend:?}: {report:?}");
            assert_eq!(
                report.images_removed[0].built_for,
                vec![format!("{id}/api")]
            );
            assert!(
                report.blobs_removed >= 3 && report.bytes_freed > 0,
                "{report:?}"
            );
            assert_eq!(
                report.secret_versions_removed,
                vec![slipway_platform::retention::RemovedSecretVersion {
                    app_id: id.clone(),
                    path: "cfg".into(),
                    version: 1,
                }]
            );
        }
        assert!(planned.dry_run && !removed.dry_run);
        assert_eq!(
            planned.unpacked_layers_removed, 0,
            "a dry run removes nothing"
        );
        assert!(
            removed.unpacked_layers_removed >= 1,
            "v1's unpacked layer goes with its blob: {removed:?}"
        );
        let again = slipway_platform::prune(&data_dir, url.as_deref(), 2, false)
            .await
            .unwrap();
        assert!(
            again.images_removed.is_empty() && again.secret_versions_removed.is_empty(),
            "{again:?}"
        );

        app.restart().await;
        // The restart redeploys the running v3.
        let restarted = settled(&app, &id, 4).await;
        assert_eq!(restarted[0]["status"], "RUNNING", "{restarted:?}");
        assert_eq!(fetch(&app, "prune").await, "v3|pw-3");

        // v1 is outside the newest two: its image and secret version 1 are gone.
        let (status, body) = rollback(&app, &id, v1).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(v1_image) && message.contains("version 1"),
            "{message}"
        );
        // v2 is kept whole.
        let (status, body) = rollback(&app, &id, v2).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let last = settled(&app, &id, 5).await;
        assert_eq!(last[0]["status"], "RUNNING", "{last:?}");
        assert_eq!(fetch(&app, "prune").await, "v2|pw-2", "{backend:?}");
        app.finish().await;
    }
}

#[tokio::test]
async fn the_vault_history_cap_keeps_the_versions_a_deployment_ran_with() {
    for backend in backends() {
        let (app, id) = app_with_secret(backend, "capped", "pw-1").await;
        deploy(&app, &id, "capped", "v1", false).await;
        assert_eq!(settled(&app, &id, 1).await[0]["status"], "RUNNING");
        // Versions 2..=102: the cap of 100 drops versions 1 and 2, but version 1 ran.
        for n in 2..=102 {
            update_secret(&app, &id, &format!("pw-{n}")).await;
        }
        let (status, body) = app
            .send(
                Method::GET,
                &format!("/v1/secrets/entry?secret_type=app&app_id={id}&secret_path=cfg"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let versions: Vec<i64> = body["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let expected: Vec<i64> = std::iter::once(1).chain(3..=102).collect();
        assert_eq!(versions, expected, "{backend:?}");
        app.finish().await;
    }
}
