//! Deployments over real HTTP on the process runtime: tiny stdlib-only Python services built
//! with the native builder deploy by themselves, answer through the gateway (Host header
//! sent to 127.0.0.1), stop on disable, come back on enable and after a server restart,
//! start in dependency order, fail with their stderr in a presigned runtime log, and refuse
//! to run a tampered image.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use slipway_image::{Digest, ImageStore};
use slipway_platform::logs::presign::UrlSigner;

use crate::support::{TestApp, backends, spawn_app};

/// A stdlib HTTP server on `$PORT`: `/health` (which, with `API_URL` set, also needs the API
/// to answer) and `/` saying who answered: its pid (to see the process stopped) and a random
/// instance id drawn at start (to tell instances apart: a pid can be reused once the kernel's
/// pid counter wraps, at 32,768 on a stock Linux, which a busy test machine reaches).
pub(crate) const SERVER: &str = r#"import http.server, os, sys, urllib.request
NAME = sys.argv[1]
API = os.environ.get("API_URL")
INSTANCE = os.urandom(8).hex()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health" and API:
            try:
                urllib.request.urlopen(API + "/health", timeout=2).read()
            except Exception:
                self.send_response(503); self.end_headers(); return
        body = ("hello from %s pid %d instance %s api %s" % (NAME, os.getpid(), INSTANCE, API)).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
print("serving", NAME, "on", os.environ["PORT"], flush=True)
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

/// A service that complains on stderr and exits at once.
const CRASH: &str =
    "import sys\nsys.stderr.write('boom: DATABASE_URL is not set\\n')\nsys.exit(3)\n";

/// Serves until `GET /crash`, which leaves a marker and exits; with the marker present it
/// exits at once at every start, complaining on stderr.
const FLAKY: &str = r#"import http.server, os, sys
if os.path.exists("CRASHED"):
    sys.stderr.write("crashed earlier: the CRASHED marker is present\n")
    sys.exit(4)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/crash":
            open("CRASHED", "w").close()
            os._exit(4)
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

pub(crate) struct Service<'a> {
    pub(crate) name: &'a str,
    pub(crate) port: u16,
    pub(crate) run: &'a str,
    pub(crate) depends_on: &'a [&'a str],
}

