//! Sync builds (`POST /v1/apps/{id}/builds?sync=true`, what `slipway dev` sends for a source
//! edit): the new sources as one layer over the last image, no build command, and the
//! redeploy is health-gated: a client polling the app sees no error, and a broken edit leaves
//! the old instance serving.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::deploy::{through_gateway, wait_status};
use crate::support::{TestApp, backends, python_devfile, python_server, spawn_app, tar_zst};

/// Answers `<release>|<what the build command wrote>`; `broken` exits at start.
fn server(release: &str, broken: bool) -> String {
    let start = if broken {
        "raise SystemExit('this edit is broken')\n"
    } else {
        ""
    };
    python_server(
        &format!("{start}BUILT = open('built.txt').read().strip()\n"),
        &format!(r#""{release}|" + BUILT"#),
    )
}

async fn upload(
    app: &TestApp,
    id: &str,
    release: &str,
    broken: bool,
    sync: bool,
) -> (StatusCode, Value) {
    let files = vec![
        (
            "devfile.yaml".to_owned(),
            // The build command stamps the build, so a sync (which runs none) keeps the stamp.
            python_devfile("synced", "date +%s%N > built.txt").into_bytes(),
        ),
        ("main.py".to_owned(), server(release, broken).into_bytes()),
        (
            "Dockerfile".to_owned(),
            b"FROM scratch\nCOPY . /app\n".to_vec(),
        ),
    ];
    let query = if sync { "sync=true" } else { "" };
    app.upload(&app.owner, id, query, "application/zstd", tar_zst(&files))
        .await
}

async fn wait_build(app: &TestApp, build_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, body) = app
            .send(
                Method::GET,
                &format!("/v1/builds/{build_id}"),
                Some(&app.owner),
                None,
            )
            .await;
        if matches!(
            body["status"].as_str(),
            Some("succeeded" | "failed" | "cancelled")
        ) {
            return body;
        }
        assert!(Instant::now() < deadline, "build never ended: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn newest_deployment(app: &TestApp, id: &str) -> Value {
    let (_, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/deployments?page_size=1"),
            Some(&app.owner),
            None,
        )
        .await;
    body["deployments"][0].clone()
}

/// Waits for a deployment other than `previous` to finish; returns it.
async fn next_deployment(app: &TestApp, id: &str, previous: &Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let newest = newest_deployment(app, id).await;
        if newest["id"] != previous["id"]
            && matches!(newest["status"].as_str(), Some("RUNNING" | "FAILED"))
        {
            return newest;
        }
        assert!(Instant::now() < deadline, "no new deployment: {newest}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls the app through the gateway until stopped; counts answers that are not a 200.
fn poll(
    app: &TestApp,
    stop: Arc<AtomicBool>,
    errors: Arc<AtomicUsize>,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
) -> tokio::task::JoinHandle<()> {
    let gateway = app.gateway.expect("gateway");
    let client = app.client.clone();
    tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            let answer = client
                .get(format!("http://{gateway}/"))
                .header("host", format!("synced.localhost:{}", gateway.port()))
                .send()
                .await;
            match answer {
                Ok(r) if r.status() == StatusCode::OK => {
                    let text = r.text().await.unwrap_or_default();
                    let mut seen = seen.lock().unwrap();
                    if seen.last() != Some(&text) {
                        seen.push(text);
                    }
                }
                _ => {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
}

#[tokio::test]
async fn a_sync_build_layers_the_new_sources_and_switches_without_an_error() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let id = app.register(&app.owner, "synced").await["id"]
            .as_str()
            .unwrap()
            .to_owned();

        // Nothing to sync onto yet.
        let (status, body) = upload(&app, &id, "v1", false, true).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no succeeded build"),
            "{body}"
        );

        let (status, body) = upload(&app, &id, "v1", false, false).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        wait_status(&app, &id, &["RUNNING"]).await;
        let (_, first) = through_gateway(&app, "synced.localhost").await;
        let (release, stamp) = first.split_once('|').unwrap();
        assert_eq!(release, "v1");
        let v1 = newest_deployment(&app, &id).await;

        // A sync while a client polls: no error, and the answer turns to v2 with the same
        // build stamp (no build command ran).
        let stop = Arc::new(AtomicBool::new(false));
        let errors = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let poller = poll(&app, stop.clone(), errors.clone(), seen.clone());
        let (status, body) = upload(&app, &id, "v2", false, true).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let build = wait_build(&app, body["build_ids"][0].as_str().unwrap()).await;
        assert_eq!(build["status"], "succeeded", "{backend:?}: {build}");
        let v2 = next_deployment(&app, &id, &v1).await;
        assert_eq!(v2["status"], "RUNNING", "{v2}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop.store(true, Ordering::Relaxed);
        poller.await.unwrap();
        assert_eq!(
            errors.load(Ordering::Relaxed),
            0,
            "{backend:?}: errors during the switch"
        );
        let answers = seen.lock().unwrap().clone();
        assert_eq!(
            answers,
            vec![format!("v1|{stamp}"), format!("v2|{stamp}")],
            "{backend:?}"
        );
        assert_ne!(
            v2["services"][0]["image_digest"], v1["services"][0]["image_digest"],
            "a new image"
        );

        // A broken edit: the new instance never gets healthy, the old one keeps answering.
        let (status, body) = upload(&app, &id, "v3", true, true).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let v3 = next_deployment(&app, &id, &v2).await;
        assert_eq!(v3["status"], "FAILED", "{v3}");
        let (status, text) = through_gateway(&app, "synced.localhost").await;
        assert_eq!((status, text), (StatusCode::OK, format!("v2|{stamp}")));
        app.finish().await;
    }
}
