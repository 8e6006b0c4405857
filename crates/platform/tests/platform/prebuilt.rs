//! Prebuilt image uploads (the spec's local build mode): an `oci-archive` tar the test makes
//! with the crate's own OCI writer is imported, checked, signed, recorded as a `prebuilt`
//! build and deployed; an archive with an altered blob or a stray file is refused and
//! creates nothing.

use std::collections::BTreeMap;
use std::path::Path;

use reqwest::StatusCode;
use serde_json::Value;
use slipway_platform::image::oci::{RunConfig, pack_layer, write_image};
use slipway_platform::image::{Digest, ImageStore, verify_image};

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