/// A devfile with one image and one container component per service, each with a build
/// command (`build`) and a run command, `healthPath: /health`.
pub(crate) fn devfile(app: &str, build: &str, services: &[Service<'_>]) -> String {
    let mut out = format!(
        "schemaVersion: 2.2.0\nmetadata:\n  name: {app}\n  displayName: Deploy test\ncomponents:\n"
    );
    for s in services {
        let deps = s.depends_on.join(", ");
        out.push_str(&format!(
            "  - name: {n}-image\n    image:\n      imageName: {n}\n      dockerfile:\n        \
             uri: Dockerfile\n        buildContext: .\n  - name: {n}\n    attributes:\n      \
             healthPath: /health\n      dependsOn: [{deps}]\n    container:\n      image: {n}\n      \
             endpoints:\n        - name: {n}-http\n          targetPort: {p}\n",
            n = s.name,
            p = s.port,
        ));
    }
    out.push_str("commands:\n");
    for s in services {
        out.push_str(&format!(
            "  - id: build-{n}\n    exec:\n      component: {n}\n      commandLine: \"{build}\"\n      \
             workingDir: ${{PROJECT_SOURCE}}\n      group: {{ kind: build, isDefault: true }}\n  \
             - id: run-{n}\n    exec:\n      component: {n}\n      commandLine: \"{run}\"\n      \
             workingDir: ${{PROJECT_SOURCE}}\n      group: {{ kind: run, isDefault: true }}\n",
            n = s.name,
            run = s.run,
        ));
    }
    out
}

/// `web` (listed first, port 3000) depending on `api` (port 8002), whose URL web's health
/// check calls.
fn web_and_api(app: &str) -> String {
    devfile(
        app,
        "echo built > BUILT",
        &[
            Service {
                name: "web",
                port: 3000,
                run: "python3 server.py web",
                depends_on: &["api"],
            },
            Service {
                name: "api",
                port: 8002,
                run: "python3 server.py api",
                depends_on: &[],
            },
        ],
    )
}

pub(crate) fn project(devfile: &str) -> Vec<(String, Vec<u8>)> {
    vec![
        ("devfile.yaml".into(), devfile.as_bytes().to_vec()),
        ("server.py".into(), SERVER.as_bytes().to_vec()),
        ("crash.py".into(), CRASH.as_bytes().to_vec()),
        ("flaky.py".into(), FLAKY.as_bytes().to_vec()),
        ("Dockerfile".into(), b"FROM scratch\nCOPY . /app\n".to_vec()),
    ]
}

/// Registers `name` and uploads its project; returns the app id.
pub(crate) async fn register_and_build(app: &TestApp, name: &str, devfile: &str) -> String {
    let created = app.register(&app.owner, name).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, body) = app
        .upload(
            &app.owner,
            &id,
            "",
            "application/zstd",
            crate::support::tar_zst(&project(devfile)),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    id
}

pub(crate) async fn status_of(app: &TestApp, id: &str) -> Value {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/status"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Polls the app's status until it is one of `wanted` (90 s at most).
pub(crate) async fn wait_status(app: &TestApp, id: &str, wanted: &[&str]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let body = status_of(app, id).await;
        if wanted.iter().any(|w| body["status"] == *w) {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "never reached {wanted:?}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `GET url` with Python's urllib (the system resolver, no browser magic); its body. Async:
/// the platform under test serves on this test's runtime.
pub(crate) async fn urllib_get(url: &str) -> String {
    let out = tokio::process::Command::new("python3")
        .args([
            "-c",
            "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())",
            url,
        ])
        .output()
        .await
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "urllib could not GET {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `GET http://127.0.0.1:<gateway>/` with `Host: <host>:<gateway port>`.
pub(crate) async fn through_gateway(app: &TestApp, host: &str) -> (StatusCode, String) {
    let gateway = app.gateway.expect("the gateway listens");
    let r = app
        .client
        .get(format!("http://{gateway}/"))
        .header("host", format!("{host}:{}", gateway.port()))
        .send()
        .await
        .expect("gateway request");
    let status = r.status();
    (status, r.text().await.unwrap_or_default())
}

/// `GET <path>` through the gateway; a connection the service dropped is a 599.
pub(crate) async fn through_gateway_path(
    app: &TestApp,
    host: &str,
    path: &str,
) -> (StatusCode, String) {
    let gateway = app.gateway.expect("the gateway listens");
    let Ok(r) = app
        .client
        .get(format!("http://{gateway}{path}"))
        .header("host", format!("{host}:{}", gateway.port()))
        .send()
        .await
    else {
        return (StatusCode::from_u16(599).unwrap(), String::new());
    };
    let status = r.status();
    (status, r.text().await.unwrap_or_default())
}

pub(crate) fn pid_in(body: &str) -> String {
    word_after(body, "pid")
}

/// The instance id a [`SERVER`] answered with: the same for the same process, new for every
/// start.
pub(crate) fn instance_in(body: &str) -> String {
    word_after(body, "instance")
}

fn word_after(body: &str, label: &str) -> String {
    body.split_whitespace()
        .skip_while(|w| *w != label)
        .nth(1)
        .unwrap_or_else(|| panic!("no {label} in {body:?}"))
        .to_owned()
}

fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
    }
}

pub(crate) async fn wait_gone(pid: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !process_gone(pid) {
        assert!(Instant::now() < deadline, "process {pid} still runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) async fn post(app: &TestApp, id: &str, action: &str) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/apps/{id}/{action}"),
        Some(&app.owner),
        None,
    )
    .await
}

async fn logs(app: &TestApp, id: &str, query: &str) -> Vec<Value> {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/logs?{query}"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["logs"].as_array().expect("logs").clone()
}

#[tokio::test]
async fn an_app_deploys_serves_through_the_gateway_disables_enables_and_deletes() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let df = devfile(
            "hello",
            // A real virtual environment: its paths must work where the image is unpacked.
            "python3 -m venv --without-pip .venv",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 server.py api",
                depends_on: &[],
            }],
        );
        let id = register_and_build(&app, "hello", &df).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        // The default gateway mode: the public service answers on a loopback port of its
        // own, which Python's urllib (the system resolver) reaches right away.
        let url = running["app_url"].as_str().unwrap().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{running}");
        assert_eq!(running["services"][0]["name"], "api");
        assert_eq!(running["services"][0]["status"], "healthy");
        assert_eq!(running["services"][0]["url"], url.as_str());
        let (_, got) = app.get_app(&app.owner, &id).await;
        assert_eq!(got["url"], url.as_str());
        assert!(urllib_get(&url).await.starts_with("hello from api"));

        let (status, body) = through_gateway(&app, "hello.localhost").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.starts_with("hello from api"), "{body}");
        let (status, same) = through_gateway(&app, "api.hello.localhost").await;
        assert_eq!(status, StatusCode::OK);
        let pid = pid_in(&body);
        assert_eq!(instance_in(&same), instance_in(&body));
        assert_eq!(
            through_gateway(&app, "nobody.localhost").await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            through_gateway(&app, "web.hello.localhost").await.0,
            StatusCode::BAD_GATEWAY,
            "a known app without that service"
        );

        // Disable: processes stopped, suspended, the URL stops answering.
        let (status, body) = post(&app, &id, "disable").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "suspended");
        assert_eq!(body["enabled"], false);
        wait_gone(&pid).await;
        assert_eq!(
            through_gateway(&app, "hello.localhost").await.0,
            StatusCode::BAD_GATEWAY
        );

        // Enable: deploying, then RUNNING again with a new process.
        let (status, body) = post(&app, &id, "enable").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            body["status"] == "deploying" || body["status"] == "RUNNING",
            "{body}"
        );
        let again = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(again["status"], "RUNNING", "{again}");
        assert_eq!(again["app_url"], url.as_str(), "the URL stays the same");
        assert!(urllib_get(&url).await.starts_with("hello from api"));
        let (status, body) = through_gateway(&app, "hello.localhost").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let pid = pid_in(&body);

        // Logs: the latest build and the latest deployment, each behind a presigned URL.
        let entries = logs(&app, &id, "").await;
        let kinds: Vec<&str> = entries
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds.iter().filter(|k| **k == "build").count(),
            1,
            "{entries:?}"
        );
        assert_eq!(
            kinds.iter().filter(|k| **k == "runtime").count(),
            1,
            "{entries:?}"
        );
        let all = logs(&app, &id, "latest_only=false&service_name=api").await;
        assert_eq!(
            all.iter().filter(|e| e["kind"] == "runtime").count(),
            2,
            "{all:?}"
        );
        let runtime = entries.iter().find(|e| e["kind"] == "runtime").unwrap();
        let text = reqwest::get(runtime["url"].as_str().unwrap())
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(text.contains("serving api on"), "{text}");

        // Delete: the process goes, the host is unknown, the name is free.
        let (status, _) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        wait_gone(&pid).await;
        assert_eq!(
            through_gateway(&app, "hello.localhost").await.0,
            StatusCode::NOT_FOUND
        );
        assert!(!app.data_dir().join("run").join(&id).exists());
        app.register(&app.owner, "hello").await;
        app.finish().await;
    }
}

