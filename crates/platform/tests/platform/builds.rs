//! Builds over real HTTP with the native builder: a tiny Python project becomes a signed,
//! content-addressed OCI image; failures keep the command's stderr; cancel kills a running
//! build's processes; refused uploads create nothing; a restart fails interrupted builds.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use slipway_image::{Digest, ImageStore, verify_image};

use crate::support::{
    TestApp, assert_error, backends, python_devfile, python_project, spawn_app, tar_gz, tar_of,
    tar_zst,
};

/// A fast, offline build: a virtual environment without pip and a marker file.
const FAST_BUILD: &str = "python3 -m venv --without-pip .venv && echo built > BUILT";

fn blob(app: &TestApp, digest: &str) -> Vec<u8> {
    let store = ImageStore::open(&app.data_dir()).unwrap();
    store.read_blob(&Digest::parse(digest).unwrap()).unwrap()
}

fn blob_count(app: &TestApp) -> usize {
    ImageStore::open(&app.data_dir())
        .unwrap()
        .blob_count()
        .unwrap()
}

fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A zombie waiting for a reaper that is not us has stopped running too.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
    }
}

async fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.trim().is_empty()
        {
            return text.trim().to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_python_project_builds_into_a_signed_content_addressed_oci_image() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "pyapp").await;
        let app_id = created["id"].as_str().unwrap();
        let devfile = python_devfile("pyapp", FAST_BUILD);
        let files = python_project(&devfile);
        let id = app.build_one(app_id, &files).await;
        let build = app.wait_build(&id, &["succeeded", "failed"]).await;
        assert_eq!(build["status"], "succeeded", "{backend:?}: {build}");
        assert_eq!(build["service"], "api");
        assert_eq!(build["app_id"], app_id);
        assert_eq!(build["builder"], "native");
        assert!(build["started_at"].is_string() && build["finished_at"].is_string());
        assert!(build["error"].is_null(), "{build}");
        let uri = build["image_uri"].as_str().unwrap();
        let digest = uri
            .strip_prefix("slipway.local/pyapp/api@")
            .unwrap_or_else(|| panic!("{uri}"));

        // The digest names the stored manifest, and the platform signature verifies.
        let manifest_bytes = blob(&app, digest);
        assert_eq!(Digest::of(&manifest_bytes).as_str(), digest);
        let verified = verify_image(&app.data_dir(), digest).expect("signed image verifies");
        let config = &verified.config["config"];
        assert_eq!(
            config["Cmd"],
            serde_json::json!(["sh", "-c", "python3 main.py"])
        );
        assert_eq!(config["WorkingDir"], "/app");
        let env: Vec<&str> = config["Env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(env.contains(&"PORT=8002"), "{env:?}");
        assert!(env[0].starts_with("PATH=/app/.venv/bin:"), "{env:?}");
        assert!(config["ExposedPorts"]["8002/tcp"].is_object(), "{config}");

        // The one layer holds the project and what the build made, under app/.
        let manifest: Value = serde_json::from_slice(&manifest_bytes).unwrap();
        let layer = blob(&app, manifest["layers"][0]["digest"].as_str().unwrap());
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&layer[..]));
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        for expected in [
            "app/BUILT",
            "app/main.py",
            "app/.venv/pyvenv.cfg",
            "app/devfile.yaml",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
        let log = build["log"].as_str().unwrap();
        assert!(
            log.contains(FAST_BUILD) && log.contains("succeeded"),
            "{log}"
        );

        // The app keeps the devfile of the upload.
        let (_, got) = app.get_app(&app.owner, app_id).await;
        assert_eq!(got["devfile"], devfile.as_str());

        // The same project again (as tar.gz this time) gives the same image: no new blob.
        let before = blob_count(&app);
        let (status, body) = app
            .upload(
                &app.owner,
                app_id,
                "service_name=api",
                "application/gzip",
                tar_gz(&files),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let again = app
            .wait_build(
                body["build_ids"][0].as_str().unwrap(),
                &["succeeded", "failed"],
            )
            .await;
        assert_eq!(again["image_uri"], uri, "{backend:?}: {again}");
        assert_eq!(blob_count(&app), before, "identical blobs are stored once");
        assert!(again["log"].as_str().unwrap().contains("already stored"));

        // Cancelling a finished build is a conflict naming its state.
        let reply = app.cancel_build(&app.owner, &id).await;
        assert_error(&reply, StatusCode::CONFLICT, "failed_precondition", None);
        assert!(
            reply.1["error"]["message"]
                .as_str()
                .unwrap()
                .contains("succeeded")
        );

        // The public key is public; a tampered layer no longer verifies.
        let r = app
            .client
            .get(format!("{}/v1/signing-key", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let key: Value = r.json().await.unwrap();
        assert_eq!(key["algorithm"], "ed25519");
        assert_eq!(key["public_key"].as_str().unwrap().len(), 44);
        let store = ImageStore::open(&app.data_dir()).unwrap();
        let layer_digest =
            Digest::parse(manifest["layers"][0]["digest"].as_str().unwrap()).unwrap();
        let mut tampered = layer.clone();
        tampered[20] ^= 0x01;
        std::fs::write(store.blob_path(&layer_digest), tampered).unwrap();
        assert!(verify_image(&app.data_dir(), digest).is_err());
        app.finish().await;
    }
}

#[tokio::test]
async fn a_failing_build_command_fails_with_its_stderr_in_the_log() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "broken").await;
        let app_id = created["id"].as_str().unwrap();
        let files = python_project(&python_devfile(
            "broken",
            "echo compiling; echo boom-on-stderr >&2; exit 3",
        ));
        let id = app.build_one(app_id, &files).await;
        let build = app.wait_build(&id, &["succeeded", "failed"]).await;
        assert_eq!(build["status"], "failed", "{backend:?}: {build}");
        assert!(build["image_uri"].is_null());
        let error = build["error"].as_str().unwrap();
        assert!(
            error.contains("build command") && error.contains('3'),
            "{error}"
        );
        let log = build["log"].as_str().unwrap();
        assert!(
            log.contains("boom-on-stderr") && log.contains("compiling"),
            "{log}"
        );
        // Without ?log=true there is no log field.
        let (_, plain) = app.get_build(&app.owner, &id, false).await;
        assert!(plain.get("log").is_none(), "{plain}");
        app.finish().await;
    }
}

