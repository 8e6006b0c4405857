//! The acceptance test with the real template: a project scaffolded from
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
        durable: None,
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
