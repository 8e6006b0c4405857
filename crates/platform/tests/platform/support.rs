//! Test harness: `spawn_app()` starts the real server on 127.0.0.1:0 over an isolated
//! database (a temporary SQLite directory, or a fresh PostgreSQL database) and returns a
//! `TestApp` with typed helpers per endpoint.

use std::path::PathBuf;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use slipway_platform::{Backend, BuilderKind, NewUser, PlatformConfig};
use slipway_server::testing::TestDatabase;

/// The backends every test runs on (PostgreSQL required under CI, skipped loudly otherwise).
pub fn backends() -> Vec<Backend> {
    slipway_server::testing::backends("platform")
}

/// A status and a JSON body (Null when the body is empty or not JSON).
pub type Reply = (StatusCode, Value);

/// A running server, its data directory and its database.
pub struct TestApp {
    pub base: String,
    pub config: PlatformConfig,
    pub client: reqwest::Client,
    /// The owner token from `bootstrap-token`.
    pub owner: String,
    /// Where the gateway listens (a new port after every start).
    pub gateway: Option<std::net::SocketAddr>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
    /// Dropped with the app, also when a test panics.
    pg_database: Option<TestDatabase>,
    dir: tempfile::TempDir,
}

/// Starts a server on a fresh database.
pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, BuilderKind::Native).await
}

/// Starts a server on a fresh database with the given builder.
pub async fn spawn_app_with(backend: Backend, builder: BuilderKind) -> TestApp {
    spawn_app_configured(backend, |config| config.builder = builder).await
}

/// Starts a server on a fresh database with the native builder and `configure`'s changes.
pub async fn spawn_app_configured(
    backend: Backend,
    configure: impl FnOnce(&mut PlatformConfig),
) -> TestApp {
    let dir = tempfile::tempdir().expect("tempdir");
    // The `postgres` user must reach the data directory, so a backing PostgreSQL cluster
    // lives (and goes) with it rather than under /var/lib/slipway.
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod the data directory");
    }
    let mut config = PlatformConfig::new("127.0.0.1:0".parse().unwrap(), dir.path());
    config.builder = BuilderKind::Native;
    configure(&mut config);
    let mut pg_database = None;
    if backend == Backend::Postgres {
        let database = TestDatabase::create("platform_test").await;
        config.database_url = Some(database.url().to_owned());
        pg_database = Some(database);
    }
    let mut app = TestApp {
        base: String::new(),
        config,
        client: reqwest::Client::new(),
        owner: String::new(),
        gateway: None,
        shutdown: None,
        server: None,
        pg_database,
        dir,
    };
    app.start().await;
    app
}

