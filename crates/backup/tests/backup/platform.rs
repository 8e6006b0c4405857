//! A platform backed up while a client keeps writing secrets, restored into a new data
//! directory (and a new PostgreSQL database), and served again: every write acknowledged
//! before the backup began is there with its version, the old tokens authenticate, the
//! people and apps are the same; and the archive's bytes hold no database header, secret or
//! token in clear.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use slipway_backup::platform::{Backup, Restore};

use crate::support::{Db, Platform, WORK, backends, contains, passphrase, tree};

const SECRET: &str = "loop%2Fcounter";

/// Updates the secret `loop/counter` until `stop`, recording each acknowledged version and
/// the value it holds.
fn start_writer(
    platform: &Platform,
    token: &str,
    marker: &str,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<(i64, String)>>>,
) -> tokio::task::JoinHandle<()> {
    let client = platform.client.clone();
    let url = format!("{}/v1/secrets/entry", platform.base);
    let token = token.to_owned();
    let marker = marker.to_owned();
    tokio::spawn(async move {
        let mut n = 1;
        while !stop.load(Ordering::SeqCst) {
            let value = format!("{marker}-{n}");
            let r = client
                .put(&url)
                .bearer_auth(&token)
                .json(
                    &json!({"secret_type": "user", "secret_path": "loop/counter",
                              "data": {"value": value}}),
                )
                .send()
                .await
                .expect("update");
            assert_eq!(r.status(), StatusCode::OK);
            let body: Value = r.json().await.expect("json");
            let version = body["version"].as_i64().expect("version");
            acked.lock().unwrap().push((version, value));
            n += 1;
        }
    })
}

