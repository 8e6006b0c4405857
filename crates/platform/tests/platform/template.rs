//! The issue's acceptance test with the real template: a project scaffolded from
//! `python-api` by `slipway_toolkit::scaffold_app` is registered, uploaded, built with the
//! native builder (its devfile's build command pip-installs FastAPI and uvicorn into a
//! virtual environment), deploys on the process runtime, answers `/health` through the
//! gateway, stops answering when disabled, comes back when enabled, and is gone when deleted.
//!
//! pip's downloads go to one cache shared by every run of this test (a directory under the
//! system temporary directory, linked in as the data directory's `cache/pip`), so only the
//! first run on a machine fetches from PyPI; later ones install from the cache in seconds.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use slipway_toolkit::{ScaffoldArgs, scaffold_app};

use crate::deploy::{post, wait_status};
use crate::support::{TestApp, backends, spawn_app};

/// Every file of a project scaffolded from `template` as app `name`, relative to its root.
pub(crate) fn template_files(template: &str, name: &str) -> Vec<(String, Vec<u8>)> {
    scaffolded_files(template, name, None)
}

/// The same, with the durable overlay when `durable`.
fn scaffolded_files(template: &str, name: &str, durable: Option<bool>) -> Vec<(String, Vec<u8>)> {
    let out = tempfile::tempdir().unwrap();
    let scaffolded = scaffold_app(&ScaffoldArgs {
        app_name: name.into(),
        app_type: template.into(),
        output_directory: out.path().display().to_string(),
        description: None,
        display_name: None,
        port: None,
        fabrics: None,
        permissions: None,
        overwrite: None,
        durable,
    })
    .expect("scaffold");
    project_files(Path::new(&scaffolded.project_path))
}

/// Every file of the scaffolded project, relative to its root.
fn project_files(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read the project")
            .map(|e| e.expect("entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read(&path).expect("read a project file")));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// Links the data directory's pip cache to the cache every run of this test shares.
fn share_pip_cache(app: &TestApp) {
    let shared = std::env::temp_dir().join("slipway-platform-test-pip-cache");
    std::fs::create_dir_all(&shared).expect("shared pip cache");
    let cache = app.data_dir().join("cache");
    std::fs::create_dir_all(&cache).expect("cache dir");
    let link = cache.join("pip");
    if !link.exists() {
        std::os::unix::fs::symlink(&shared, &link).expect("link the pip cache");
    }
}

/// `GET http://127.0.0.1:<gateway>/health` with `Host: <host>:<port>`; None when the
/// connection fails.
async fn health_through_gateway(app: &TestApp, host: &str) -> Option<(StatusCode, String)> {
    let gateway = app.gateway.expect("the gateway listens");
    let r = app
        .client
        .get(format!("http://{gateway}/health"))
        .header("host", format!("{host}:{}", gateway.port()))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    let status = r.status();
    Some((status, r.text().await.unwrap_or_default()))
}

#[tokio::test]
async fn the_python_api_template_builds_deploys_answers_suspends_resumes_and_deletes() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        share_pip_cache(&app);
        let files = template_files("python-api", "orders-api");
        assert!(files.iter().any(|(p, _)| p == "requirements.txt"));

        let created = app.register(&app.owner, "orders-api").await;
        let id = created["id"].as_str().unwrap().to_owned();
        let build_id = app.build_one(&id, &files).await;
        let built = app
            .wait_build(&build_id, &["succeeded", "failed", "cancelled"])
            .await;
        assert_eq!(
            built["status"], "succeeded",
            "{backend:?}: {}",
            built["log"]
        );
        assert_eq!(built["builder"], "native");
        let log = built["log"].as_str().unwrap();
        assert!(log.contains("pip install -r requirements.txt"), "{log}");

        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        let url = running["app_url"].as_str().unwrap();
        assert!(url.starts_with("http://127.0.0.1:"), "{running}");
        assert!(
            crate::deploy::urllib_get(&format!("{url}/health"))
                .await
                .contains("ok")
        );
        let (status, body) = health_through_gateway(&app, "orders-api.localhost")
            .await
            .expect("the gateway answers");
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("ok"), "FastAPI's /health: {body}");
        let (status, _) = health_through_gateway(&app, "api.orders-api.localhost")
            .await
            .expect("the gateway answers");
        assert_eq!(status, StatusCode::OK);

        // Disable: suspended, and the URL stops answering (the gateway has no instance).
        let (status, body) = post(&app, &id, "disable").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "suspended");
        let (status, _) = health_through_gateway(&app, "orders-api.localhost")
            .await
            .expect("the gateway itself answers");
        assert_eq!(status, StatusCode::BAD_GATEWAY);

        // Enable: RUNNING again, and the URL answers again.
        let (status, body) = post(&app, &id, "enable").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{running}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answer = health_through_gateway(&app, "orders-api.localhost").await;
            if answer.as_ref().is_some_and(|(s, _)| *s == StatusCode::OK) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "never answered again: {answer:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // Delete: gone from the list, the URL is unknown, the name is free.
        let (status, body) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        assert!(
            !app.list_all(&app.owner)
                .await
                .contains(&"orders-api".to_owned())
        );
        let (status, _) = health_through_gateway(&app, "orders-api.localhost")
            .await
            .expect("the gateway itself answers");
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        app.register(&app.owner, "orders-api").await;
        app.finish().await;
    }
}

