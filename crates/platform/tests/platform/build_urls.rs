//! A build upload answers the app's URLs (the default `ports` gateway mode: one loopback
//! port per public service, bound from the first upload on): the same URLs after a
//! redeploy, a platform restart, a rollback and a prebuilt image upload, each answering HTTP
//! once the app is RUNNING. The answers match the OpenAPI document's schemas.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use slipway_platform::http::openapi::DOCUMENT;

use crate::deploy::{SERVER, Service, devfile, status_of, urllib_get};
use crate::prebuilt::{archive, make_layout, upload_prebuilt};
use crate::support::{TestApp, backends, spawn_app, tar_zst};

/// `web` (public, listed first, depends on `api`), `api` (public) and `worker` (internal).
fn three_services(app: &str) -> String {
    let service = |name, port, depends_on| Service {
        name,
        port,
        run: match name {
            "web" => "python3 server.py web",
            "api" => "python3 server.py api",
            _ => "python3 server.py worker",
        },
        depends_on,
    };
    devfile(
        app,
        "echo built > BUILT",
        &[
            service("web", 3000, &["api"]),
            service("api", 8002, &[]),
            service("worker", 8003, &[]),
        ],
    )
    .replacen(
        "          targetPort: 8003\n",
        "          targetPort: 8003\n          exposure: internal\n",
        1,
    )
}

/// The project's files; `version` makes each upload's context differ.
fn files(devfile: &str, version: &str) -> Vec<(String, Vec<u8>)> {
    vec![
        ("devfile.yaml".into(), devfile.as_bytes().to_vec()),
        ("server.py".into(), SERVER.as_bytes().to_vec()),
        ("VERSION".into(), version.as_bytes().to_vec()),
        ("Dockerfile".into(), b"FROM scratch\nCOPY . /app\n".to_vec()),
    ]
}

/// Asserts that `body` is valid against the document's schema `name`.
fn assert_matches_schema(name: &str, body: &Value) {
    let doc: Value = serde_json::from_str(DOCUMENT).unwrap();
    let mut root = json!({ "$ref": format!("#/components/schemas/{name}") });
    root["components"] = doc["components"].clone();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&root)
        .expect("the schema compiles");
    let problems: Vec<String> = validator.iter_errors(body).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{name}: {problems:?} in {body}");
}

/// The app's URL and service URLs an answer names.
fn urls_in(body: &Value) -> (String, BTreeMap<String, String>) {
    let app_url = body["app_url"].as_str().unwrap_or_default().to_owned();
    let service_urls = serde_json::from_value(body["service_urls"].clone()).unwrap_or_default();
    (app_url, service_urls)
}

/// Uploads the project (`version` inside) and returns the 202 answer.
async fn upload(app: &TestApp, id: &str, devfile: &str, version: &str) -> Value {
    let (status, body) = app
        .upload(
            &app.owner,
            id,
            "",
            "application/zstd",
            tar_zst(&files(devfile, version)),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_matches_schema("BuildsCreated", &body);
    body
}

/// Registers `name` (with [`three_services`]) and uploads its project: the app id, the
/// devfile and the upload's answer.
async fn register_and_upload(app: &TestApp, name: &str) -> (String, String, Value) {
    let df = three_services(name);
    let id = app.register(&app.owner, name).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = upload(app, &id, &df, "1").await;
    (id, df, answer)
}

/// Waits until a deployment other than those in `before` is RUNNING; its status.
async fn running_anew(app: &TestApp, id: &str, before: &[String]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = status_of(app, id).await;
        let deployment = status["deployment_id"].as_str().unwrap_or_default();
        let new = !deployment.is_empty() && !before.iter().any(|d| d == deployment);
        if new && status["status"] == "RUNNING" {
            return status;
        }
        assert_ne!(status["status"], "FAILED", "{status}");
        assert!(Instant::now() < deadline, "never RUNNING anew: {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every URL answers with the service it names, and the status names the same URLs.
async fn assert_served(status: &Value, app_url: &str, service_urls: &BTreeMap<String, String>) {
    assert_eq!(status["app_url"], app_url, "{status}");
    for (service, url) in service_urls {
        let shown = status["services"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == service.as_str())
            .unwrap_or_else(|| panic!("{service} in {status}"));
        assert_eq!(shown["url"], url.as_str(), "{status}");
        let body = urllib_get(url).await;
        assert!(body.starts_with(&format!("hello from {service}")), "{body}");
    }
    assert!(urllib_get(app_url).await.starts_with("hello from web"));
}

#[tokio::test]
async fn a_build_upload_answers_urls_that_stay_the_same_and_answer_once_running() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        // The first upload names every public service's URL, before anything runs.
        let (id, df, first) = register_and_upload(&app, "stable").await;
        let (app_url, service_urls) = urls_in(&first);
        assert!(app_url.starts_with("http://127.0.0.1:"), "{first}");
        assert_eq!(
            service_urls.keys().collect::<Vec<_>>(),
            ["api", "web"],
            "public services only: {first}"
        );
        assert_eq!(service_urls["web"], app_url, "web is listed first");
        assert_ne!(service_urls["api"], app_url);
        let v1 = running_anew(&app, &id, &[]).await;
        assert_served(&v1, &app_url, &service_urls).await;
        let mut seen = vec![v1["deployment_id"].as_str().unwrap().to_owned()];

        // A redeploy (a new upload): the same URLs in the answer and in service.
        let second = upload(&app, &id, &df, "2").await;
        assert_eq!(urls_in(&second), (app_url.clone(), service_urls.clone()));
        let v2 = running_anew(&app, &id, &seen).await;
        assert_served(&v2, &app_url, &service_urls).await;
        seen.push(v2["deployment_id"].as_str().unwrap().to_owned());

        // A restart brings the app back on the same ports, and a later upload names them.
        app.restart().await;
        let back = running_anew(&app, &id, &seen).await;
        assert_served(&back, &app_url, &service_urls).await;
        seen.push(back["deployment_id"].as_str().unwrap().to_owned());
        let third = upload(&app, &id, &df, "3").await;
        assert_eq!(urls_in(&third), (app_url.clone(), service_urls.clone()));
        let v3 = running_anew(&app, &id, &seen).await;
        seen.push(v3["deployment_id"].as_str().unwrap().to_owned());

        // A rollback to the first deployment serves on the same URLs.
        let (status, body) = app
            .send(
                Method::POST,
                &format!("/v1/apps/{id}/rollback"),
                Some(&app.owner),
                Some(json!({ "deployment_id": seen[0] }).to_string()),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let rolled = running_anew(&app, &id, &seen).await;
        assert_served(&rolled, &app_url, &service_urls).await;
        app.finish().await;
    }
}

#[tokio::test]
async fn a_prebuilt_upload_answers_the_same_urls() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (id, _, first) = register_and_upload(&app, "prebuilt-urls").await;
        for build in first["build_ids"].as_array().unwrap() {
            app.wait_build(build.as_str().unwrap(), &["succeeded", "failed"])
                .await;
        }

        let local = tempfile::tempdir().unwrap();
        make_layout(local.path());
        let (status, body) = upload_prebuilt(
            &app,
            &id,
            "service_name=api",
            archive(&local.path().join("images"), &[]),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_matches_schema("PrebuiltBuild", &body);
        assert_eq!(body["builder"], "prebuilt", "{body}");
        assert_eq!(urls_in(&body), urls_in(&first));
        app.finish().await;
    }
}