impl TestApp {
    /// Prepares (migrate + bootstrap) and serves, as `slipway platform serve` does.
    async fn start(&mut self) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        self.base = format!("http://{}", listener.local_addr().expect("addr"));
        let state = slipway_platform::prepare(&self.config)
            .await
            .expect("prepare the platform server");
        self.gateway = state.gateway_addr();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        self.server = Some(tokio::spawn(async move {
            slipway_platform::spawn(listener, state, async {
                let _ = rx.await;
            })
            .await
            .expect("serve");
        }));
        self.shutdown = Some(tx);
        self.owner = self.token_file().trim().to_owned();
    }

    /// Stops the server (and closes its pool).
    pub async fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.server.take() {
            h.await.expect("server task");
        }
    }

    /// Serves again after [`TestApp::stop`], on the same data directory and database.
    pub async fn start_again(&mut self) {
        self.start().await;
    }

    /// Stops the server and serves again on the same data directory and database.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.start().await;
    }

    /// Stops the server, then drops a PostgreSQL test database.
    pub async fn finish(mut self) {
        self.stop().await;
        drop(self.pg_database.take());
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub fn token_path(&self) -> PathBuf {
        self.dir.path().join(slipway_platform::BOOTSTRAP_TOKEN_FILE)
    }

    pub fn token_file(&self) -> String {
        std::fs::read_to_string(self.token_path()).expect("bootstrap-token")
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<String>,
    ) -> Reply {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b);
        }
        let r = req.send().await.expect("request");
        let status = r.status();
        let text = r.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// `POST /v1/apps` with any JSON body.
    pub async fn register_raw(&self, token: &str, body: &Value) -> Reply {
        self.send(
            Method::POST,
            "/v1/apps",
            Some(token),
            Some(body.to_string()),
        )
        .await
    }

    /// Registers `name` and returns the created app (asserting 201).
    pub async fn register(&self, token: &str, name: &str) -> Value {
        let (status, body) = self
            .register_raw(
                token,
                &json!({"name": name, "display_name": format!("App {name}")}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body
    }

    pub async fn get_app(&self, token: &str, id: &str) -> Reply {
        self.send(Method::GET, &format!("/v1/apps/{id}"), Some(token), None)
            .await
    }

    pub async fn delete_app(&self, token: &str, id: &str) -> Reply {
        self.send(Method::DELETE, &format!("/v1/apps/{id}"), Some(token), None)
            .await
    }

    /// `GET /v1/apps` with a raw query string (without `?`).
    pub async fn list_raw(&self, token: &str, query: &str) -> Reply {
        let path = if query.is_empty() {
            "/v1/apps".to_owned()
        } else {
            format!("/v1/apps?{query}")
        };
        self.send(Method::GET, &path, Some(token), None).await
    }

    /// One page: (app names, next token), asserting 200.
    pub async fn list_page(
        &self,
        token: &str,
        page_size: u32,
        next: Option<&str>,
    ) -> (Vec<String>, Option<String>) {
        let mut query = format!("page_size={page_size}");
        if let Some(t) = next {
            query.push_str(&format!("&next_page_token={t}"));
        }
        let (status, body) = self.list_raw(token, &query).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let names = body["apps"]
            .as_array()
            .expect("apps array")
            .iter()
            .map(|a| a["name"].as_str().expect("name").to_owned())
            .collect();
        (names, body["next_page_token"].as_str().map(str::to_owned))
    }

    /// Every app name the token can list, walking all pages.
    pub async fn list_all(&self, token: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = None;
        loop {
            let (names, token_next) = self.list_page(token, 100, next.as_deref()).await;
            out.extend(names);
            match token_next {
                Some(t) => next = Some(t),
                None => return out,
            }
        }
    }

    /// `slipway platform user add` against this server's data directory and database.
    pub async fn add_user(&self, email: &str, name: &str) -> NewUser {
        slipway_platform::add_user(
            &self.config.data_dir,
            self.config.database_url.as_deref(),
            email,
            name,
        )
        .await
        .expect("add_user")
    }

    /// A separate account with its own owner.
    pub async fn add_account(&self, email: &str) -> NewUser {
        slipway_platform::add_account(
            &self.config.data_dir,
            self.config.database_url.as_deref(),
            "other",
            email,
            "Other Owner",
        )
        .await
        .expect("add_account")
    }
}

/// Asserts a JSON error body: status, code and (when given) field.
pub fn assert_error(reply: &Reply, status: StatusCode, code: &str, field: Option<&str>) {
    let (got, body) = reply;
    assert_eq!(*got, status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    if let Some(f) = field {
        assert_eq!(body["error"]["field"], f, "{body}");
    }
}

/// A Python HTTP server on `$PORT` answering every GET with the Python expression `body`;
/// `prelude` runs first (after `import http.server, os`).
pub fn python_server(prelude: &str, body: &str) -> String {
    format!(
        r#"import http.server, os
{prelude}class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ({body}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#
    )
}

/// A devfile with one Python service `api` on port 8002 whose build command is `build`.
pub fn python_devfile(name: &str, build: &str) -> String {
    format!(
        r#"schemaVersion: 2.2.0
metadata:
  name: {name}
  displayName: Python test app
components:
  - name: api-image
    image:
      imageName: api
      dockerfile:
        uri: Dockerfile
        buildContext: .
  - name: api
    container:
      image: api
      endpoints:
        - name: http
          targetPort: 8002
commands:
  - id: build
    exec:
      component: api
      commandLine: "{build}"
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: build, isDefault: true }}
  - id: run
    exec:
      component: api
      commandLine: python3 main.py
      workingDir: ${{PROJECT_SOURCE}}
      group: {{ kind: run, isDefault: true }}
"#
    )
}

/// The files of a tiny Python project with `devfile` at its root.
pub fn python_project(devfile: &str) -> Vec<(String, Vec<u8>)> {
    vec![
        ("devfile.yaml".into(), devfile.as_bytes().to_vec()),
        (
            "main.py".into(),
            b"import os\nprint('listening on', os.environ.get('PORT'))\n".to_vec(),
        ),
        (
            "Dockerfile".into(),
            b"FROM python:3.12-slim\nCOPY . /app\nCMD python3 main.py\n".to_vec(),
        ),
        // Larger than the 64 KiB JSON body limit, so the upload path must stream.
        (
            "assets/blob.bin".into(),
            (0..100_000u32).map(|i| (i % 251) as u8).collect(),
        ),
    ]
}

/// A tar of `files` (paths written as given, even `..`; each under `./` like `tar -C dir .`).
pub fn tar_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, data) in files {
        let mut header = tar::Header::new_gnu();
        let name = format!("./{path}");
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, &data[..]).expect("tar entry");
    }
    builder.into_inner().expect("tar")
}