#[tokio::test]
async fn an_apps_builds_are_listed_newest_first_in_pages_for_those_who_may_view_it() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "hist").await;
        let app_id = created["id"].as_str().unwrap();
        let failing = app
            .build_one(
                app_id,
                &python_project(&python_devfile("hist", "echo nope >&2; exit 2")),
            )
            .await;
        app.wait_build(&failing, &["failed"]).await;
        let good = app
            .build_one(app_id, &python_project(&python_devfile("hist", FAST_BUILD)))
            .await;
        app.wait_build(&good, &["succeeded"]).await;

        let list = |token: String, query: String| {
            let app = &app;
            async move {
                app.send(
                    Method::GET,
                    &format!("/v1/apps/{app_id}/builds{query}"),
                    Some(&token),
                    None,
                )
                .await
            }
        };
        let (status, all) = list(app.owner.clone(), String::new()).await;
        assert_eq!(status, StatusCode::OK, "{backend:?}: {all}");
        let ids: Vec<&str> = all["builds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["build_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [good.as_str(), failing.as_str()], "{all}");
        assert_eq!(all["builds"][0]["status"], "succeeded");
        assert_eq!(all["builds"][1]["status"], "failed");
        assert!(all["builds"][1]["error"].is_string(), "{all}");
        assert!(
            all["builds"][0].get("log").is_none(),
            "no logs in a list: {all}"
        );
        assert!(all["next_page_token"].is_null(), "{all}");

        // One per page: the token leads to the older build, and the last page has none.
        let (_, first) = list(app.owner.clone(), "?page_size=1".into()).await;
        assert_eq!(first["builds"][0]["build_id"], good.as_str());
        let token = first["next_page_token"].as_str().unwrap().to_owned();
        let (_, second) = list(
            app.owner.clone(),
            format!("?page_size=1&next_page_token={token}"),
        )
        .await;
        assert_eq!(
            second["builds"][0]["build_id"],
            failing.as_str(),
            "{second}"
        );
        assert!(second["next_page_token"].is_null(), "{second}");

        assert_error(
            &list(app.owner.clone(), "?next_page_token=forged".into()).await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("next_page_token"),
        );
        assert_error(
            &list(app.owner.clone(), "?page_size=0".into()).await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("page_size"),
        );
        let other = app.add_account("stranger@example.org").await;
        assert_error(
            &list(other.token.expose().to_owned(), String::new()).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn a_running_build_is_cancelled_and_its_process_is_gone() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "slow").await;
        let app_id = created["id"].as_str().unwrap();
        let marks = tempfile::tempdir().unwrap();
        let pid_file = marks.path().join("pid");
        let command = format!("echo $$ > {}; exec sleep 30", pid_file.display());
        let id = app
            .build_one(app_id, &python_project(&python_devfile("slow", &command)))
            .await;
        let pid = wait_for_file(&pid_file).await;
        app.wait_build(&id, &["in_progress"]).await;

        let started = Instant::now();
        let (status, body) = app.cancel_build(&app.owner, &id).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "cancelled");
        while !process_gone(&pid) {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{backend:?}: build process {pid} still runs"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let build = app.wait_build(&id, &["cancelled"]).await;
        assert!(build["finished_at"].is_string());
        // It stays cancelled once the job task has ended, and a second cancel is a 409.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (_, later) = app.get_build(&app.owner, &id, true).await;
        assert_eq!(later["status"], "cancelled", "{later}");
        assert!(later["log"].as_str().unwrap().contains("cancel"), "{later}");
        let reply = app.cancel_build(&app.owner, &id).await;
        assert_error(&reply, StatusCode::CONFLICT, "failed_precondition", None);
        assert!(
            reply.1["error"]["message"]
                .as_str()
                .unwrap()
                .contains("cancelled")
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn refused_uploads_create_no_build() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "refused").await;
        let app_id = created["id"].as_str().unwrap();
        let good = python_project(&python_devfile("refused", FAST_BUILD));

        // An invalid devfile: 400 listing its errors.
        let bad_devfile = python_devfile("refused", FAST_BUILD)
            .replace("targetPort: 8002", "targetPort: 99999")
            .replace("displayName: Python test app", "displayName: \"\"");
        let reply = app
            .upload(
                &app.owner,
                app_id,
                "",
                "application/zstd",
                tar_zst(&python_project(&bad_devfile)),
            )
            .await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("devfile"),
        );
        let details = reply.1["error"]["details"].as_array().expect("details");
        assert!(details.len() >= 2, "{}", reply.1);

        // A path escaping the context.
        let mut evil = good.clone();
        evil.push(("../evil".into(), b"x".to_vec()));
        let reply = app
            .upload(&app.owner, app_id, "", "application/zstd", tar_zst(&evil))
            .await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("context"),
        );
        assert!(reply.1["error"]["message"].as_str().unwrap().contains(".."));

        // No devfile, not an archive, a wrong media type, an unknown service.
        let reply = app
            .upload(
                &app.owner,
                app_id,
                "",
                "application/zstd",
                tar_zst(&good[1..]),
            )
            .await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("devfile"),
        );
        let reply = app
            .upload(&app.owner, app_id, "", "application/gzip", tar_of(&good))
            .await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("context"),
        );
        let reply = app
            .upload(&app.owner, app_id, "", "application/x-tar", tar_of(&good))
            .await;
        assert_error(
            &reply,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            None,
        );
        let reply = app
            .upload(
                &app.owner,
                app_id,
                "service_name=web",
                "application/zstd",
                tar_zst(&good),
            )
            .await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("service_name"),
        );

        // Nothing was queued, kept or stored on the app.
        for dir in ["builds", "contexts"] {
            let path = app.data_dir().join(dir);
            let count = std::fs::read_dir(&path).map(|d| d.count()).unwrap_or(0);
            assert_eq!(count, 0, "{backend:?}: {dir} is empty");
        }
        let (_, got) = app.get_app(&app.owner, app_id).await;
        assert!(got["devfile"].is_null(), "{got}");

        // Another account's token: 404 for the app's uploads and builds.
        let id = app.build_one(app_id, &good).await;
        let other = app.add_account("stranger@example.org").await;
        let theirs = other.token.expose();
        let reply = app
            .upload(theirs, app_id, "", "application/zstd", tar_zst(&good))
            .await;
        assert_error(&reply, StatusCode::NOT_FOUND, "not_found", None);
        assert_error(
            &app.get_build(theirs, &id, true).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &app.cancel_build(theirs, &id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        let missing = uuid::Uuid::new_v4().to_string();
        assert_error(
            &app.get_build(&app.owner, &missing, false).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        let (status, _) = app
            .send(
                Method::POST,
                &format!("/v1/apps/{app_id}/builds"),
                None,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        app.wait_build(&id, &["succeeded"]).await;
        app.finish().await;
    }
}

#[tokio::test]
async fn a_restart_marks_an_interrupted_build_failed() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let created = app.register(&app.owner, "interrupted").await;
        let app_id = created["id"].as_str().unwrap().to_owned();
        let marks = tempfile::tempdir().unwrap();
        let pid_file = marks.path().join("pid");
        let command = format!("echo $$ > {}; exec sleep 30", pid_file.display());
        let id = app
            .build_one(
                &app_id,
                &python_project(&python_devfile("interrupted", &command)),
            )
            .await;
        let pid = wait_for_file(&pid_file).await;
        app.wait_build(&id, &["in_progress"]).await;
        app.restart().await;
        assert!(process_gone(&pid), "{backend:?}: the stop killed the build");
        let build = app.wait_build(&id, &["failed"]).await;
        assert_eq!(
            build["error"], "server restarted during the build",
            "{build}"
        );
        assert!(build["log"].as_str().unwrap().contains("server restarted"));
        // The signing key survived the restart: same public key as the file holds.
        let key = slipway_image::PlatformKey::load(&app.data_dir()).unwrap();
        let (_, served) = app.send(Method::GET, "/v1/signing-key", None, None).await;
        assert_eq!(served["public_key"], key.public_key_base64().as_str());
        app.finish().await;
    }
}

