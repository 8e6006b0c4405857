//! The container runtime on a real engine: podman with the platform's own configuration
//! (`DATA_DIR/engine/containers.conf`), images built by buildah from the templates' own
//! Dockerfiles `FROM python:3.12-slim` — made on this machine from Debian packages by
//! `bash scripts/dev images`, since no registry is reachable here.
//!
//! These tests need podman, buildah and that base image. `bash scripts/dev test` (CI) makes
//! the image and sets `SLIPWAY_TEST_CONTAINERS=1`, under which a missing prerequisite fails
//! the test; without it the tests say why they skip when the machine lacks them.

use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;
use slipway_platform::{BuilderKind, RuntimeKind};

use crate::deploy::{post, status_of, urllib_get, wait_status};
use crate::support::{TestApp, backends, spawn_app_configured, tar_zst};
use crate::template::template_files;

/// The base image the fixtures and the templates build on.
const BASE: &str = "docker.io/library/python:3.12-slim";

/// Whether to run: see the module documentation.
fn containers_here() -> bool {
    if std::env::var_os("SLIPWAY_TEST_CONTAINERS").is_some_and(|v| v == "1") {
        return true;
    }
    let present = Command::new("buildah")
        .args(["inspect", "--type", "image", BASE])
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new("podman")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !present {
        eprintln!(
            "skipped: podman, buildah or {BASE} is missing (run `bash scripts/dev images`, or set \
             SLIPWAY_TEST_CONTAINERS=1 to make this a failure)"
        );
    }
    present
}

/// A platform on the container runtime with the buildah builder; builds trust this
/// machine's CA bundle, as by default (its HTTPS may go through a TLS-inspecting proxy).
async fn spawn(backend: slipway_platform::Backend) -> TestApp {
    spawn_app_configured(backend, |c| {
        c.runtime = RuntimeKind::Container;
        c.builder = BuilderKind::Buildah;
    })
    .await
}