/// The processes whose command line mentions `needle` (a data directory), by pid.
fn pids_running(program: &str, needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let line = String::from_utf8_lossy(&c);
                line.contains(program) && line.contains(needle)
            })
        })
        .collect()
}

/// POST `body` (JSON) to `url`, retried while Restate is (re)starting; status and body.
async fn restate_post(client: &reqwest::Client, url: &str, body: &str) -> (u16, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let sent = client
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .timeout(Duration::from_secs(60))
            .send()
            .await;
        match sent {
            Ok(r) if r.status().as_u16() < 500 => {
                let status = r.status().as_u16();
                return (status, r.text().await.unwrap_or_default());
            }
            other => assert!(Instant::now() < deadline, "{url} never answered: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Registers `name`, builds `files` and waits until it runs; the ingress URL of the app's
/// Restate server (the `durable` resource named after `service`), as its owner reveals it.
async fn deployed_ingress(
    app: &TestApp,
    name: &str,
    files: &[(String, Vec<u8>)],
    service: &str,
) -> String {
    share_pip_cache(app);
    let id = app.register(&app.owner, name).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let build_id = app.build_one(&id, files).await;
    let built = app
        .wait_build(&build_id, &["succeeded", "failed", "cancelled"])
        .await;
    assert_eq!(built["status"], "succeeded", "{}", built["log"]);
    let running = wait_status(app, &id, &["RUNNING", "FAILED"]).await;
    assert_eq!(running["status"], "RUNNING", "{running}");
    let (status, restate) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/resources/durable/{service}/credentials"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{restate}");
    assert_eq!(restate["engine"], "restate");
    restate["url"].as_str().unwrap().to_owned()
}

/// The durable-agent template as scaffolded, with no change: the platform runs a Restate
/// server for it and registers the deployed endpoint, so the README's workflow call answers
/// through the ingress; a `kill -9` of the Restate server while a run waits for approval is
/// restarted by the platform, and the run then completes exactly once (one history entry).
/// One platform database (SQLite): what is under test is the app's Restate server.
#[tokio::test]
async fn the_durable_agent_template_runs_its_workflows_through_the_platforms_restate() {
    let app = spawn_app(backends()[0]).await;
    let files = template_files("durable-agent", "support");
    let ingress = deployed_ingress(&app, "support", &files, "agent").await;
    let client = reqwest::Client::new();

    // The README's first call: a normal ticket runs straight through.
    let (status, body) = restate_post(
        &client,
        &format!("{ingress}/SupportAgent/t-1/run"),
        r#"{"customer": "ada", "subject": "Cannot login", "body": "password reset fails"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let resolution: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(resolution["status"], "sent", "{body}");
    assert_eq!(
        resolution["category"], "bug",
        "\"fails\" is a bug word: {body}"
    );

    // An urgent one waits for approval; its Restate server is killed meanwhile.
    let (status, body) = restate_post(
        &client,
        &format!("{ingress}/SupportAgent/t-2/run/send"),
        r#"{"customer": "ada", "subject": "Refund please", "body": "urgent: charged twice"}"#,
    )
    .await;
    assert!(status == 200 || status == 202, "{status} {body}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stage = client
            .get(format!("{ingress}/SupportAgent/t-2/status"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if stage.contains("awaiting approval") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never awaiting approval: {stage}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let data_dir = app.data_dir().display().to_string();
    let pids = pids_running("restate-server", &data_dir);
    assert_eq!(pids.len(), 1, "one Restate server for the app");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pids[0]),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while pids_running("restate-server", &data_dir) == pids {
        assert!(
            Instant::now() < deadline,
            "the Restate server was not restarted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let (status, body) = restate_post(
        &client,
        &format!("{ingress}/SupportAgent/t-2/approve"),
        r#"{"approved": true, "reviewer": "sam"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let attached = client
        .get(format!(
            "{ingress}/restate/workflow/SupportAgent/t-2/attach"
        ))
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    let status = attached.status().as_u16();
    let body = attached.text().await.unwrap();
    assert!(body.contains("\"reviewed_by\":\"sam\""), "{body}");
    assert_eq!(status, 200, "{body}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let history = client
            .get(format!("{ingress}/CustomerMemory/ada/history"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let runs = history.matches("\"t-2\"").count();
        if runs == 1 && history.contains("\"t-1\"") {
            break;
        }
        assert!(runs <= 1, "the approved run was recorded twice: {history}");
        assert!(
            Instant::now() < deadline,
            "the approved run never recorded: {history}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.finish().await;
}

/// The durable overlay on the python-api template (uvicorn, HTTP/1.1 only): registered in
/// Restate's request-response mode after the deploy, its DURABLE.md's workflow call answers.
#[tokio::test]
async fn the_durable_overlay_answers_its_workflow_call_through_the_platforms_restate() {
    let app = spawn_app(backends()[0]).await;
    let files = scaffolded_files("python-api", "orders", Some(true));
    let ingress = deployed_ingress(&app, "orders", &files, "api").await;
    let (status, body) = restate_post(
        &reqwest::Client::new(),
        &format!("{ingress}/OrderWorkflow/order-42/run"),
        r#"{"customer": "ada", "items": ["book"]}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("order-42") || body.contains("ada"), "{body}");
    app.finish().await;
}