/// `POST /v1/builds` (no app id) with a tar.zst of `files`.
async fn upload_inline(
    app: &TestApp,
    token: &str,
    files: &[(String, Vec<u8>)],
) -> (StatusCode, Value) {
    let r = app
        .client
        .post(format!("{}/v1/builds", app.base))
        .bearer_auth(token)
        .header("content-type", "application/zstd")
        .body(tar_zst(files))
        .send()
        .await
        .expect("request");
    let status = r.status();
    let text = r.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_first_build_without_an_app_id_creates_the_app_from_its_devfile() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let files = python_project(&python_devfile("legacy-app", FAST_BUILD));
        let (status, body) = upload_inline(&app, &app.owner, &files).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(body["app_created"], true, "{body}");
        let app_id = body["app_id"].as_str().expect("app_id").to_owned();
        let build_id = body["build_ids"][0].as_str().unwrap().to_owned();
        let (status, got) = app.get_app(&app.owner, &app_id).await;
        assert_eq!(status, StatusCode::OK, "{got}");
        assert_eq!(got["name"], "legacy-app");
        assert_eq!(got["display_name"], "Python test app");
        assert!(got["devfile"].as_str().unwrap().contains("legacy-app"));
        let built = app
            .wait_build(&build_id, &["succeeded", "failed", "cancelled"])
            .await;
        assert_eq!(built["status"], "succeeded", "{}", built["log"]);
        assert_eq!(built["app_id"], app_id.as_str());

        // The caller's own app of that name is built again, not created twice.
        let (status, again) = upload_inline(&app, &app.owner, &files).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{again}");
        assert_eq!(again["app_created"], false);
        assert_eq!(again["app_id"], app_id.as_str());
        assert_eq!(app.list_all(&app.owner).await, ["legacy-app"]);

        // Another account cannot build (or learn more about) that name: 409 on name.
        let other = app.add_account("other@example.com").await;
        let reply = upload_inline(&app, other.token.expose(), &files).await;
        assert_error(&reply, StatusCode::CONFLICT, "already_exists", Some("name"));
        // A devfile name that is not an app name as written builds the app named by the app
        // name derived from it.
        let derived = python_project(&python_devfile("Legacy App", FAST_BUILD));
        let (status, body) = upload_inline(&app, &app.owner, &derived).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(body["app_created"], false, "{body}");
        assert_eq!(body["app_id"], app_id.as_str());
        // A devfile name with nothing to derive an app name from is refused and creates nothing.
        let bad = python_project(&python_devfile("\"---\"", FAST_BUILD));
        let (status, body) = upload_inline(&app, &app.owner, &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(app.list_all(&app.owner).await, ["legacy-app"]);
        app.finish().await;
    }
}
