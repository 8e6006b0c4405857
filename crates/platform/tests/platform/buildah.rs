//! The buildah builder, when `buildah` runs here: a `FROM scratch` Dockerfile that copies one
//! file becomes a signed image in the platform store. Without buildah the test is skipped with
//! a note — except under CI, where it fails. Also: a `--build-ca-bundle` that cannot serve stops
//! the start.

use slipway_image::{Digest, ImageStore, verify_image};
use slipway_platform::BuilderKind;

use crate::support::{backends, python_devfile, spawn_app_with};

fn buildah_runs() -> bool {
    std::process::Command::new("buildah")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test]
async fn a_scratch_dockerfile_builds_into_a_signed_image_with_buildah() {
    if !buildah_runs() {
        assert!(
            std::env::var_os("CI").is_none(),
            "buildah is required under CI (install it in .ci)"
        );
        eprintln!(
            "\n!!!!!!!! SKIPPING the buildah builder test: `buildah --version` does not run here.\n"
        );
        return;
    }
    for backend in backends() {
        let app = spawn_app_with(backend, BuilderKind::Buildah).await;
        let created = app.register(&app.owner, "scratch").await;
        let app_id = created["id"].as_str().unwrap();
        let files = vec![
            (
                "devfile.yaml".to_owned(),
                python_devfile("scratch", "true").into_bytes(),
            ),
            (
                "Dockerfile".to_owned(),
                b"FROM scratch\nCOPY hello.txt /hello.txt\n".to_vec(),
            ),
            ("hello.txt".to_owned(), b"hello from buildah\n".to_vec()),
        ];
        let id = app.build_one(app_id, &files).await;
        let build = app.wait_build(&id, &["succeeded", "failed"]).await;
        assert_eq!(build["status"], "succeeded", "{backend:?}: {build}");
        assert_eq!(build["builder"], "buildah");
        let uri = build["image_uri"].as_str().unwrap();
        let digest = uri.strip_prefix("slipway.local/scratch/api@").unwrap();
        let verified = verify_image(&app.data_dir(), digest).expect("verifies");
        let store = ImageStore::open(&app.data_dir()).unwrap();
        let manifest = store.read_blob(&Digest::parse(digest).unwrap()).unwrap();
        assert_eq!(Digest::of(&manifest).as_str(), digest);
        assert_eq!(verified.manifest.layers.len(), 1, "{:?}", verified.manifest);
        app.finish().await;
    }
}

#[tokio::test]
async fn auto_records_the_native_fallback_so_a_sync_can_follow() {
    for backend in backends() {
        let app = spawn_app_with(backend, BuilderKind::Auto).await;
        let created = app.register(&app.owner, "fallback").await;
        let app_id = created["id"].as_str().unwrap();
        // Deployments run as processes here: auto builds natively (and would, with the
        // container runtime, fall back to native for this base image, which is on no machine
        // and in no reachable registry).
        let mut files = crate::support::python_project(&python_devfile("fallback", "true"));
        for (path, bytes) in &mut files {
            if path == "Dockerfile" {
                *bytes = b"FROM slipway-test/absent-base:never\nCOPY . /app\n".to_vec();
            }
        }
        let id = app.build_one(app_id, &files).await;
        let build = app.wait_build(&id, &["succeeded", "failed"]).await;
        assert_eq!(build["status"], "succeeded", "{backend:?}: {build}");
        assert_eq!(
            build["builder"], "native",
            "the builder that made the image: {build}"
        );
        let log = build["log"].as_str().unwrap_or_default();
        assert!(
            log.contains("--builder auto: deployments run as processes"),
            "{log}"
        );
        let (status, body) = app
            .upload(
                &app.owner,
                app_id,
                "sync=true",
                "application/zstd",
                crate::support::tar_zst(&files),
            )
            .await;
        assert_eq!(status, reqwest::StatusCode::ACCEPTED, "{body}");
        app.finish().await;
    }
}

#[tokio::test]
async fn a_build_ca_bundle_that_cannot_serve_stops_the_start_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let not_pem = dir.path().join("notes.txt");
    std::fs::write(&not_pem, "not a certificate").unwrap();
    for (bundle, says) in [
        (dir.path().join("missing.pem"), "cannot read it"),
        (not_pem, "holds no PEM certificate"),
    ] {
        let data = tempfile::tempdir().unwrap();
        let mut config =
            slipway_platform::PlatformConfig::new(([127, 0, 0, 1], 0).into(), data.path());
        config.build_ca_bundle = slipway_platform::BuildCaBundle::File(bundle.clone());
        let message = match slipway_platform::prepare(&config).await {
            Ok(_) => panic!("{} was accepted", bundle.display()),
            Err(e) => e.to_string(),
        };
        assert!(
            message.contains(&format!("--build-ca-bundle {}", bundle.display())),
            "{message}"
        );
        assert!(message.contains(says), "{message}");
        assert!(
            !data.path().join(slipway_platform::SQLITE_FILE).exists(),
            "the database was made before the refusal"
        );
    }
}
