//! Notifications end to end, on both databases: channels to a local webhook receiver (each
//! request's signature checked as a receiver would), to a local SMTP server that requires
//! STARTTLS (Python's aiosmtpd, with a certificate made for the test), and to a receiver that
//! is down. A failing job run and a missed one reach the two that are up; the one that is
//! down shows its failed attempts and retries while the others are delivered; "send a test"
//! says whether it arrived and why not; a crash loop and the recovery after it are told.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;

use crate::deploy::{SICK, Service, devfile, project, through_gateway_path, wait_status};
use crate::support::{TestApp, assert_error, backends, spawn_app_configured};

/// What the webhook receiver got: each request's signature header and body.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A webhook receiver on a free port; its URL and what it received.
async fn receiver() -> (String, Received) {
    let got: Received = Arc::default();
    let store = Arc::clone(&got);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let store = Arc::clone(&store);
            async move {
                let sig = headers
                    .get("slipway-signature")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                store.lock().unwrap().push((sig, body.to_vec()));
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

/// A self-signed certificate valid for `days` and its key (`dir/cert.pem`, `dir/key.pem`),
/// made by openssl with the subject options `names`.
async fn self_signed(dir: &Path, days: u32, names: &[&str]) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = tokio::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days"])
        .arg(days.to_string())
        .args(names)
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .await
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    (cert, key)
}

/// A local SMTP server that requires STARTTLS (aiosmtpd), writing each message it accepts
/// into `dir`; its port and certificate (PEM). Ends with the returned child.
async fn smtp_server(dir: &Path) -> (u16, String, tokio::process::Child) {
    let (cert, key) = self_signed(
        dir,
        1,
        &[
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
    )
    .await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mail = dir.join("mail");
    std::fs::create_dir_all(&mail).unwrap();
    let script = r#"
import os, ssl, sys
from aiosmtpd.controller import Controller
cert, key, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
class Keep:
    async def handle_DATA(self, server, session, envelope):
        name = os.path.join(out, "%d.eml" % len(os.listdir(out)))
        with open(name + ".tmp", "wb") as f:
            f.write(envelope.content)
        os.rename(name + ".tmp", name)
        return "250 OK"
ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
ctx.load_cert_chain(cert, key)
c = Controller(Keep(), hostname="127.0.0.1", port=port, tls_context=ctx, require_starttls=True)
c.start()
print("ready", flush=True)
sys.stdin.read()
c.stop()
"#;
    let mut child = // The system Python, which has the apt package (not a pyenv shim in front of it).
        tokio::process::Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .arg(&cert)
        .arg(&key)
        .arg(port.to_string())
        .arg(&mail)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("/usr/bin/python3 with aiosmtpd (apt python3-aiosmtpd)");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("aiosmtpd starts")
        .unwrap();
    assert_eq!(ready.as_deref(), Some("ready"));
    (port, std::fs::read_to_string(&cert).unwrap(), child)
}

/// The messages the SMTP server kept.
fn mails(dir: &Path) -> Vec<String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join("mail"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "eml"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

async fn post(app: &TestApp, token: &str, path: &str, body: Value) -> (StatusCode, Value) {
    app.send(Method::POST, path, Some(token), Some(body.to_string()))
        .await
}

async fn get(app: &TestApp, path: &str) -> Value {
    let (status, body) = app.send(Method::GET, path, Some(&app.owner), None).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

/// Waits until `check` holds, for at most 60 s.
async fn eventually<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The events (parsed bodies) the receiver got with a valid signature under `secret`; panics
/// on one whose signature does not verify.
fn signed_events(got: &Received, secret: &str) -> Vec<Value> {
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    got.lock()
        .unwrap()
        .iter()
        .map(|(sig, body)| {
            assert!(
                slipway_notify::webhook::verify(secret, sig, body, now, 300),
                "a valid signature: {sig}"
            );
            assert!(
                !slipway_notify::webhook::verify(
                    "another-secret-of-some-length",
                    sig,
                    body,
                    now,
                    300
                ),
                "not under another key"
            );
            serde_json::from_slice(body).unwrap()
        })
        .collect()
}

const JOBS: &str = r#"  - id: nightly
    attributes:
      schedule: "0 3 * * *"
    exec:
      component: api
      commandLine: echo "reading $GREETING"; echo "cannot reach the mail server" >&2; exit 3
  - id: catchup
    attributes:
      schedule: "*/2 * * * * *"
    exec:
      component: api
      commandLine: "true"
"#;

#[tokio::test]
async fn a_failed_job_is_told_by_webhook_and_email_and_a_receiver_that_is_down_is_retried() {
    for backend in backends() {
        let mut app = spawn_app_configured(backend, |config| {
            config.notify_retries = slipway_platform::Retries {
                first: Duration::from_millis(300),
                attempts: 3,
            };
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let (hook_url, got) = receiver().await;
        let (smtp_port, cert, _smtp) = smtp_server(dir.path()).await;
        let down = format!(
            "http://127.0.0.1:{}/hook",
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        );
        let channels = "/v1/account/notifications/channels";

        // Bad settings are refused naming the field; members may not add channels.
        let (status, body) = post(
            &app,
            &app.owner,
            channels,
            json!({"name": "x", "kind": "email", "host": "mail", "from": "a@b.c", "to": ["nope"]}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["field"], "to", "{body}");
        let member = app.add_user("member@example.com", "Member").await;
        let reply = app
            .send(
                Method::POST,
                channels,
                Some(member.token.expose()),
                Some(json!({"name": "m", "kind": "slack", "url": hook_url}).to_string()),
            )
            .await;
        assert_error(&reply, StatusCode::FORBIDDEN, "admin_only", None);

        let (status, made) = post(
            &app,
            &app.owner,
            channels,
            json!({"name": "ops-hook", "kind": "webhook", "url": hook_url}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let secret = made["signing_secret"].as_str().unwrap().to_owned();
        assert!(
            made["channel"]["target"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:")
        );
        let (status, body) = post(
            &app,
            &app.owner,
            channels,
            json!({
                "name": "ops-mail", "kind": "email", "host": "127.0.0.1", "port": smtp_port,
                "from": "slipway@example.com", "to": ["ops@example.com"], "ca_certificate": cert,
            }),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = post(&app, &app.owner, channels, json!({"name": "down", "kind": "webhook", "url": down, "secret": "0123456789abcdef0123"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(
            body["signing_secret"].is_null(),
            "a given secret is not echoed: {body}"
        );
        let (status, body) = post(
            &app,
            &app.owner,
            channels,
            json!({"name": "down", "kind": "slack", "url": hook_url}),
        )
        .await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");

        // Send a test: it arrives (by mail, over STARTTLS), or it says why not.
        let (status, tested) = post(
            &app,
            &app.owner,
            &format!("{channels}/ops-mail/test"),
            json!({}),
        )
        .await;
        assert_eq!(
            (status, &tested["delivered"]),
            (StatusCode::OK, &json!(true)),
            "{tested}"
        );
        let (_, tested) = post(
            &app,
            &app.owner,
            &format!("{channels}/down/test"),
            json!({}),
        )
        .await;
        assert_eq!(tested["delivered"], false, "{tested}");
        assert!(
            tested["error"]
                .as_str()
                .unwrap()
                .contains("cannot connect to 127.0.0.1"),
            "{tested}"
        );
        assert!(
            mails(dir.path())[0].contains("test message"),
            "{:?}",
            mails(dir.path())
        );

        // The app's owner subscribes the three channels to its job events.
        let id = app.register(&app.owner, "cron").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, body) = post(
            &app,
            &app.owner,
            "/v1/account/notifications/subscriptions",
            json!({"channel": "ops-hook", "app_id": id, "events": ["backup.failed"]}),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "a platform event is not an app's: {body}"
        );
        for channel in ["ops-hook", "ops-mail", "down"] {
            let (status, body) = post(
                &app,
                &app.owner,
                "/v1/account/notifications/subscriptions",
                json!({"channel": channel, "app_id": id, "events": ["job.failed", "job.missed"]}),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let (status, body) = crate::secrets::create(&app, &app.owner, json!({"secret_type": "app", "app_id": id, "secret_path": "cfg", "data": {"GREETING": "a-secret-value"}})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let mut text = devfile(
            "cron",
            "true",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 server.py api",
                depends_on: &[],
            }],
        );
        text = text.replace(
            "      healthPath: /health\n",
            "      healthPath: /health\n      secrets: [cfg]\n",
        );
        text.push_str(JOBS);
        let build = app.build_one(&id, &project(&text)).await;
        app.wait_build(&build, &["succeeded", "failed", "cancelled"])
            .await;
        assert_eq!(
            wait_status(&app, &id, &["RUNNING", "FAILED"]).await["status"],
            "RUNNING"
        );

        let (status, body) = post(
            &app,
            &app.owner,
            &format!("/v1/apps/{id}/jobs/nightly/run"),
            json!({}),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let event = eventually("the webhook hears the failed job", async || {
            signed_events(&got, &secret)
                .into_iter()
                .find(|e| e["type"] == "job.failed")
        })
        .await;
        assert_eq!(event["app"]["name"], "cron");
        assert_eq!(event["summary"], "Job nightly of cron failed");
        assert!(
            event["reason"].as_str().unwrap().contains("exit code 3"),
            "{event}"
        );
        let mail = eventually("the mail arrives", async || {
            mails(dir.path())
                .into_iter()
                .find(|m| m.contains("Job nightly of cron failed"))
        })
        .await;
        assert!(
            mail.contains("ops@example.com") && mail.contains("exit code 3"),
            "{mail}"
        );
        for leak in ["a-secret-value", "cannot reach the mail server"] {
            assert!(
                !mail.contains(leak),
                "no secret or log line in a message: {mail}"
            );
            assert!(!event.to_string().contains(leak), "{event}");
        }

        // The receiver that is down: its attempts fail and are retried, then it fails.
        let deliveries = format!("/v1/account/notifications/deliveries?app_id={id}");
        let failed = eventually("the down channel gives up", async || {
            let all = get(&app, &deliveries).await;
            all["deliveries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["channel_name"] == "down" && d["status"] == "failed")
                .cloned()
        })
        .await;
        let attempts = failed["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 3, "{failed}");
        assert!(
            attempts
                .iter()
                .all(|a| a["error"].as_str().unwrap().contains("cannot connect")),
            "{failed}"
        );
        let all = get(&app, &deliveries).await;
        for name in ["ops-hook", "ops-mail"] {
            let d = all["deliveries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["channel_name"] == name)
                .unwrap();
            assert_eq!(d["status"], "delivered", "{d}");
            assert_eq!(d["attempts"].as_array().unwrap().len(), 1, "{d}");
        }
        let listed = get(&app, channels).await;
        let down_listed = listed["channels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "down")
            .unwrap()
            .clone();
        assert_eq!(down_listed["last_delivery_failed"], true, "{listed}");
        // A member reads one app's deliveries only if they may view it.
        let reply = app
            .send(Method::GET, &deliveries, Some(member.token.expose()), None)
            .await;
        assert_eq!(reply.0, StatusCode::NOT_FOUND, "{:?}", reply.1);

        // Down over due times: the missed runs are told.
        app.stop().await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        app.start_again().await;
        let missed = eventually("the webhook hears the missed job", async || {
            signed_events(&got, &secret)
                .into_iter()
                .find(|e| e["type"] == "job.missed")
        })
        .await;
        assert!(
            missed["reason"]
                .as_str()
                .unwrap()
                .contains("while the platform was not running"),
            "{missed}"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn a_crash_loop_and_the_recovery_after_it_are_told() {
    for backend in backends() {
        let app = spawn_app_configured(backend, |config| {
            config.liveness = slipway_platform::Liveness {
                interval: Duration::from_millis(300),
                failures: 2,
                restarts: 1,
            };
        })
        .await;
        let (hook_url, got) = receiver().await;
        let (status, made) = post(
            &app,
            &app.owner,
            "/v1/account/notifications/channels",
            json!({"name": "team", "kind": "webhook", "url": hook_url}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let secret = made["signing_secret"].as_str().unwrap().to_owned();
        // A whole-account subscription (an admin's) hears every app.
        let (status, body) = post(
            &app,
            &app.owner,
            "/v1/account/notifications/subscriptions",
            json!({"channel": "team", "events": ["all"]}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["events"].as_array().unwrap().len() >= 8, "{body}");

        let text = devfile(
            "sick",
            "true",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 sick.py",
                depends_on: &[],
            }],
        );
        let mut files = project(&text);
        files.push(("sick.py".into(), SICK.as_bytes().to_vec()));
        let id = app.register(&app.owner, "sick").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let build = app.build_one(&id, &files).await;
        app.wait_build(&build, &["succeeded", "failed", "cancelled"])
            .await;
        assert_eq!(
            wait_status(&app, &id, &["RUNNING", "FAILED"]).await["status"],
            "RUNNING"
        );
        through_gateway_path(&app, "sick.localhost", "/break").await;
        wait_status(&app, &id, &["FAILED"]).await;
        let looping = eventually("the crash loop is told", async || {
            signed_events(&got, &secret)
                .into_iter()
                .find(|e| e["type"] == "app.crash_looping")
        })
        .await;
        assert_eq!(looping["app"]["id"], id.as_str());
        assert!(
            looping["reason"]
                .as_str()
                .unwrap()
                .contains("health check GET /health failed"),
            "{looping}"
        );
        assert!(
            !looping["reason"]
                .as_str()
                .unwrap()
                .contains("last log lines"),
            "{looping}"
        );

        // A fixed build serves again: the recovery is told, once.
        let build = app
            .build_one(
                &id,
                &project(&text.replace("python3 sick.py", "python3 server.py api")),
            )
            .await;
        app.wait_build(&build, &["succeeded", "failed", "cancelled"])
            .await;
        assert_eq!(
            wait_status(&app, &id, &["RUNNING"]).await["status"],
            "RUNNING"
        );
        eventually("the recovery is told", async || {
            signed_events(&got, &secret).into_iter().find(|e| {
                e["type"] == "deployment.recovered" && e["summary"] == "sick is running again"
            })
        })
        .await;
        let kinds: Vec<String> = signed_events(&got, &secret)
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            kinds
                .iter()
                .filter(|k| *k == "deployment.recovered")
                .count(),
            1,
            "{kinds:?}"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn a_tls_certificate_that_expires_soon_is_told_to_the_whole_account() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = self_signed(dir.path(), 5, &["-subj", "/CN=localhost"]).await;
        let files = slipway_server::tls::TlsFiles { cert, key };
        let app = spawn_app_configured(backend, move |config| {
            config.tls = Some(files);
            config.certificate_check = Duration::from_millis(300);
        })
        .await;
        let (hook_url, got) = receiver().await;
        let (status, made) = post(
            &app,
            &app.owner,
            "/v1/account/notifications/channels",
            json!({"name": "certs", "kind": "webhook", "url": hook_url}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let secret = made["signing_secret"].as_str().unwrap().to_owned();
        // An app's subscription cannot name it: it is about the platform.
        let id = app.register(&app.owner, "certless").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, body) = post(
            &app,
            &app.owner,
            "/v1/account/notifications/subscriptions",
            json!({"channel": "certs", "app_id": id, "events": ["certificate.expiring"]}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) = post(
            &app,
            &app.owner,
            "/v1/account/notifications/subscriptions",
            json!({"channel": "certs", "events": ["certificate.expiring"]}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let told = eventually("the certificate is told", async || {
            signed_events(&got, &secret)
                .into_iter()
                .find(|e| e["type"] == "certificate.expiring")
        })
        .await;
        assert_eq!(
            told["summary"], "The platform's TLS certificate expires in 5 days",
            "{told}"
        );
        assert!(told["app"].is_null(), "{told}");
        assert!(
            told["reason"]
                .as_str()
                .unwrap()
                .contains("cert.pem is valid until"),
            "{told}"
        );
        // Told once a day, not at every check.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let times = signed_events(&got, &secret)
            .iter()
            .filter(|e| e["type"] == "certificate.expiring")
            .count();
        assert_eq!(times, 1);
        app.finish().await;
    }
}