#[tokio::test]
async fn two_services_start_in_dependency_order_and_an_unchanged_one_is_kept() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        // web is listed first but depends on api, whose URL its health check calls.
        let df = web_and_api("shop");
        let id = register_and_build(&app, "shop", &df).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        let service = |name: &str| {
            running["services"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == name)
                .cloned()
                .unwrap_or_else(|| panic!("{name} in {running}"))
        };
        let (api, web) = (service("api"), service("web"));
        let (api_healthy, web_started) = (
            api["healthy_at"].as_str().unwrap(),
            web["started_at"].as_str().unwrap(),
        );
        assert!(
            api["started_at"].as_str().unwrap() <= api_healthy && api_healthy <= web_started,
            "api must be healthy before web starts: {running}"
        );
        // The primary service is the first in the devfile with a public endpoint: web.
        let (status, body) = through_gateway(&app, "shop.localhost").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.starts_with("hello from web"), "{body}");
        assert!(
            body.contains("api http://127.0.0.1:"),
            "API_URL was set: {body}"
        );
        let (status, body) = through_gateway(&app, "api.shop.localhost").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.starts_with("hello from api"), "{body}");
        // Both are public: each has its own URL, which Python's urllib reaches.
        for s in [&api, &web] {
            let url = s["url"].as_str().unwrap();
            assert!(
                urllib_get(url)
                    .await
                    .starts_with(&format!("hello from {}", s["name"].as_str().unwrap()))
            );
        }
        assert_eq!(running["app_url"], web["url"]);

        // Only web changes: the next deployment starts a new web and keeps api's instance
        // (same image, same environment), so api is not redeployed.
        let (_, web_before) = through_gateway(&app, "shop.localhost").await;
        let api_before = body;
        // The deployments so far (the first builds may have made more than one): the one
        // this upload makes is the first newest deployment that is none of these.
        let known: Vec<Value> = crate::history::history(&app, &id)
            .await
            .iter()
            .map(|d| d["id"].clone())
            .collect();
        let mut files = project(&df);
        files.push(("web-note.txt".into(), b"web changed".to_vec()));
        let (status, body) = app
            .upload(
                &app.owner,
                &id,
                "service_name=web",
                "application/zstd",
                crate::support::tar_zst(&files),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let deadline = Instant::now() + Duration::from_secs(120);
        let (_, history) = loop {
            let (code, history) = app
                .send(
                    Method::GET,
                    &format!("/v1/apps/{id}/deployments"),
                    Some(&app.owner),
                    None,
                )
                .await;
            let all = history["deployments"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if all
                .first()
                .is_some_and(|d| !known.contains(&d["id"]) && d["status"] == "RUNNING")
            {
                break (code, history);
            }
            assert!(Instant::now() < deadline, "no new deployment: {history}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let (_, api_after) = through_gateway(&app, "api.shop.localhost").await;
        let (_, web_after) = through_gateway(&app, "shop.localhost").await;
        assert_eq!(
            instance_in(&api_after),
            instance_in(&api_before),
            "{backend:?}: api kept: {history}"
        );
        assert_ne!(
            instance_in(&web_after),
            instance_in(&web_before),
            "{backend:?}: web redeployed: before {web_before:?}, after {web_after:?}: {history}"
        );
        assert!(web_after.contains("api http://127.0.0.1:"), "{web_after}");
        // The kept service's log is the new deployment's too.
        let newest = &history["deployments"][0];
        let log = app
            .data_dir()
            .join("deployments")
            .join(newest["id"].as_str().unwrap())
            .join("api.log");
        assert!(
            std::fs::read_to_string(&log)
                .unwrap()
                .contains("serving api"),
            "{}",
            log.display()
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn an_internal_service_has_no_url_and_answers_its_dependents_only() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let df = web_and_api("inner").replacen(
            "          targetPort: 8002\n",
            "          targetPort: 8002\n          exposure: internal\n",
            1,
        );
        let id = register_and_build(&app, "inner", &df).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        let services = running["services"].as_array().unwrap();
        let url_of =
            |name: &str| services.iter().find(|s| s["name"] == name).unwrap()["url"].clone();
        assert_eq!(url_of("api"), Value::Null, "{running}");
        let web = url_of("web");
        let body = urllib_get(web.as_str().unwrap()).await;
        assert!(body.starts_with("hello from web"), "{body}");
        assert!(
            body.contains("api http://127.0.0.1:"),
            "web has API_URL: {body}"
        );
        let (status, _) = through_gateway(&app, "api.inner.localhost").await;
        assert_eq!(
            status,
            StatusCode::BAD_GATEWAY,
            "no route to an internal service"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn a_crashing_service_fails_and_its_presigned_runtime_log_has_its_stderr() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let df = devfile(
            "crashy",
            "echo built > BUILT",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 crash.py",
                depends_on: &[],
            }],
        );
        let id = register_and_build(&app, "crashy", &df).await;
        let failed = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(failed["status"], "FAILED", "{backend:?}: {failed}");
        let reason = failed["reason"].as_str().unwrap();
        assert!(reason.contains("service api exited 3 times"), "{reason}");
        assert!(reason.contains("exit code 3"), "{reason}");
        assert!(reason.contains("boom: DATABASE_URL is not set"), "{reason}");
        assert_eq!(failed["services"][0]["status"], "failed", "{failed}");

        let entries = logs(&app, &id, "latest_only=true&service_name=api").await;
        let runtime = entries.iter().find(|e| e["kind"] == "runtime").unwrap();
        assert!(runtime["deployment_id"].is_string() && runtime["size"].as_u64() > Some(0));
        let url = runtime["url"].as_str().unwrap().to_owned();
        // No token: the signature is the credential.
        let r = reqwest::get(&url).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let text = r.text().await.unwrap();
        assert!(text.contains("boom: DATABASE_URL is not set"), "{text}");
        let build = entries.iter().find(|e| e["kind"] == "build").unwrap();
        let text = reqwest::get(build["url"].as_str().unwrap())
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(text.contains("==> succeeded"), "{text}");

        // A modified signature, a moved expiry, or a past one are 403s.
        let (head, sig) = url.rsplit_once("signature=").unwrap();
        let flipped = if sig.starts_with('0') { "1" } else { "0" };
        let bad = format!("{head}signature={flipped}{}", &sig[1..]);
        assert_eq!(
            reqwest::get(&bad).await.unwrap().status(),
            StatusCode::FORBIDDEN
        );
        let later = url.replacen("expires=", "expires=9", 1);
        assert_eq!(
            reqwest::get(&later).await.unwrap().status(),
            StatusCode::FORBIDDEN
        );
        let path = url
            .split_once("/v1/logs/")
            .map(|(_, rest)| format!("/v1/logs/{}", rest.split('?').next().unwrap()))
            .unwrap();
        let signer = UrlSigner::load_or_create(&app.data_dir()).unwrap();
        let past = 1_000_000;
        let expired = format!(
            "{}{path}?expires={past}&signature={}",
            app.base,
            signer.sign(&path, past)
        );
        assert_eq!(
            reqwest::get(&expired).await.unwrap().status(),
            StatusCode::FORBIDDEN
        );
        let unsigned = format!("{}{path}", app.base);
        assert_eq!(
            reqwest::get(&unsigned).await.unwrap().status(),
            StatusCode::FORBIDDEN
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn a_tampered_image_is_refused_with_a_signature_reason() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let df = devfile(
            "tamper",
            "echo built > BUILT",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 server.py api",
                depends_on: &[],
            }],
        );
        let id = register_and_build(&app, "tamper", &df).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{running}");
        let (status, _) = post(&app, &id, "disable").await;
        assert_eq!(status, StatusCode::OK);

        // Alter the layer blob in the store, then enable: nothing may run.
        let build_id = running["services"][0]["build_id"].as_str().unwrap();
        let (_, build) = app.get_build(&app.owner, build_id, false).await;
        let digest = build["image_uri"]
            .as_str()
            .unwrap()
            .rsplit_once('@')
            .unwrap()
            .1;
        let store = ImageStore::open(&app.data_dir()).unwrap();
        let manifest: Value =
            serde_json::from_slice(&store.read_blob(&Digest::parse(digest).unwrap()).unwrap())
                .unwrap();
        let layer = Digest::parse(manifest["layers"][0]["digest"].as_str().unwrap()).unwrap();
        let path = store.blob_path(&layer);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();

        let (status, _) = post(&app, &id, "enable").await;
        assert_eq!(status, StatusCode::OK);
        let failed = wait_status(&app, &id, &["FAILED", "RUNNING"]).await;
        assert_eq!(failed["status"], "FAILED", "{backend:?}: {failed}");
        let reason = failed["reason"].as_str().unwrap();
        assert!(reason.contains("signature verification"), "{reason}");
        assert!(reason.contains("altered"), "{reason}");
        assert!(failed["services"][0]["started_at"].is_null(), "{failed}");
        assert_eq!(
            through_gateway(&app, "tamper.localhost").await.0,
            StatusCode::BAD_GATEWAY
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn a_server_restart_brings_a_running_app_back() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let df = devfile(
            "phoenix",
            "echo built > BUILT",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 server.py api",
                depends_on: &[],
            }],
        );
        let id = register_and_build(&app, "phoenix", &df).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{running}");
        let (_, body) = through_gateway(&app, "phoenix.localhost").await;
        let (pid, instance) = (pid_in(&body), instance_in(&body));

        app.restart().await;
        // A graceful stop stopped the service's process group.
        wait_gone(&pid).await;
        let back = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(back["status"], "RUNNING", "{backend:?}: {back}");
        assert_ne!(back["deployment_id"], running["deployment_id"]);
        let (status, body) = through_gateway(&app, "phoenix.localhost").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_ne!(instance_in(&body), instance);
        app.finish().await;
    }
}