/// `files` as a tar.zst.
pub fn tar_zst(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    zstd::encode_all(&tar_of(files)[..], 3).expect("zstd")
}

/// `files` as a tar.gz.
pub fn tar_gz(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar_of(files)).expect("gzip");
    gz.finish().expect("gzip")
}

impl TestApp {
    /// `POST /v1/apps/{id}/builds[?query]` with a body of `content_type`.
    pub async fn upload(
        &self,
        token: &str,
        app_id: &str,
        query: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Reply {
        let mut url = format!("{}/v1/apps/{app_id}/builds", self.base);
        if !query.is_empty() {
            url.push('?');
            url.push_str(query);
        }
        let r = self
            .client
            .post(url)
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("request");
        let status = r.status();
        let text = r.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Uploads a tar.zst of `files` and returns the one build id (asserting 202).
    pub async fn build_one(&self, app_id: &str, files: &[(String, Vec<u8>)]) -> String {
        let (status, body) = self
            .upload(&self.owner, app_id, "", "application/zstd", tar_zst(files))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(body["builds"][0]["status"], "queued", "{body}");
        body["build_ids"][0].as_str().expect("build id").to_owned()
    }

    pub async fn get_build(&self, token: &str, id: &str, log: bool) -> Reply {
        let path = if log {
            format!("/v1/builds/{id}?log=true")
        } else {
            format!("/v1/builds/{id}")
        };
        self.send(Method::GET, &path, Some(token), None).await
    }

    pub async fn cancel_build(&self, token: &str, id: &str) -> Reply {
        self.send(
            Method::POST,
            &format!("/v1/builds/{id}/cancel"),
            Some(token),
            None,
        )
        .await
    }

    /// Polls the build until its status is one of `statuses` (60 s at most); returns it
    /// with its log.
    pub async fn wait_build(&self, id: &str, statuses: &[&str]) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let (status, body) = self.get_build(&self.owner, id, true).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            if statuses.iter().any(|s| body["status"] == *s) {
                return body;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "build never reached {statuses:?}: {body}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// Every byte of the SQLite database (main file, WAL and shared memory).
pub fn sqlite_bytes(app: &TestApp) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(app.data_dir()).unwrap() {
        let entry = entry.unwrap();
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(slipway_platform::SQLITE_FILE)
        {
            out.extend(std::fs::read(entry.path()).unwrap());
        }
    }
    out
}
