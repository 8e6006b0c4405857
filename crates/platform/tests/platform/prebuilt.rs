//! Prebuilt image uploads (the spec's local build mode): an `oci-archive` tar the test makes
//! with the crate's own OCI writer is imported, checked, signed, recorded as a `prebuilt`
//! build and deployed; an archive with an altered blob or a stray file is refused and
//! creates nothing. A `docker save` archive (made by `buildah push … docker-archive:` from a
//! `FROM scratch` image when buildah runs here, else assembled by hand from the OCI layout)
//! is converted, imported and deployed the same way.

use std::collections::BTreeMap;
use std::path::Path;

use reqwest::StatusCode;
use serde_json::Value;
use slipway_image::oci::{RunConfig, pack_layer, write_image};
use slipway_image::{Digest, ImageStore, verify_image};

use crate::deploy::{SERVER, wait_status};
use crate::support::{TestApp, assert_error, backends, python_devfile, python_project, spawn_app};

/// An OCI layout (under `dir/images`) of one image running the stdlib test server from
/// `/app`; returns the manifest digest.
pub(crate) fn make_layout(dir: &Path) -> String {
    make_layout_with(dir, &[])
}

/// Like [`make_layout`], with `extra` files (relative path, content) in the image's `/app`.
pub(crate) fn make_layout_with(dir: &Path, extra: &[(&str, &str)]) -> String {
    let store = ImageStore::open(dir).unwrap();
    let tree = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("server.py"), SERVER).unwrap();
    for (path, content) in extra {
        let at = tree.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, content).unwrap();
    }
    let layer = pack_layer(&store, tree.path()).unwrap();
    let run = RunConfig {
        cmd: vec!["python3".into(), "server.py".into(), "prebuilt".into()],
        working_dir: "/app".into(),
        env: vec!["PATH=/usr/local/bin:/usr/bin:/bin".into()],
        port: Some(8002),
        labels: BTreeMap::new(),
    };
    write_image(&store, &[layer], &run, "local/api")
        .unwrap()
        .digest
}

/// The layout under `root` as an `oci-archive` tar (plus `extra` entries).
pub(crate) fn archive(root: &Path, extra: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for name in ["oci-layout", "index.json"] {
        tar.append_path_with_name(root.join(name), name).unwrap();
    }
    for entry in std::fs::read_dir(root.join("blobs/sha256")).unwrap() {
        let entry = entry.unwrap();
        let name = format!("blobs/sha256/{}", entry.file_name().to_string_lossy());
        tar.append_path_with_name(entry.path(), name).unwrap();
    }
    for (name, bytes) in extra {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, name, *bytes).unwrap();
    }
    tar.into_inner().unwrap()
}