/// Waits (bounded) until the writer has acknowledged more than `count` writes.
async fn wait_for_writes(acked: &Mutex<Vec<(i64, String)>>, count: usize) {
    for _ in 0..2_000 {
        if acked.lock().unwrap().len() > count {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("the writer acknowledged no more than {count} writes");
}

async fn emails(platform: &Platform, token: &str) -> Vec<String> {
    let (status, body) = platform
        .send(Method::GET, "/v1/account/users", Some(token), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut emails: Vec<String> = body["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["email"].as_str().unwrap().to_owned())
        .collect();
    emails.sort();
    emails
}

async fn app_ids(platform: &Platform, token: &str) -> Vec<String> {
    let (status, body) = platform
        .send(Method::GET, "/v1/apps", Some(token), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut ids: Vec<String> = body["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_while_secrets_are_written_restores_every_acknowledged_write() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let source_dir = dir.path().join("platform");
        let db = Db::new(backend, "backup_source").await;
        let source = Platform::start(&source_dir, db.url.as_deref()).await;
        let owner = source.owner_token();
        let member =
            slipway_platform::add_user(&source_dir, db.url.as_deref(), "bob@example.org", "Bob")
                .await
                .expect("add a member");
        let member_token = member.token.expose().to_owned();
        let (status, made) = source
            .send(
                Method::POST,
                "/v1/tokens",
                Some(&owner),
                Some(&json!({"name": "ci", "expires_in_days": 30})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let personal = made["token"].as_str().unwrap().to_owned();
        let (status, app) = source
            .send(
                Method::POST,
                "/v1/apps",
                Some(&owner),
                Some(&json!({"name": "shop", "display_name": "Shop"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{app}");
        // A build's log comes back; a deployment's tree does not.
        std::fs::create_dir_all(source_dir.join("builds/b-1")).unwrap();
        std::fs::write(source_dir.join("builds/b-1/log"), b"step 1 of 1\n").unwrap();
        std::fs::create_dir_all(source_dir.join("run/shop/web")).unwrap();
        std::fs::write(source_dir.join("run/shop/web/app.py"), b"print()\n").unwrap();

        let marker = format!("s3cret-{}", uuid::Uuid::new_v4().simple());
        let (status, body) = source
            .send(
                Method::POST,
                "/v1/secrets",
                Some(&owner),
                Some(
                    &json!({"secret_type": "user", "secret_path": "loop/counter",
                             "data": {"value": format!("{marker}-0")}}),
                ),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let acked = Arc::new(Mutex::new(vec![(1, format!("{marker}-0"))]));
        let stop = Arc::new(AtomicBool::new(false));
        let writer = start_writer(&source, &owner, &marker, stop.clone(), acked.clone());
        wait_for_writes(&acked, 3).await;

        // Everything acknowledged up to here must be in the backup.
        let before: Vec<(i64, String)> = acked.lock().unwrap().clone();
        let (_, pass) = passphrase(dir.path(), "pass", "correct horse battery staple");
        let archive = dir.path().join("platform.age");
        let report = slipway_backup::platform::backup(Backup {
            data_dir: source_dir.clone(),
            database_url: db.url.clone(),
            vault_key_file: None,
            to: archive.clone(),
            passphrase: pass.clone(),
            work_factor: WORK,
        })
        .await
        .expect("backup");
        // The server went on serving: writes are still acknowledged.
        let after_backup = acked.lock().unwrap().len();
        wait_for_writes(&acked, after_backup).await;
        stop.store(true, Ordering::SeqCst);
        writer.await.expect("writer");

        let bytes = std::fs::read(&archive).unwrap();
        assert_eq!(report.bytes, bytes.len() as u64);
        assert!(report.to_string().contains("platform.age"), "{report}");
        assert!(!contains(&bytes, b"SQLite format 3"), "{backend:?}");
        assert!(!contains(&bytes, marker.as_bytes()), "{backend:?}");
        for token in [&owner, &member_token, &personal] {
            assert!(!contains(&bytes, token.as_bytes()), "{backend:?}");
        }
        let mut beside: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        beside.sort();
        assert_eq!(
            beside,
            ["pass", "platform", "platform.age"],
            "nothing but the archive is left beside it"
        );

        let restored_dir = dir.path().join("restored");
        let target_db = Db::new(backend, "backup_target").await;
        let restored = slipway_backup::platform::restore(Restore {
            from: archive.clone(),
            data_dir: restored_dir.clone(),
            database_url: target_db.url.clone(),
            passphrase: pass,
        })
        .await
        .expect("restore");
        assert!(restored.to_string().contains("restored"), "{restored}");
        let files = tree(&restored_dir);
        for expected in ["builds/b-1/log", "vault.key", "signing-key", "log-url-key"] {
            assert!(files.iter().any(|f| f == expected), "{expected}: {files:?}");
        }
        assert_eq!(
            files.iter().any(|f| f == "platform.sqlite3"),
            backend == slipway_server::testing::Backend::Sqlite
        );
        for left_out in [
            "run",
            "bootstrap-token",
            "platform.lock",
            "contexts",
            "work",
        ] {
            assert!(
                !files.iter().any(|f| f.starts_with(left_out)),
                "{left_out}: {files:?}"
            );
        }
        assert_eq!(
            std::fs::read(restored_dir.join("builds/b-1/log")).unwrap(),
            b"step 1 of 1\n"
        );

        let copy = Platform::start(&restored_dir, target_db.url.as_deref()).await;
        for token in [&owner, &member_token, &personal] {
            let (status, me) = copy
                .send(Method::GET, "/v1/account/me", Some(token), None)
                .await;
            assert_eq!(status, StatusCode::OK, "{backend:?}: {me}");
        }
        assert_eq!(emails(&copy, &owner).await, emails(&source, &owner).await);
        assert_eq!(app_ids(&copy, &owner).await, app_ids(&source, &owner).await);
        let (status, latest) = copy
            .send(
                Method::GET,
                &format!("/v1/secrets/entry?secret_type=user&secret_path={SECRET}"),
                Some(&owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{latest}");
        let versions: Vec<i64> = latest["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        for (version, value) in &before {
            assert!(
                versions.contains(version),
                "{backend:?}: v{version} of {versions:?}"
            );
            let (status, body) = copy
                .send(
                    Method::GET,
                    &format!(
                        "/v1/secrets/entry?secret_type=user&secret_path={SECRET}&version={version}"
                    ),
                    Some(&owner),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(
                body["data"]["value"],
                json!(value),
                "{backend:?}: v{version}"
            );
        }
        copy.stop().await;
        source.stop().await;
    }
}

/// A stdlib HTTP server on `$PORT` saying who answered.
const SERVER: &str = r#"import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from api"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

const DEVFILE: &str = "schemaVersion: 2.2.0
metadata:
  name: phoenix
  displayName: Phoenix
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
    container:
      image: api
      endpoints:
        - name: api-http
          targetPort: 8002
commands:
  - id: build-api
    exec:
      component: api
      commandLine: \"echo built > BUILT\"
      workingDir: ${PROJECT_SOURCE}
      group: { kind: build, isDefault: true }
  - id: run-api
    exec:
      component: api
      commandLine: \"python3 server.py\"
      workingDir: ${PROJECT_SOURCE}
      group: { kind: run, isDefault: true }
";

/// The project as a tar.gz build context.
fn context() -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (name, body) in [
        ("devfile.yaml", DEVFILE),
        ("server.py", SERVER),
        ("Dockerfile", "FROM scratch\nCOPY . /app\n"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, body.as_bytes())
            .expect("tar");
    }
    tar.into_inner().expect("tar").finish().expect("gzip")
}

/// Polls the app's status until RUNNING (90 s at most; FAILED fails at once).
async fn wait_running(platform: &Platform, token: &str, id: &str) -> Value {
    for _ in 0..900 {
        let (status, body) = platform
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/status"),
                Some(token),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_ne!(body["status"], "FAILED", "{body}");
        if body["status"] == "RUNNING" {
            return body;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{id} never became RUNNING");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_platform_brings_its_running_app_back_without_run_and_layers() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let source_dir = dir.path().join("platform");
        let db = Db::new(backend, "backup_deploy_source").await;
        let source = Platform::start(&source_dir, db.url.as_deref()).await;
        let owner = source.owner_token();
        let (status, app) = source
            .send(
                Method::POST,
                "/v1/apps",
                Some(&owner),
                Some(&json!({"name": "phoenix", "display_name": "Phoenix"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{app}");
        let id = app["id"].as_str().unwrap().to_owned();
        let r = source
            .client
            .post(format!("{}/v1/apps/{id}/builds", source.base))
            .bearer_auth(&owner)
            .header("content-type", "application/gzip")
            .body(context())
            .send()
            .await
            .expect("upload");
        let accepted = r.status();
        let upload: Value = r.json().await.unwrap();
        assert_eq!(accepted, StatusCode::ACCEPTED, "{upload}");
        let url = upload["app_url"].as_str().expect("app_url").to_owned();
        let running = wait_running(&source, &owner, &id).await;
        assert!(source_dir.join("run").is_dir() && source_dir.join("layers").is_dir());
        // A volume's file (as an app with a volume writes it) goes into the archive.
        let volume = Path::new("volumes").join(&id).join("files");
        std::fs::create_dir_all(source_dir.join(&volume)).unwrap();
        std::fs::write(source_dir.join(&volume).join("notes.txt"), "kept\n").unwrap();

        let (_, pass) = passphrase(dir.path(), "pass", "deploy passphrase");
        let archive = dir.path().join("platform.age");
        slipway_backup::platform::backup(Backup {
            data_dir: source_dir.clone(),
            database_url: db.url.clone(),
            vault_key_file: None,
            to: archive.clone(),
            passphrase: pass.clone(),
            work_factor: WORK,
        })
        .await
        .expect("backup");
        // The copy takes over the app's port: the source stops (and its service with it).
        source.stop().await;

        let restored_dir = dir.path().join("restored");
        let target_db = Db::new(backend, "backup_deploy_target").await;
        slipway_backup::platform::restore(Restore {
            from: archive,
            data_dir: restored_dir.clone(),
            database_url: target_db.url.clone(),
            passphrase: pass,
        })
        .await
        .expect("restore");
        assert!(!restored_dir.join("run").exists() && !restored_dir.join("layers").exists());
        assert_eq!(
            std::fs::read_to_string(restored_dir.join(&volume).join("notes.txt")).unwrap(),
            "kept\n"
        );
        let copy = Platform::start(&restored_dir, target_db.url.as_deref()).await;
        let back = wait_running(&copy, &owner, &id).await;
        assert_ne!(
            back["deployment_id"], running["deployment_id"],
            "{backend:?}"
        );
        let body = copy.client.get(&url).send().await.expect("GET the app");
        assert_eq!(body.status(), StatusCode::OK);
        assert_eq!(body.text().await.unwrap(), "hello from api");
        copy.stop().await;
    }
}

/// A failed backup is told to the whole account's notification channels (`backup.failed`):
/// the running platform picks the event up and delivers it (here to a receiver that is down,
/// so the delivery shows its failed tries with the backup's own reason).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_backup_is_told_to_the_accounts_channels() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("platform");
        let db = Db::new(backend, "backup_told").await;
        let platform = Platform::start(&data_dir, db.url.as_deref()).await;
        let owner = platform.owner_token();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", closed.local_addr().unwrap());
        drop(closed);
        let (status, body) = platform
            .send(
                Method::POST,
                "/v1/account/notifications/channels",
                Some(&owner),
                Some(&json!({"name": "ops", "kind": "webhook", "url": url})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = platform
            .send(
                Method::POST,
                "/v1/account/notifications/subscriptions",
                Some(&owner),
                Some(&json!({"channel": "ops", "events": ["backup.failed"]})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");

        let (_, pass) = passphrase(dir.path(), "pass", "told passphrase");
        let failed = slipway_backup::platform::backup(Backup {
            data_dir: data_dir.clone(),
            database_url: db.url.clone(),
            vault_key_file: None,
            to: dir.path().join("no/such/dir/platform.age"),
            passphrase: pass,
            work_factor: WORK,
        })
        .await
        .expect_err("no directory to write into");
        assert!(failed.to_string().contains("does not exist"), "{failed}");

        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let delivery = loop {
            let (status, body) = platform
                .send(
                    Method::GET,
                    "/v1/account/notifications/deliveries",
                    Some(&owner),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            let found = body["deliveries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| {
                    d["event"]["type"] == "backup.failed"
                        && !d["attempts"].as_array().unwrap().is_empty()
                })
                .cloned();
            if let Some(d) = found {
                break d;
            }
            assert!(std::time::Instant::now() < deadline, "never told: {body}");
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        };
        assert_eq!(delivery["event"]["summary"], "A platform backup failed");
        assert!(delivery["event"]["app"].is_null(), "{delivery}");
        let reason = delivery["event"]["reason"].as_str().unwrap();
        assert!(
            reason.contains("does not exist"),
            "the backup's reason: {reason}"
        );
        assert!(
            delivery["attempts"][0]["error"]
                .as_str()
                .unwrap()
                .contains("cannot connect"),
            "{delivery}"
        );
        platform.stop().await;
    }
}