/// `podman args…` with the platform's configuration; its stdout.
fn podman(app: &TestApp, args: &[&str]) -> String {
    let out = Command::new("podman")
        .args(args)
        .env(
            "CONTAINERS_CONF",
            app.data_dir().join("engine/containers.conf"),
        )
        .output()
        .expect("podman runs");
    assert!(
        out.status.success(),
        "podman {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The names of the containers (or networks) labelled with `label`.
fn labelled(app: &TestApp, networks: bool, label: &str) -> Vec<String> {
    let filter = format!("label={label}");
    let args: Vec<&str> = if networks {
        vec![
            "network",
            "ls",
            "--filter",
            &filter,
            "--format",
            "{{.Name}}",
        ]
    } else {
        vec!["ps", "-a", "--filter", &filter, "--format", "{{.Names}}"]
    };
    podman(app, &args)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn app_label(id: &str) -> String {
    format!("slipway.app={id}")
}

/// Asserts nothing of app `id` is left in the engine: no container, no network.
fn assert_nothing_left(app: &TestApp, id: &str, when: &str) {
    assert_eq!(
        labelled(app, false, &app_label(id)),
        Vec::<String>::new(),
        "containers left {when}"
    );
    assert_eq!(
        labelled(app, true, &app_label(id)),
        Vec::<String>::new(),
        "networks left {when}"
    );
}

/// Uploads `files` (every service), waits for each build and asserts they succeeded with
/// buildah; returns the app id.
async fn register_and_build(app: &TestApp, name: &str, files: &[(String, Vec<u8>)]) -> String {
    let created = app.register(&app.owner, name).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, body) = app
        .upload(&app.owner, &id, "", "application/zstd", tar_zst(files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let deadline = Instant::now() + Duration::from_secs(600);
    for build in body["build_ids"].as_array().unwrap() {
        let build = build.as_str().unwrap();
        loop {
            let (_, b) = app.get_build(&app.owner, build, true).await;
            if ["succeeded", "failed", "cancelled"]
                .iter()
                .any(|s| b["status"] == *s)
            {
                assert_eq!(b["status"], "succeeded", "{}", b["log"]);
                assert_eq!(b["builder"], "buildah", "{b}");
                break;
            }
            assert!(Instant::now() < deadline, "build never ended: {b}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    id
}

/// The end of every service log of every deployment, for failure messages.
fn service_logs(app: &TestApp) -> String {
    let mut out = String::new();
    let Ok(deployments) = std::fs::read_dir(app.data_dir().join("deployments")) else {
        return out;
    };
    for deployment in deployments.flatten() {
        for log in std::fs::read_dir(deployment.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(log.path()).unwrap_or_default();
            let start = text.len().saturating_sub(2000);
            out.push_str(&format!(
                "--- {}\n{}\n",
                log.path().display(),
                &text[start..]
            ));
        }
    }
    out
}

/// `GET http://127.0.0.1:<gateway><path>` for `host`, retried until it answers 200 (30 s).
async fn get_ok(app: &TestApp, host: &str, path: &str) -> String {
    let gateway = app.gateway.expect("the gateway listens");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = app
            .client
            .get(format!("http://{gateway}{path}"))
            .header("host", format!("{host}:{}", gateway.port()))
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        if let Ok(r) = answer {
            let status = r.status();
            let body = r.text().await.unwrap_or_default();
            if status == StatusCode::OK {
                return body;
            }
            assert!(
                Instant::now() < deadline,
                "{host}{path} answered {status}: {body}\n{}",
                service_logs(app)
            );
        }
        assert!(Instant::now() < deadline, "{host}{path} never answered");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_python_api_template_runs_as_a_labelled_limited_container_and_leaves_nothing_behind() {
    if !containers_here() {
        return;
    }
    for backend in backends() {
        let mut app = spawn(backend).await;
        let files = template_files("python-api", "boxed-api");
        let id = register_and_build(&app, "boxed-api", &files).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        assert!(
            get_ok(&app, "boxed-api.localhost", "/health")
                .await
                .contains("ok")
        );
        let url = running["services"][0]["url"].as_str().unwrap().to_owned();
        assert!(urllib_get(&format!("{url}/health")).await.contains("ok"));

        // One container, labelled with its app, deployment and service, limited as the
        // template's devfile says (memoryLimit: 512Mi).
        let containers = labelled(&app, false, &app_label(&id));
        assert_eq!(containers.len(), 1, "{containers:?}");
        let inspect: Value =
            serde_json::from_str(&podman(&app, &["inspect", &containers[0]])).unwrap();
        let labels = &inspect[0]["Config"]["Labels"];
        assert_eq!(labels["slipway.service"], "api", "{labels}");
        assert_eq!(labels["slipway.deployment"], running["deployment_id"]);
        assert_eq!(inspect[0]["HostConfig"]["Memory"], 512u64 << 20);
        assert_eq!(inspect[0]["HostConfig"]["PidsLimit"], 4096);
        assert_eq!(labelled(&app, true, &app_label(&id)).len(), 1);

        // Disable stops and removes it; enable brings a new one.
        let (status, body) = post(&app, &id, "disable").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_nothing_left(&app, &id, "after disable");
        let (status, body) = post(&app, &id, "enable").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{running}");
        get_ok(&app, "boxed-api.localhost", "/health").await;

        // A restart stops everything, and the next start brings it back.
        app.stop().await;
        assert_nothing_left(&app, &id, "after a stop");
        // What a killed platform leaves: a container carrying this platform's labels. The
        // next start removes it before bringing the app back.
        let platform = std::fs::read_to_string(app.data_dir().join("engine/platform-id"))
            .expect("the platform id");
        let stray = podman(
            &app,
            &[
                "run",
                "-d",
                "--label",
                &format!("slipway.platform={}", platform.trim()),
                "--label",
                &app_label(&id),
                BASE,
                "sleep",
                "600",
            ],
        );
        assert_eq!(labelled(&app, false, &app_label(&id)).len(), 1, "{stray}");
        app.start_again().await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{running}");
        let containers = labelled(&app, false, &app_label(&id));
        assert_eq!(containers.len(), 1, "the stray one is gone: {containers:?}");
        assert!(!containers[0].starts_with(stray.trim()), "{containers:?}");
        get_ok(&app, "boxed-api.localhost", "/health").await;

        // Delete leaves nothing.
        let (status, body) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        assert_nothing_left(&app, &id, "after delete");
        app.finish().await;
    }
}

#[tokio::test]
async fn the_multi_container_template_finds_its_services_by_name_in_depends_on_order() {
    if !containers_here() {
        return;
    }
    for backend in backends() {
        let app = spawn(backend).await;
        let files = template_files("multi-container", "boxed-trio");
        let id = register_and_build(&app, "boxed-trio", &files).await;
        let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
        assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");

        // web reaches api by its name on the app's network (API_URL = http://api:8001).
        let answer = get_ok(&app, "boxed-trio.localhost", "/api/health").await;
        assert!(
            answer.contains("\"api\"") || answer.contains("ok"),
            "{answer}"
        );
        let stats = get_ok(&app, "boxed-trio.localhost", "/api/stats").await;
        assert!(stats.starts_with('{'), "{stats}");
        // Only web is public: it alone has a URL, which Python's urllib reaches.
        for service in running["services"].as_array().unwrap() {
            match service["name"].as_str().unwrap() {
                "web" => {
                    let url = service["url"].as_str().unwrap();
                    assert!(urllib_get(&format!("{url}/health")).await.contains("web"));
                }
                _ => assert_eq!(service["url"], Value::Null, "{running}"),
            }
        }

        // api started (and was healthy) before the two that depend on it.
        let services = running["services"].as_array().unwrap();
        let at = |name: &str, key: &str| -> String {
            services.iter().find(|s| s["name"] == name).unwrap()[key]
                .as_str()
                .unwrap()
                .to_owned()
        };
        for dependent in ["web", "worker"] {
            assert!(
                at("api", "healthy_at") <= at(dependent, "started_at"),
                "{running}"
            );
        }
        assert_eq!(labelled(&app, false, &app_label(&id)).len(), 3);
        assert_eq!(
            labelled(&app, true, &app_label(&id)).len(),
            1,
            "one network per app"
        );

        let (status, _) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_nothing_left(&app, &id, "after delete");
        app.finish().await;
    }
}

/// A one-service app built `FROM python:3.12-slim` with the standard library only:
/// `server.py` is `script`, run with `PORT` set; the devfile gives it `env` and
/// `memory_limit`.
fn stdlib_app(
    name: &str,
    script: &str,
    env: &[(&str, &str)],
    memory: &str,
) -> Vec<(String, Vec<u8>)> {
    let env: String = env
        .iter()
        .map(|(k, v)| format!("        - name: {k}\n          value: {v:?}\n"))
        .collect();
    let env = if env.is_empty() {
        String::new()
    } else {
        format!("      env:\n{env}")
    };
    let devfile = format!(
        "schemaVersion: 2.2.0\nmetadata:\n  name: {name}\n  displayName: {name}\ncomponents:\n  - name: svc-image\n    image:\n      imageName: svc\n      dockerfile:\n        uri: Dockerfile\n        buildContext: .\n  - name: svc\n    attributes:\n      healthPath: /health\n    container:\n      image: svc\n      memoryLimit: {memory}\n{env}      endpoints:\n        - name: http\n          targetPort: 8000\n          exposure: public\n          protocol: http\n"
    );
    let dockerfile = "FROM python:3.12-slim\nWORKDIR /app\nCOPY server.py .\nEXPOSE 8000\nCMD [\"python3\", \"server.py\"]\n";
    vec![
        ("devfile.yaml".into(), devfile.into_bytes()),
        ("Dockerfile".into(), dockerfile.as_bytes().to_vec()),
        ("server.py".into(), script.as_bytes().to_vec()),
    ]
}

/// An HTTP server on `$PORT` whose `/health` answers `ok` and whose `/probe` answers what
/// `probe()` returns as JSON; `prelude` runs first.
fn server(prelude: &str, probe: &str) -> String {
    format!(
        "import json, os, http.server\n{prelude}\ndef probe():\n{probe}\nclass H(http.server.BaseHTTPRequestHandler):\n    def do_GET(self):\n        body = (json.dumps(probe()) if self.path == '/probe' else 'ok').encode()\n        self.send_response(200)\n        self.end_headers()\n        self.wfile.write(body)\nhttp.server.ThreadingHTTPServer(('0.0.0.0', int(os.environ['PORT'])), H).serve_forever()\n"
    )
}

#[tokio::test]
async fn a_container_app_cannot_read_the_platform_files_or_another_apps_environment() {
    if !containers_here() {
        return;
    }
    for backend in backends() {
        let app = spawn(backend).await;
        let marker = format!("holder-{}", uuid::Uuid::new_v4().simple());
        let holder = stdlib_app(
            "holder",
            &server("", "    return {}"),
            &[("HOLDER_TOKEN", &marker)],
            "128Mi",
        );
        let holder_id = register_and_build(&app, "holder", &holder).await;
        let data_dir = app.data_dir().canonicalize().unwrap();
        let snoop = stdlib_app(
            "snoop",
            &server(
                "",
                "    needle = b'holder-' + os.environ['NEEDLE'].encode()\n    found = []\n    for pid in os.listdir('/proc'):\n        for part in ('environ', 'cmdline'):\n            try:\n                if needle in open(f'/proc/{pid}/{part}', 'rb').read():\n                    found.append(pid)\n            except OSError:\n                pass\n    def readable(path):\n        try:\n            open(path, 'rb').read(1)\n            return True\n        except OSError:\n            return False\n    def listable(path):\n        try:\n            os.listdir(path)\n            return True\n        except OSError:\n            return False\n    return {'environ_hits': found, 'data_dir': listable(os.environ['DATA_DIR']), 'vault_key': readable(os.environ['DATA_DIR'] + '/vault.key'), 'procs': len([p for p in os.listdir('/proc') if p.isdigit()])}",
            ),
            &[
                ("DATA_DIR", &data_dir.display().to_string()),
                ("NEEDLE", &marker["holder-".len()..]),
            ],
            "128Mi",
        );
        let snoop_id = register_and_build(&app, "snoop", &snoop).await;
        for id in [&holder_id, &snoop_id] {
            let running = wait_status(&app, id, &["RUNNING", "FAILED"]).await;
            assert_eq!(running["status"], "RUNNING", "{backend:?}: {running}");
        }
        // The platform's own files are there on the host, and the holder runs with its
        // token in its environment.
        assert!(data_dir.join("vault.key").is_file());
        let report: Value =
            serde_json::from_str(&get_ok(&app, "snoop.localhost", "/probe").await).unwrap();
        assert_eq!(report["data_dir"], false, "{report}");
        assert_eq!(report["vault_key"], false, "{report}");
        assert_eq!(report["environ_hits"], serde_json::json!([]), "{report}");
        // Its own process table only: no process of the host or of the other app.
        assert!(report["procs"].as_u64().unwrap() < 5, "{report}");
        app.finish().await;
    }
}

#[tokio::test]
async fn a_container_killed_at_its_memory_limit_fails_its_deployment_saying_so() {
    if !containers_here() {
        return;
    }
    for backend in backends() {
        let app = spawn(backend).await;
        // Takes 256 MiB once it has started answering, under a 64Mi limit.
        let hog = stdlib_app(
            "hog",
            &server(
                "import threading, time\ndef grow():\n    time.sleep(1)\n    hoard = []\n    for _ in range(256):\n        hoard.append(bytearray(1 << 20))\nthreading.Thread(target=grow).start()",
                "    return {}",
            ),
            &[],
            "64Mi",
        );
        let id = register_and_build(&app, "hog", &hog).await;
        let deadline = Instant::now() + Duration::from_secs(120);
        let reason = loop {
            let status = status_of(&app, &id).await;
            let reason = status["reason"].as_str().unwrap_or_default().to_owned();
            if reason.contains("memory") {
                break reason;
            }
            assert!(
                Instant::now() < deadline,
                "no out-of-memory reason: {status}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        assert!(reason.contains("memory limit of 64Mi"), "{reason}");
        app.finish().await;
    }
}

#[tokio::test]
async fn an_image_archive_is_imported_under_the_name_a_from_line_uses() {
    if !containers_here() {
        return;
    }
    // An OCI archive and a docker archive of the base image, as `podman save` writes them.
    let dir = tempfile::tempdir().unwrap();
    for (format, tag) in [
        ("oci-archive", "slipway-test/imported-oci:1"),
        ("docker-archive", "slipway-test/imported-docker:1"),
    ] {
        let archive = dir.path().join(format!("{format}.tar"));
        let saved = Command::new("podman")
            .args(["save", "--format", format, "-o"])
            .arg(&archive)
            .arg(BASE)
            .output()
            .unwrap();
        assert!(
            saved.status.success(),
            "{}",
            String::from_utf8_lossy(&saved.stderr)
        );
        let imported = slipway_platform::base_image::import(&archive, tag, &Default::default())
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        let qualified = format!("docker.io/{tag}");
        assert_eq!(imported.image, qualified);
        let inspect = Command::new("buildah")
            .args(["inspect", "--type", "image", &qualified])
            .output()
            .unwrap();
        assert!(
            inspect.status.success(),
            "{format}: not in buildah's storage"
        );
        let _ = Command::new("buildah").args(["rmi", &qualified]).output();
    }
}

/// What a TLS-inspecting proxy looks like to a build: a CA made for the test (`ca.pem`) and
/// an HTTPS server on 127.0.0.1 with a certificate it signed, serving `pkg.txt`. Made with
/// the `openssl` command and served by Python's `http.server` (both on every machine that
/// runs these tests); the server is killed on drop.
struct PrivateHttps {
    dir: tempfile::TempDir,
    port: u16,
    server: std::process::Child,
}

impl PrivateHttps {
    const PACKAGE: &'static str = "package-from-behind-the-proxy";

    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("openssl runs");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ];
        openssl(
            &[
                &["req", "-x509"][..],
                &ec,
                &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2"],
                &["-subj", "/CN=Slipway test inspecting proxy CA"],
            ]
            .concat(),
        );
        openssl(
            &[
                &["req"][..],
                &ec,
                &[
                    "-keyout",
                    "srv.key",
                    "-out",
                    "srv.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ]
            .concat(),
        );
        std::fs::write(dir.path().join("san.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "srv.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "srv.pem",
            "-days",
            "2",
            "-extfile",
            "san.cnf",
        ]);
        std::fs::write(dir.path().join("pkg.txt"), Self::PACKAGE).unwrap();
        let script = "import http.server, os, ssl, sys\nos.chdir(sys.argv[1])\nctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\nctx.load_cert_chain('srv.pem', 'srv.key')\ns = http.server.ThreadingHTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\ns.socket = ctx.wrap_socket(s.socket, server_side=True)\nprint(s.server_address[1], flush=True)\ns.serve_forever()\n";
        let mut server = Command::new("python3")
            .args(["-c", script])
            .arg(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(server.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let port = line.trim().parse().expect("the server says its port");
        Self { dir, port, server }
    }

    fn ca(&self) -> std::path::PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The base64 body of the CA certificate: what would be in a layer if the bundle were.
    fn ca_body(&self) -> String {
        let pem = std::fs::read_to_string(self.ca()).unwrap();
        pem.lines().filter(|l| !l.starts_with("-----")).collect()
    }
}

impl Drop for PrivateHttps {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// Uploads `files`, waits for the one build and returns it with its log.
async fn build_once(app: &TestApp, name: &str, files: &[(String, Vec<u8>)]) -> Value {
    let created = app.register(&app.owner, name).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, body) = app
        .upload(&app.owner, &id, "", "application/zstd", tar_zst(files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let build = body["build_ids"][0].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let (_, b) = app.get_build(&app.owner, &build, true).await;
        if ["succeeded", "failed", "cancelled"]
            .iter()
            .any(|s| b["status"] == *s)
        {
            return b;
        }
        assert!(Instant::now() < deadline, "build never ended: {b}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every file of every layer of the image `image_uri` names, as (path, content).
fn image_files(app: &TestApp, image_uri: &str) -> Vec<(String, Vec<u8>)> {
    use slipway_image::{Digest, ImageStore, oci::Manifest};
    let store = ImageStore::open(&app.data_dir()).unwrap();
    let digest = Digest::parse(image_uri.rsplit_once('@').unwrap().1).unwrap();
    let manifest = Manifest::parse(&store.read_blob(&digest).unwrap()).unwrap();
    let mut files = Vec::new();
    for layer in &manifest.layers {
        let blob = store
            .read_blob(&Digest::parse(&layer.digest).unwrap())
            .unwrap();
        let reader: Box<dyn std::io::Read> = if layer.media_type.ends_with("gzip") {
            Box::new(flate2::read::GzDecoder::new(&blob[..]))
        } else {
            Box::new(&blob[..])
        };
        let mut archive = tar::Archive::new(reader);
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().display().to_string();
            let mut content = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut content).unwrap();
            files.push((path, content));
        }
    }
    files
}

/// A base image without a CA bundle of its own or a pip configuration, as UBI, Fedora or
/// busybox images are at `/etc/ssl/certs/ca-certificates.crt`: python:3.12-slim with its
/// bundle removed, made here once (no registry needed).
fn base_without_ca_bundle() -> &'static str {
    const NAME: &str = "localhost/slipway-test/no-ca-bundle:1";
    let present = Command::new("buildah")
        .args(["inspect", "--type", "image", NAME])
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Dockerfile"),
            "FROM python:3.12-slim\nRUN rm -f /etc/ssl/certs/ca-certificates.crt && test ! -e /etc/xdg/pip/pip.conf\n",
        )
        .unwrap();
        let out = Command::new("buildah")
            .args(["build", "--isolation", "chroot", "-t", NAME])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    NAME
}

#[tokio::test]
async fn a_build_behind_an_inspecting_proxy_names_the_flag_and_trusts_the_bundle_it_is_given() {
    if !containers_here() {
        return;
    }
    let proxy = PrivateHttps::start();
    let mut files = stdlib_app("fetcher", &server("", "    return {}"), &[], "128Mi");
    // The base has no bundle of its own: buildah creates the mount targets, which must not
    // stay in the image (empty, they would leave the app trusting nothing).
    files[1].1 = format!(
        "FROM {}\nRUN python3 -c \"import urllib.request; open('/fetched.txt', 'wb').write(urllib.request.urlopen('https://127.0.0.1:{}/pkg.txt').read())\"\nWORKDIR /app\nCOPY server.py .\nCMD [\"python3\", \"server.py\"]\n",
        base_without_ca_bundle(),
        proxy.port
    )
    .into_bytes();
    // One build per backend: without a bundle on the first, with the CA on the second.
    let mut backends = backends().into_iter().cycle();
    let (first, second) = (backends.next().unwrap(), backends.next().unwrap());

    // `none`: the build's own roots do not know the CA; the error says so and names the flag.
    let app = spawn_app_configured(first, |c| {
        c.runtime = RuntimeKind::Container;
        c.builder = BuilderKind::Buildah;
        c.build_ca_bundle = slipway_platform::BuildCaBundle::None;
    })
    .await;
    let failed = build_once(&app, "fetcher", &files).await;
    assert_eq!(failed["status"], "failed", "{}", failed["log"]);
    let error = failed["error"].as_str().unwrap();
    for says in [
        "failed verifying a TLS certificate (",
        "CERTIFICATE_VERIFY_FAILED",
        "pass --build-ca-bundle FILE",
        "it was: none",
        "see the build log",
    ] {
        assert!(error.contains(says), "{says:?} missing from: {error}");
    }
    app.finish().await;

    // The CA as the bundle: the fetch succeeds, and the image holds what it fetched but not
    // the bundle (mounted for the build only).
    let app = spawn_app_configured(second, |c| {
        c.runtime = RuntimeKind::Container;
        c.builder = BuilderKind::Buildah;
        c.build_ca_bundle = slipway_platform::BuildCaBundle::File(proxy.ca());
    })
    .await;
    let built = build_once(&app, "fetcher", &files).await;
    assert_eq!(built["status"], "succeeded", "{}", built["log"]);
    let image = image_files(&app, built["image_uri"].as_str().unwrap());
    let fetched = image
        .iter()
        .find(|(path, _)| path.trim_start_matches("./") == "fetched.txt")
        .expect("the fetched file is in the image");
    assert_eq!(fetched.1, PrivateHttps::PACKAGE.as_bytes());
    let body = proxy.ca_body();
    let first_line = &body[..64];
    for (path, content) in &image {
        assert!(
            !String::from_utf8_lossy(content).contains(first_line),
            "the CA is in the image at {path}"
        );
        // No placeholder where the bundle and pip.conf were mounted (the base's own bundle,
        // in its bottom layer, is not empty).
        let path = path.trim_start_matches("./");
        assert!(
            !(content.is_empty()
                && ["etc/ssl/certs/ca-certificates.crt", "etc/xdg/pip/pip.conf"].contains(&path)),
            "an empty mount target stayed in the image at {path}"
        );
        assert_ne!(path, "etc/xdg/pip/pip.conf", "pip.conf stayed in the image");
    }
    assert!(
        built["log"]
            .as_str()
            .unwrap()
            .contains("removed the 2 empty file(s) buildah left in the image"),
        "{}",
        built["log"]
    );
    app.finish().await;
}

#[tokio::test]
async fn a_dockerfile_that_updates_ca_certificates_builds_with_the_default_bundle() {
    if !containers_here() {
        return;
    }
    // Installing ca-certificates runs update-ca-certificates, which replaces the bundle the
    // build mounts over the image's: with the host's bundle (the default) the build runs again
    // without it.
    let backend = backends()[0];
    let app = spawn_app_configured(backend, |c| {
        c.runtime = RuntimeKind::Container;
        c.builder = BuilderKind::Buildah;
    })
    .await;
    let mut files = stdlib_app("recerts", &server("", "    return {}"), &[], "128Mi");
    files[1].1 = b"FROM python:3.12-slim\nRUN update-ca-certificates\nWORKDIR /app\nCOPY server.py .\nCMD [\"python3\", \"server.py\"]\n".to_vec();
    let built = build_once(&app, "recerts", &files).await;
    assert_eq!(built["status"], "succeeded", "{}", built["log"]);
    let mounted = slipway_platform::BuildCaBundle::System
        .resolve()
        .unwrap()
        .bundle
        .is_some();
    assert_eq!(
        built["log"]
            .as_str()
            .unwrap()
            .contains("where the host's CA bundle was mounted; building again without it"),
        mounted,
        "{}",
        built["log"]
    );
    app.finish().await;
}

/// A devfile volume on the container runtime: a named volume of the app's own, mounted at
/// its path, whose files outlive a redeploy and go with the app.
#[tokio::test]
async fn a_volume_keeps_its_files_across_deploys_and_goes_with_the_app() {
    if !containers_here() {
        return;
    }
    // One backend: the volume's life does not depend on the platform's database.
    let backend = backends().remove(0);
    let app = spawn(backend).await;
    let counter = server(
        "",
        "    path = '/data/count'\n    n = int(open(path).read()) + 1 if os.path.exists(path) else 1\n    open(path, 'w').write(str(n))\n    return n",
    );
    let mut files = stdlib_app("keeper", &counter, &[], "128Mi");
    let devfile = String::from_utf8(files[0].1.clone()).unwrap();
    let devfile = devfile
        .replace(
            "components:\n",
            "components:\n  - name: files\n    volume:\n      size: 64Mi\n",
        )
        .replace(
            "      memoryLimit: 128Mi\n",
            "      memoryLimit: 128Mi\n      volumeMounts:\n        - name: files\n          path: /data\n",
        );
    files[0].1 = devfile.into_bytes();
    let id = register_and_build(&app, "keeper", &files).await;
    let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
    assert_eq!(
        running["status"],
        "RUNNING",
        "{running}\n{}",
        service_logs(&app)
    );
    assert_eq!(get_ok(&app, "keeper.localhost", "/probe").await, "1");
    assert_eq!(get_ok(&app, "keeper.localhost", "/probe").await, "2");
    let volumes = podman(
        &app,
        &[
            "volume",
            "ls",
            "-q",
            "--filter",
            &format!("label={}", app_label(&id)),
        ],
    );
    assert_eq!(
        volumes.trim(),
        format!("slipway-{id}-files"),
        "one named volume of the app's own"
    );

    // A new build and deployment: the same files.
    files.push(("note.txt".into(), b"round two".to_vec()));
    let (status, body) = app
        .upload(&app.owner, &id, "", "application/zstd", tar_zst(&files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let first = running["deployment_id"].clone();
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let now = status_of(&app, &id).await;
        if now["status"] == "RUNNING" && now["deployment_id"] != first {
            break;
        }
        assert!(Instant::now() < deadline, "no new deployment: {now}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(get_ok(&app, "keeper.localhost", "/probe").await, "3");
    let on_disk = app
        .data_dir()
        .join("volumes")
        .join(&id)
        .join("files")
        .join("count");
    assert_eq!(std::fs::read_to_string(&on_disk).unwrap(), "3");

    let (status, _) = app.delete_app(&app.owner, &id).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let volumes = podman(
        &app,
        &[
            "volume",
            "ls",
            "-q",
            "--filter",
            &format!("label={}", app_label(&id)),
        ],
    );
    assert_eq!(volumes.trim(), "", "the volume goes with the app");
    assert!(!on_disk.exists());
    app.finish().await;
}

/// Backing resources on the container runtime: the app's container reaches its in-memory
/// database, its PostgreSQL database, its bucket's S3 server and its table's gate at its network's gateway (relays to servers that
/// listen on the host's loopback only), keeps what it wrote there across a redeploy, and
/// nothing of them is left listening once the app is deleted.
#[tokio::test]
async fn a_container_app_reaches_its_databases_through_its_network_gateway() {
    if !containers_here() {
        return;
    }
    let backend = backends().remove(0);
    let app = spawn(backend).await;
    // INCR on the in-memory database; for PostgreSQL, its answer to an SSLRequest ('N' or
    // 'S'): proof that a server, not a closed port, is there.
    let probe = server(
        "import socket, struct, urllib.error, urllib.parse, urllib.request\ndef resp(s, *a):\n    s.sendall(('*%d\\r\\n' % len(a) + ''.join('$%d\\r\\n%s\\r\\n' % (len(x), x) for x in a)).encode())\n    return s.recv(256).decode().strip()\n",
        "    u = urllib.parse.urlparse(os.environ['STATE_INMEMORY_URL'])\n    with socket.create_connection((u.hostname, u.port), timeout=5) as s:\n        resp(s, 'AUTH', u.password)\n        n = int(resp(s, 'INCR', 'visits')[1:])\n    with socket.create_connection((os.environ['PGHOST'], int(os.environ['PGPORT'])), timeout=5) as s:\n        s.sendall(struct.pack('!ii', 8, 80877103))\n        pg = s.recv(1).decode()\n    try:\n        s3 = urllib.request.urlopen(os.environ['AWS_ENDPOINT_URL_S3'], timeout=5).status\n    except urllib.error.HTTPError as e:\n        s3 = e.code\n    req = urllib.request.Request(os.environ['AWS_ENDPOINT_URL_DYNAMODB'], data=b'{}', headers={'x-amz-target': 'DynamoDB_20120810.ListTables', 'content-type': 'application/x-amz-json-1.0'})\n    try:\n        dynamo = urllib.request.urlopen(req, timeout=5).status\n    except urllib.error.HTTPError as e:\n        dynamo = e.code\n    return {'visits': n, 'pg': pg, 's3': s3, 'dynamo': dynamo, 'dynamo_host': urllib.parse.urlparse(os.environ['AWS_ENDPOINT_URL_DYNAMODB']).hostname, 'host': u.hostname, 'pghost': os.environ['PGHOST']}",
    );
    let mut files = stdlib_app("reacher", &probe, &[], "128Mi");
    let devfile = String::from_utf8(files[0].1.clone()).unwrap().replace(
        "  displayName: reacher\n",
        "  displayName: reacher\n  platform:\n    managedInfra:\n      relationalDatabase:\n        - name: main\n          engine: postgres\n      inMemoryDatabase:\n        - name: state\n          engine: redis\n      objectStorage:\n        - name: files\n      keyValueTable:\n        - name: notes\n",
    );
    files[0].1 = devfile.into_bytes();
    let id = register_and_build(&app, "reacher", &files).await;
    let running = wait_status(&app, &id, &["RUNNING", "FAILED"]).await;
    assert_eq!(
        running["status"],
        "RUNNING",
        "{running}\n{}",
        service_logs(&app)
    );
    let first: Value =
        serde_json::from_str(&get_ok(&app, "reacher.localhost", "/probe").await).expect("json");
    assert_eq!(first["visits"], 1, "{first}");
    assert!(first["pg"] == "N" || first["pg"] == "S", "{first}");
    // The S3 server answers through the relay, and refuses a request without a key.
    assert_eq!(first["s3"], 403, "{first}");
    // So does the table's gate: an unsigned request is refused as DynamoDB refuses it.
    assert_eq!(first["dynamo"], 403, "{first}");
    let gateway = first["host"].as_str().unwrap().to_owned();
    assert_ne!(gateway, "127.0.0.1", "a container's loopback is its own");
    assert_eq!(first["pghost"], gateway.as_str());
    assert_eq!(first["dynamo_host"], gateway.as_str());
    let network = podman(
        &app,
        &[
            "network",
            "inspect",
            "--format",
            "{{range .Subnets}}{{.Gateway}}{{end}}",
            &format!("slipway-{id}"),
        ],
    );
    assert_eq!(network.trim(), gateway, "the app's own network's gateway");

    // A redeploy: the same database, the count goes on.
    files.push(("note.txt".into(), b"round two".to_vec()));
    let (status, body) = app
        .upload(&app.owner, &id, "", "application/zstd", tar_zst(&files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let now = status_of(&app, &id).await;
        if now["status"] == "RUNNING" && now["deployment_id"] != running["deployment_id"] {
            break;
        }
        assert!(Instant::now() < deadline, "no new deployment: {now}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let second: Value =
        serde_json::from_str(&get_ok(&app, "reacher.localhost", "/probe").await).expect("json");
    assert_eq!(second["visits"], 2, "{second}");

    let (status, _) = app.delete_app(&app.owner, &id).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let listening = Command::new("ss").args(["-Htln"]).output().expect("ss");
    let listening = String::from_utf8_lossy(&listening.stdout);
    assert!(
        !listening.contains(&format!("{gateway}:")),
        "a relay of the deleted app still listens: {listening}"
    );
    app.finish().await;
}