pub(crate) async fn upload_prebuilt(
    app: &TestApp,
    id: &str,
    query: &str,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let r = app
        .client
        .post(format!("{}/v1/apps/{id}/builds/prebuilt?{query}", app.base))
        .bearer_auth(&app.owner)
        .header("content-type", "application/x-tar")
        .body(body)
        .send()
        .await
        .expect("request");
    let status = r.status();
    let text = r.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_prebuilt_oci_archive_is_imported_signed_and_deployed() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "pre").await;
        let id = created["id"].as_str().unwrap().to_owned();
        let local = tempfile::tempdir().unwrap();
        let digest = make_layout(local.path());
        let layout = local.path().join("images");

        // Without a devfile the platform does not know how the image runs.
        let reply = upload_prebuilt(&app, &id, "service_name=api", archive(&layout, &[])).await;
        assert_error(&reply, StatusCode::CONFLICT, "failed_precondition", None);

        // The devfile arrives with a first (context) build; its run command is not used by
        // the prebuilt image.
        let first = app
            .build_one(&id, &python_project(&python_devfile("pre", "true")))
            .await;
        app.wait_build(&first, &["succeeded", "failed"]).await;

        let reply = upload_prebuilt(&app, &id, "service_name=web", archive(&layout, &[])).await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("service_name"),
        );
        let reply = upload_prebuilt(
            &app,
            &id,
            "service_name=api",
            archive(&layout, &[("etc/passwd", b"x")]),
        )
        .await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("image"),
        );

        // An altered blob (the config) is refused before anything is recorded.
        let tampered = tempfile::tempdir().unwrap();
        let bad_digest = make_layout(tampered.path());
        let bad_store = ImageStore::open(tampered.path()).unwrap();
        let manifest: Value = serde_json::from_slice(
            &bad_store
                .read_blob(&Digest::parse(&bad_digest).unwrap())
                .unwrap(),
        )
        .unwrap();
        let config = Digest::parse(manifest["config"]["digest"].as_str().unwrap()).unwrap();
        std::fs::write(bad_store.blob_path(&config), b"{}").unwrap();
        let reply = upload_prebuilt(
            &app,
            &id,
            "service_name=api",
            archive(bad_store.root(), &[]),
        )
        .await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("image"),
        );
        assert!(
            reply.1["error"]["message"]
                .as_str()
                .unwrap()
                .contains("altered")
        );

        let (status, build) =
            upload_prebuilt(&app, &id, "service_name=api", archive(&layout, &[])).await;
        assert_eq!(status, StatusCode::CREATED, "{build}");
        assert_eq!(build["builder"], "prebuilt");
        assert_eq!(build["status"], "succeeded");
        assert_eq!(build["service"], "api");
        assert_eq!(
            build["image_uri"],
            format!("slipway.local/pre/api@{digest}")
        );
        verify_image(&app.data_dir(), &digest).expect("signed by the platform");

        // It deploys like any build: the prebuilt server answers.
        let running = wait_status(&app, &id, &["RUNNING"]).await;
        assert_eq!(
            running["services"][0]["build_id"], build["build_id"],
            "{running}"
        );
        app.finish().await;
    }
}

/// Runs a command, panicking with its stderr when it fails; returns its stdout.
fn run(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A real docker-archive: a `FROM scratch` image with the test server in `/app`, committed
/// and pushed to `docker-archive:` by buildah (the same code as `podman save --format
/// docker-archive`). `None` when buildah does not run here.
fn buildah_docker_archive(dir: &Path) -> Option<Vec<u8>> {
    let runs = std::process::Command::new("buildah")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        return None;
    }
    std::fs::write(dir.join("server.py"), SERVER).unwrap();
    let tag = format!("localhost/slipway-test/{}:1", uuid::Uuid::new_v4().simple());
    let container = run("buildah", &["from", "scratch"]);
    let server = dir.join("server.py");
    run(
        "buildah",
        &[
            "copy",
            &container,
            server.to_str().unwrap(),
            "/app/server.py",
        ],
    );
    run(
        "buildah",
        &[
            "config",
            "--cmd",
            r#"["python3", "server.py", "docker"]"#,
            "--workingdir",
            "/app",
            "--env",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "--port",
            "8002",
            &container,
        ],
    );
    run("buildah", &["commit", "-q", &container, &tag]);
    run("buildah", &["rm", &container]);
    let file = dir.join("image.tar");
    let target = format!("docker-archive:{}:{tag}", file.display());
    run("buildah", &["push", "-q", &tag, &target]);
    run("buildah", &["rmi", &tag]);
    Some(std::fs::read(file).unwrap())
}