#[tokio::test]
async fn a_running_service_that_keeps_crashing_fails_the_deployment() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let df = devfile(
            "flaky",
            "echo built > BUILT",
            &[Service {
                name: "api",
                port: 8002,
                run: "python3 flaky.py",
                depends_on: &[],
            }],
        );
        let id = register_and_build(&app, "flaky", &df).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");

        // From now on every start exits at once: after 5 quick exits the supervisor gives up.
        let started = Instant::now();
        through_gateway_path(&app, "flaky.localhost", "/crash").await;
        let failed = wait_status(&app, &id, &["FAILED"]).await;
        assert!(started.elapsed() < Duration::from_secs(60), "{failed}");
        assert_eq!(
            failed["deployment_id"], running["deployment_id"],
            "{failed}"
        );
        let reason = failed["reason"].as_str().unwrap();
        assert!(
            reason.contains("service api exited 5 times within 300 s"),
            "{reason}"
        );
        assert!(
            reason.contains("after the deployment was RUNNING"),
            "{reason}"
        );
        assert!(reason.contains("exit code 4"), "{reason}");
        assert!(reason.contains("the CRASHED marker is present"), "{reason}");
        assert_eq!(failed["services"][0]["status"], "failed", "{failed}");
        assert_eq!(
            through_gateway(&app, "flaky.localhost").await.0,
            StatusCode::BAD_GATEWAY
        );
        let entries = logs(&app, &id, "latest_only=true&service_name=api").await;
        let runtime = entries.iter().find(|e| e["kind"] == "runtime").unwrap();
        let text = reqwest::get(runtime["url"].as_str().unwrap())
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            text.contains("==> giving up: service api exited 5 times"),
            "{text}"
        );

        // A restart does not bring a FAILED deployment back.
        app.restart().await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = status_of(&app, &id).await;
        assert_eq!(after["status"], "FAILED", "{after}");
        app.finish().await;
    }
}

