//! Custom domains end to end, with no CA outside the machine: Debian's `pebble` (the ACME
//! test CA Let's Encrypt maintains) issues the certificates, `pebble-challtestsrv` answers
//! DNS for every name with loopback (the platform asks it with `--dns-resolver`, pebble with
//! `-dnsserver`). Checked with real clients: curl over HTTPS verifying against pebble's root
//! (HTTP/2 negotiated), plain HTTP redirects, a WebSocket-style upgrade over raw TCP, and
//! `openssl s_client` for the certificate actually served.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::deploy::{Service, devfile, wait_status};
use crate::support::{TestApp, assert_error, backends, spawn_app_configured, tar_zst};

/// The app: its health path, its request headers as JSON, and an upgrade that echoes bytes.
const SERVER: &str = r#"import http.server, os, json
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if self.headers.get("upgrade", "").lower() == "websocket":
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.end_headers()
            self.wfile.flush()
            while True:
                data = self.rfile.read1(4096)
                if not data:
                    break
                self.wfile.write(b"echo:" + data)
                self.wfile.flush()
            self.close_connection = True
            return
        if self.path == "/health":
            body = b"ok"
        else:
            h = self.headers
            body = json.dumps({"host": h.get("host"), "xff": h.get("x-forwarded-for"),
                "proto": h.get("x-forwarded-proto"), "xfh": h.get("x-forwarded-host"),
                "path": self.path}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

/// Whether the ACME test servers are here: required under CI, skipped loudly otherwise.
fn pebble_here() -> bool {
    let here = ["pebble", "pebble-challtestsrv", "curl", "openssl"]
        .iter()
        .all(|tool| which(tool));
    if !here {
        assert!(
            std::env::var_os("CI").is_none(),
            "pebble is required under CI (apt install pebble curl openssl)"
        );
        eprintln!("\n!!!!!!!! SKIPPING the custom-domain tests: apt install pebble\n");
    }
    here
}

fn which(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A CA called `ca_name` and a certificate it signed for `names`, written to `dir` as
/// `<stem>-ca.pem`, `<stem>.pem` and `<stem>.key`.
fn write_pair(dir: &Path, ca_name: &str, names: &[&str], stem: &str) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, ca_name);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let cert = rcgen::CertificateParams::new(names)
        .unwrap()
        .signed_by(&key, &rcgen::Issuer::new(ca_params, ca_key))
        .unwrap();
    std::fs::write(dir.join(format!("{stem}-ca.pem")), ca.pem()).unwrap();
    std::fs::write(dir.join(format!("{stem}.pem")), cert.pem()).unwrap();
    std::fs::write(dir.join(format!("{stem}.key")), key.serialize_pem()).unwrap();
}

/// pebble and its DNS server, stopped when dropped.
struct Ca {
    dir: tempfile::TempDir,
    directory: String,
    management: String,
    dns: SocketAddr,
    challtest_management: String,
    children: Vec<tokio::process::Child>,
}