/// A docker-archive assembled by hand from the OCI layout under `root`: `manifest.json`,
/// `<config hex>.json`, `<layer hex>/layer.tar` (gzip, which `docker load` accepts too).
/// `swap` replaces the layer's content (a tampered archive).
fn hand_docker_archive(root: &Path, digest: &str, swap: Option<&[u8]>) -> Vec<u8> {
    let store = ImageStore::open(root.parent().unwrap()).unwrap();
    let manifest: Value =
        serde_json::from_slice(&store.read_blob(&Digest::parse(digest).unwrap()).unwrap()).unwrap();
    let config = Digest::parse(manifest["config"]["digest"].as_str().unwrap()).unwrap();
    let mut tar = tar::Builder::new(Vec::new());
    let mut append = |name: &str, bytes: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o444);
        tar.append_data(&mut header, name, bytes).unwrap();
    };
    append(
        &format!("{}.json", config.hex()),
        &store.read_blob(&config).unwrap(),
    );
    let mut layers = Vec::new();
    for layer in manifest["layers"].as_array().unwrap() {
        let d = Digest::parse(layer["digest"].as_str().unwrap()).unwrap();
        let name = format!("{}/layer.tar", d.hex());
        let blob = store.read_blob(&d).unwrap();
        append(&name, swap.unwrap_or(&blob));
        layers.push(name);
    }
    let entries = serde_json::json!([{
        "Config": format!("{}.json", config.hex()),
        "RepoTags": ["local/api:latest"],
        "Layers": layers,
    }]);
    append("manifest.json", entries.to_string().as_bytes());
    append("repositories", b"{}");
    tar.into_inner().unwrap()
}

#[tokio::test]
async fn a_docker_archive_is_converted_imported_and_deployed() {
    let local = tempfile::tempdir().unwrap();
    let oci_digest = make_layout(local.path());
    let images = local.path().join("images");
    let hand = hand_docker_archive(&images, &oci_digest, None);
    let mut other = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(4);
    header.set_mode(0o644);
    other
        .append_data(&mut header, "evil", &b"evil"[..])
        .unwrap();
    let altered = hand_docker_archive(&images, &oci_digest, Some(&other.into_inner().unwrap()));
    let real = buildah_docker_archive(local.path());
    if real.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "buildah is required under CI (install it in .ci)"
        );
        eprintln!(
            "\n!!!!!!!! buildah does not run here: only the hand-made docker-archive is tested.\n"
        );
    }
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "dock").await;
        let id = created["id"].as_str().unwrap().to_owned();
        let first = app
            .build_one(&id, &python_project(&python_devfile("dock", "true")))
            .await;
        app.wait_build(&first, &["succeeded", "failed"]).await;

        // An archive whose layer does not match the config's diff_ids is refused.
        let reply = upload_prebuilt(&app, &id, "service_name=api", altered.clone()).await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("image"),
        );
        let message = reply.1["error"]["message"].as_str().unwrap();
        assert!(message.contains("is altered"), "{message}");

        let mut uploads = vec![("hand-made", hand.clone(), "prebuilt")];
        if let Some(real) = &real {
            uploads.push(("buildah", real.clone(), "docker"));
        }
        for (what, body, name) in uploads {
            let (status, build) = upload_prebuilt(&app, &id, "service_name=api", body).await;
            assert_eq!(status, StatusCode::CREATED, "{what}: {build}");
            assert_eq!(build["builder"], "prebuilt");
            let uri = build["image_uri"].as_str().unwrap();
            let digest = uri.strip_prefix("slipway.local/dock/api@").unwrap();
            let verified = verify_image(&app.data_dir(), digest).expect("signed");
            assert_eq!(verified.manifest.layers.len(), 1, "{what}");
            assert_eq!(
                verified.config["config"]["WorkingDir"], "/app",
                "{what}: the config is kept"
            );
            let (_, log) = app
                .get_build(&app.owner, build["build_id"].as_str().unwrap(), true)
                .await;
            assert!(
                log["log"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("docker-archive"),
                "{what}: {log}"
            );

            // It deploys: the server from the archive answers as `name`.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
            loop {
                let status = crate::deploy::status_of(&app, &id).await;
                if status["status"] == "RUNNING"
                    && status["services"][0]["build_id"] == build["build_id"]
                {
                    break;
                }
                assert!(
                    status["status"] != "FAILED" && std::time::Instant::now() < deadline,
                    "{what}: {status}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            let gateway = app.gateway.unwrap();
            let body = app
                .client
                .get(format!("http://{gateway}/"))
                .header("host", format!("dock.localhost:{}", gateway.port()))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(
                body.starts_with(&format!("hello from {name}")),
                "{what}: {body}"
            );
        }
        app.finish().await;
    }
}