/// Healthy until `GET /sicken` (unhealthy until its next start) or `GET /break` (a marker
/// that keeps every later start unhealthy); `/health` answers 503 then.
pub(crate) const SICK: &str = r#"import http.server, os
state = {"sick": False}
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/sicken":
            state["sick"] = True
        if self.path == "/break":
            open("BROKEN", "w").close()
        unhealthy = self.path == "/health" and (state["sick"] or os.path.exists("BROKEN"))
        self.send_response(503 if unhealthy else 200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"no" if unhealthy else b"ok")
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

/// The service's runtime log of the app's latest deployment.
async fn runtime_log(app: &TestApp, id: &str) -> String {
    let entries = logs(app, id, "latest_only=true&service_name=api").await;
    let runtime = entries.iter().find(|e| e["kind"] == "runtime").unwrap();
    reqwest::get(runtime["url"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// Health after the switch: a RUNNING service whose health check starts failing is restarted
/// (noted in its log) and, healthy again, keeps the deployment RUNNING; one that stays
/// unhealthy through every restart makes the deployment and the app FAILED as crash-looping,
/// with the reason. One platform database: the watch reads none.
#[tokio::test]
async fn a_running_service_whose_health_check_fails_is_restarted_then_given_up_on() {
    let app = crate::support::spawn_app_configured(backends()[0], |config| {
        config.liveness = slipway_platform::Liveness {
            interval: Duration::from_millis(300),
            failures: 2,
            restarts: 2,
        };
    })
    .await;
    let mut files = project(&devfile(
        "sick",
        "echo built > BUILT",
        &[Service {
            name: "api",
            port: 8002,
            run: "python3 sick.py",
            depends_on: &[],
        }],
    ));
    files.push(("sick.py".into(), SICK.as_bytes().to_vec()));
    let id = app.register(&app.owner, "sick").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let build_id = app.build_one(&id, &files).await;
    app.wait_build(&build_id, &["succeeded", "failed", "cancelled"])
        .await;
    let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
    assert_eq!(running["status"], "RUNNING", "{running}");

    // Unhealthy until restarted: restarted once, healthy again, still the same RUNNING deployment.
    through_gateway_path(&app, "sick.localhost", "/sicken").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let log = runtime_log(&app, &id).await;
        if log.contains("==> api is healthy again") {
            assert!(
                log.contains(
                    "==> restarting api: its health check GET /health failed 2 times in a row (restart 1 of 2)"
                ),
                "{log}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never restarted and healthy: {log}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let now = status_of(&app, &id).await;
    assert_eq!(now["status"], "RUNNING", "{now}");
    assert_eq!(now["deployment_id"], running["deployment_id"]);
    assert_eq!(
        through_gateway(&app, "sick.localhost").await.0,
        StatusCode::OK
    );

    // Unhealthy for good: two restarts, then FAILED with the reason.
    through_gateway_path(&app, "sick.localhost", "/break").await;
    let failed = wait_status(&app, &id, &["FAILED"]).await;
    let reason = failed["reason"].as_str().unwrap();
    assert!(
        reason.contains(
            "service api is crash-looping: its health check GET /health failed 2 times in a row again after 2 restarts"
        ),
        "{reason}"
    );
    assert!(
        reason.contains("after the deployment was RUNNING"),
        "{reason}"
    );
    let log = runtime_log(&app, &id).await;
    assert!(log.contains("(restart 2 of 2)"), "{log}");
    assert_eq!(
        through_gateway(&app, "sick.localhost").await.0,
        StatusCode::BAD_GATEWAY
    );
    app.finish().await;
}