impl Ca {
    /// Starts the DNS server and pebble, validating HTTP-01 on `http_port`, issuing
    /// certificates valid `validity` seconds, refusing names under `blocked.example.org`.
    async fn start(http_port: u16, validity: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        // A CA of the test's own for pebble's HTTPS API (Debian's pebble ships none).
        write_pair(
            dir.path(),
            "pebble API test CA",
            &["localhost", "127.0.0.1"],
            "api",
        );

        let (listen, management, dns, challtest) =
            (free_port(), free_port(), free_port(), free_port());
        let config = json!({"pebble": {
            "listenAddress": format!("127.0.0.1:{listen}"),
            "managementListenAddress": format!("127.0.0.1:{management}"),
            "certificate": dir.path().join("api.pem"),
            "privateKey": dir.path().join("api.key"),
            "httpPort": http_port,
            "tlsPort": free_port(),
            "ocspResponderURL": "",
            "externalAccountBindingRequired": false,
            "domainBlocklist": ["blocked.example.org"],
            "certificateValidityPeriod": validity,
        }});
        let config_path = dir.path().join("pebble.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let log = |name: &str| std::fs::File::create(dir.path().join(name)).unwrap();
        let challtestsrv = tokio::process::Command::new("pebble-challtestsrv")
            .args(["-defaultIPv4", "127.0.0.1", "-defaultIPv6", ""])
            .args(["-dns01", &format!("127.0.0.1:{dns}")])
            .args(["-http01", "", "-https01", "", "-tlsalpn01", ""])
            .args(["-management", &format!("127.0.0.1:{challtest}")])
            .stdout(log("challtestsrv.log"))
            .stderr(log("challtestsrv.err"))
            .kill_on_drop(true)
            .spawn()
            .expect("pebble-challtestsrv starts");
        let pebble = tokio::process::Command::new("pebble")
            .arg("-config")
            .arg(&config_path)
            .args(["-dnsserver", &format!("127.0.0.1:{dns}")])
            .env("PEBBLE_VA_NOSLEEP", "1")
            .env("PEBBLE_WFE_NONCEREJECT", "0")
            .stdout(log("pebble.log"))
            .stderr(log("pebble.err"))
            .kill_on_drop(true)
            .spawn()
            .expect("pebble starts");
        let ca = Self {
            directory: format!("https://127.0.0.1:{listen}/dir"),
            management: format!("https://127.0.0.1:{management}"),
            dns: SocketAddr::from(([127, 0, 0, 1], dns)),
            challtest_management: format!("http://127.0.0.1:{challtest}"),
            children: vec![challtestsrv, pebble],
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(listening(listen).await && listening(challtest).await) {
            assert!(
                Instant::now() < deadline,
                "pebble did not start: {}",
                ca.logs()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        ca
    }

    fn api_ca(&self) -> PathBuf {
        self.dir.path().join("api-ca.pem")
    }

    fn logs(&self) -> String {
        ["pebble.log", "pebble.err", "challtestsrv.err"]
            .iter()
            .map(|f| std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// pebble's issuing root, written to a file for curl.
    async fn root(&self) -> PathBuf {
        let out = curl(&[
            "--cacert",
            self.api_ca().to_str().unwrap(),
            &format!("{}/roots/0", self.management),
        ])
        .await;
        assert!(out.contains("BEGIN CERTIFICATE"), "{out}");
        let path = self.dir.path().join("root.pem");
        std::fs::write(&path, out).unwrap();
        path
    }

    /// Answers `name`'s A queries with `address` instead of loopback.
    async fn point(&self, name: &str, address: &str) {
        let r = reqwest::Client::new()
            .post(format!("{}/add-a", self.challtest_management))
            .json(&json!({"host": format!("{name}."), "addresses": [address]}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.status());
    }
}

impl Drop for Ca {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.start_kill();
        }
    }
}

async fn listening(port: u16) -> bool {
    tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_ok()
}

/// curl's standard output (its exit status is not checked: callers look at what came back).
async fn curl(args: &[&str]) -> String {
    let out = tokio::process::Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .output()
        .await
        .expect("curl runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The serial of the certificate served for `name` on `port`.
async fn served_serial(name: &str, port: u16) -> String {
    let script = format!(
        "openssl s_client -connect 127.0.0.1:{port} -servername {name} </dev/null 2>/dev/null \
         | openssl x509 -noout -serial"
    );
    let out = tokio::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .await
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .trim_start_matches("serial=")
        .to_ascii_lowercase()
}

async fn domain(app: &TestApp, id: &str, name: &str) -> Value {
    let (status, body) = app
        .send(
            Method::GET,
            &format!("/v1/apps/{id}/domains/{name}"),
            Some(&app.owner),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Polls a domain until `done` holds (two minutes at most: CI runs suites side by side).
async fn wait_domain(app: &TestApp, id: &str, name: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let body = domain(app, id, name).await;
        if done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "{name} never got there: {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Asserts that `value` is what the OpenAPI document's schema `name` says.
async fn conforms(app: &TestApp, name: &str, value: &Value) {
    let doc: Value = app
        .client
        .get(format!("{}/v1/openapi.json", app.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let schema = json!({
        "$ref": format!("#/components/schemas/{name}"),
        "components": doc["components"],
    });
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{value}");
}

async fn add(app: &TestApp, id: &str, body: Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/apps/{id}/domains"),
        Some(&app.owner),
        Some(body.to_string()),
    )
    .await
}

async fn deploy_app(app: &TestApp, name: &str) -> String {
    let devfile = devfile(
        name,
        "echo built > BUILT",
        &[Service {
            name: "web",
            port: 8002,
            run: "python3 server.py",
            depends_on: &[],
        }],
    );
    let created = app.register(&app.owner, name).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let files = vec![
        ("devfile.yaml".to_owned(), devfile.into_bytes()),
        ("server.py".to_owned(), SERVER.as_bytes().to_vec()),
        (
            "Dockerfile".to_owned(),
            b"FROM scratch\nCOPY . /app\n".to_vec(),
        ),
    ];
    let (status, body) = app
        .upload(&app.owner, &id, "", "application/zstd", tar_zst(&files))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    wait_status(app, &id, &["RUNNING"]).await;
    id
}

/// An HTTPS GET through the custom-domain gateway, verified against pebble's root: the
/// body, then curl's HTTP version on the last line.
async fn https_get(name: &str, port: u16, root: &Path, path: &str) -> String {
    curl(&[
        "--cacert",
        root.to_str().unwrap(),
        "--resolve",
        &format!("{name}:{port}:127.0.0.1"),
        "-w",
        "\n%{http_version} %{http_code} %{redirect_url}",
        &format!("https://{name}:{port}{path}"),
    ])
    .await
}

#[tokio::test]
async fn a_domain_gets_a_certificate_serves_https_redirects_http_renews_and_goes_when_removed() {
    if !pebble_here() {
        return;
    }
    for backend in backends() {
        let (http_port, https_port) = (free_port(), free_port());
        // Certificates live 30 s, so one renews (at two thirds) while the test watches.
        let ca = Ca::start(http_port, 30).await;
        let acme = slipway_platform::AcmeConfig {
            directory: ca.directory.clone(),
            email: Some("ops@example.org".into()),
            ca_file: Some(ca.api_ca()),
        };
        let dns = ca.dns;
        let mut app = spawn_app_configured(backend, move |config| {
            config.domains = slipway_platform::DomainSettings {
                http_listen: Some(SocketAddr::from(([127, 0, 0, 1], http_port))),
                https_listen: Some(SocketAddr::from(([127, 0, 0, 1], https_port))),
                acme,
                dns_resolver: Some(dns),
            };
        })
        .await;
        let id = deploy_app(&app, "shop").await;
        let root = ca.root().await;

        // Refused before anything is stored or asked of the CA, each naming the rule: what
        // the request's shape breaks is a 400, what it breaks against the platform's names
        // or the app's domains a 409.
        for (body, status, code, field, says) in [
            (
                json!({"name": "*.example.org"}),
                400,
                "invalid_argument",
                "name",
                "wildcard",
            ),
            (
                json!({"name": "Orders.Example.org"}),
                400,
                "invalid_argument",
                "name",
                "lowercase",
            ),
            (
                json!({"name": "orders.example.org."}),
                400,
                "invalid_argument",
                "name",
                "final dot",
            ),
            (
                json!({"name": "not a name"}),
                400,
                "invalid_argument",
                "name",
                "label",
            ),
            (
                json!({"name": "a.example.org", "service": "Web!"}),
                400,
                "invalid_argument",
                "service",
                "service name",
            ),
            (
                json!({"name": "web.shop.localhost"}),
                409,
                "failed_precondition",
                "name",
                "under localhost",
            ),
            (
                json!({"name": "a.example.org", "redirect_to": "b.example.org"}),
                409,
                "failed_precondition",
                "redirect_to",
                "another domain of this app",
            ),
        ] {
            let reply = add(&app, &id, body.clone()).await;
            assert_error(
                &reply,
                StatusCode::from_u16(status).unwrap(),
                code,
                Some(field),
            );
            assert!(
                reply.1["error"]["message"].as_str().unwrap().contains(says),
                "{body}: {}",
                reply.1
            );
        }

        let (status, added) = add(&app, &id, json!({"name": "orders.example.org"})).await;
        assert_eq!(status, StatusCode::CREATED, "{added}");
        assert_eq!(added["name"], "orders.example.org");
        assert_eq!(
            added["url"],
            format!("https://orders.example.org:{https_port}")
        );
        let taken = add(&app, &id, json!({"name": "orders.example.org"})).await;
        assert_error(&taken, StatusCode::CONFLICT, "already_exists", Some("name"));

        let issued = wait_domain(&app, &id, "orders.example.org", |d| d["state"] == "issued").await;
        let cert = &issued["certificate"];
        assert_eq!(cert["source"], "acme");
        assert!(
            cert["issuer"].as_str().unwrap().contains("Pebble"),
            "{issued}"
        );
        assert!(cert["renews_at"].is_string(), "{issued}");
        conforms(&app, "Domain", &issued).await;

        // HTTPS reaches the app over HTTP/2 with a certificate that verifies, and the app is
        // told who asked.
        let out = https_get("orders.example.org", https_port, &root, "/hello?x=1").await;
        let (body, last) = out.rsplit_once('\n').unwrap();
        assert!(last.starts_with("2 200"), "{out}");
        let seen: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(seen["proto"], "https");
        assert_eq!(seen["xff"], "127.0.0.1");
        assert_eq!(seen["xfh"], format!("orders.example.org:{https_port}"));
        assert_eq!(seen["path"], "/hello?x=1");

        // Plain HTTP redirects once the certificate exists.
        let out = curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{redirect_url}",
            "--resolve",
            &format!("orders.example.org:{http_port}:127.0.0.1"),
            &format!("http://orders.example.org:{http_port}/a/b?c=d"),
        ])
        .await;
        assert_eq!(
            out,
            format!("308 https://orders.example.org:{https_port}/a/b?c=d")
        );

        // A redirect domain gets its own certificate and sends people to the apex.
        let (status, www) = add(
            &app,
            &id,
            json!({"name": "www.orders.example.org", "redirect_to": "orders.example.org"}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{www}");
        wait_domain(&app, &id, "www.orders.example.org", |d| {
            d["state"] == "issued"
        })
        .await;
        let out = https_get("www.orders.example.org", https_port, &root, "/p?q=1").await;
        assert!(
            out.ends_with(&format!(
                "308 https://orders.example.org:{https_port}/p?q=1"
            )),
            "{out}"
        );
        let (status, body) = app
            .send(
                Method::DELETE,
                &format!("/v1/apps/{id}/domains/orders.example.org"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(
            status,
            StatusCode::CONFLICT,
            "the redirect depends on it: {body}"
        );

        // The CA's refusal is shown on the domain, in its words.
        let (status, _) = add(&app, &id, json!({"name": "api.blocked.example.org"})).await;
        assert_eq!(status, StatusCode::CREATED);
        let failed = wait_domain(&app, &id, "api.blocked.example.org", |d| {
            d["state"] == "failed"
        })
        .await;
        let reason = failed["reason"].as_str().unwrap();
        assert!(
            reason.contains("the CA refused") && reason.contains("blocked"),
            "{failed}"
        );
        assert!(failed["next_attempt_at"].is_string(), "{failed}");
        assert!(failed["certificate"].is_null());
        conforms(&app, "Domain", &failed).await;

        // A name that points elsewhere waits, saying so, and the CA is not asked.
        ca.point("elsewhere.example.org", "127.0.0.2").await;
        let (status, _) = add(&app, &id, json!({"name": "elsewhere.example.org"})).await;
        assert_eq!(status, StatusCode::CREATED);
        let pending = wait_domain(&app, &id, "elsewhere.example.org", |d| {
            d["reason"]
                .as_str()
                .is_some_and(|r| r.contains("DNS not pointing here"))
        })
        .await;
        assert_eq!(pending["state"], "pending", "{pending}");
        assert!(
            pending["reason"].as_str().unwrap().contains("127.0.0.2"),
            "{pending}"
        );

        // Renewal: a third of the lifetime before expiry the certificate is replaced, while
        // every request in the meantime is answered.
        let first = cert["serial"].as_str().unwrap().to_ascii_lowercase();
        assert_eq!(served_serial("orders.example.org", https_port).await, first);
        let deadline = Instant::now() + Duration::from_secs(120);
        let renewed = loop {
            let out = https_get("orders.example.org", https_port, &root, "/").await;
            assert!(
                out.ends_with("2 200 "),
                "a request during renewal failed: {out}"
            );
            let now = domain(&app, &id, "orders.example.org").await;
            let serial = now["certificate"]["serial"]
                .as_str()
                .unwrap()
                .to_ascii_lowercase();
            if serial != first && now["state"] == "issued" {
                break serial;
            }
            assert!(
                Instant::now() < deadline,
                "never renewed: {now}\n{}",
                ca.logs()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert_eq!(
            served_serial("orders.example.org", https_port).await,
            renewed
        );

        // The certificate and its key are kept: a restarted platform serves them at once.
        app.restart().await;
        assert_eq!(
            served_serial("orders.example.org", https_port).await,
            renewed
        );

        // Removing a domain stops serving it: no certificate, no route.
        for name in ["www.orders.example.org", "orders.example.org"] {
            let (status, body) = app
                .send(
                    Method::DELETE,
                    &format!("/v1/apps/{id}/domains/{name}"),
                    Some(&app.owner),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        }
        let out = https_get("orders.example.org", https_port, &root, "/").await;
        assert!(!out.contains("2 200"), "still served: {out}");
        let out = curl(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--resolve",
            &format!("orders.example.org:{http_port}:127.0.0.1"),
            &format!("http://orders.example.org:{http_port}/"),
        ])
        .await;
        assert_eq!(out, "404");
        let (status, listed) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/domains"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        conforms(&app, "DomainList", &listed).await;
        let names: Vec<&str> = listed["domains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["api.blocked.example.org", "elsewhere.example.org"]);

        // Deleting the app takes its domains with it.
        let (status, body) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        drop(ca);
        app.finish().await;
    }
}

#[tokio::test]
async fn websockets_pass_through_the_gateway_and_viewers_cannot_add_domains() {
    for backend in backends() {
        let app = spawn_app_configured(backend, |config| {
            config.domains.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
        })
        .await;
        let id = deploy_app(&app, "chat").await;

        // An upgrade through the host-routed gateway: 101, then bytes both ways.
        let gateway = app.gateway.expect("the gateway listens");
        let mut socket = tokio::net::TcpStream::connect(gateway).await.unwrap();
        socket
            .write_all(
                format!(
                    "GET /ws HTTP/1.1\r\nHost: chat.localhost:{}\r\nConnection: Upgrade\r\n\
                     Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
                     Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
                    gateway.port()
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(
                socket.read(&mut byte).await.unwrap(),
                1,
                "{}",
                String::from_utf8_lossy(&head)
            );
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 101"), "{head}");
        assert!(head.contains("upgrade: websocket"), "{head}");
        socket.write_all(b"ping").await.unwrap();
        let mut echoed = [0u8; 9];
        tokio::time::timeout(Duration::from_secs(5), socket.read_exact(&mut echoed))
            .await
            .expect("the echo comes back")
            .unwrap();
        assert_eq!(&echoed, b"echo:ping");

        // Viewers list domains but may not add them.
        let viewer = app.add_user("viewer@example.org", "Viewer").await;
        let (status, body) =
            crate::sharing::grant(&app, &app.owner, &id, "viewer@example.org", "viewer").await;
        assert!(status.is_success(), "{body}");
        let reply = app
            .send(
                Method::POST,
                &format!("/v1/apps/{id}/domains"),
                Some(viewer.token.expose()),
                Some(json!({"name": "chat.example.org"}).to_string()),
            )
            .await;
        assert_error(&reply, StatusCode::FORBIDDEN, "permission_denied", None);
        let (status, listed) = app
            .send(
                Method::GET,
                &format!("/v1/apps/{id}/domains"),
                Some(viewer.token.expose()),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{listed}");
        assert_eq!(listed["domains"], json!([]));
        app.finish().await;
    }
}

#[tokio::test]
async fn a_domain_the_operators_certificate_covers_is_served_with_it_and_no_ca_is_asked() {
    if !which("curl") {
        return;
    }
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        // The operator's certificate: a wildcard for the company's names, from its own CA.
        write_pair(dir.path(), "Corp CA", &["*.corp.example.org"], "tls");
        let files = slipway_server::tls::TlsFiles {
            cert: dir.path().join("tls.pem"),
            key: dir.path().join("tls.key"),
        };
        let https_port = free_port();
        let app = spawn_app_configured(backend, move |config| {
            config.tls = Some(files);
            config.domains.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
            config.domains.https_listen = Some(SocketAddr::from(([127, 0, 0, 1], https_port)));
            // Nothing listens there: asking this "CA" anything would fail the domain.
            config.domains.acme.directory = "https://127.0.0.1:9/dir".into();
        })
        .await;
        let id = deploy_app(&app, "intranet").await;
        let (status, added) = add(&app, &id, json!({"name": "wiki.corp.example.org"})).await;
        assert_eq!(status, StatusCode::CREATED, "{added}");
        let issued = wait_domain(&app, &id, "wiki.corp.example.org", |d| {
            d["state"] == "issued"
        })
        .await;
        assert_eq!(issued["certificate"]["source"], "operator", "{issued}");
        assert_eq!(issued["certificate"]["issuer"], "Corp CA", "{issued}");
        assert!(issued["certificate"]["renews_at"].is_null(), "{issued}");
        assert!(issued["reason"].is_null(), "{issued}");
        conforms(&app, "Domain", &issued).await;
        let out = https_get(
            "wiki.corp.example.org",
            https_port,
            &dir.path().join("tls-ca.pem"),
            "/",
        )
        .await;
        let (body, last) = out.rsplit_once('\n').unwrap();
        assert!(last.starts_with("2 200"), "{out}");
        assert!(body.contains("\"proto\": \"https\""), "{out}");
        app.finish().await;
    }
}
