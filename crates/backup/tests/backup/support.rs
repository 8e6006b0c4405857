//! Test harness: real platform and care servers on port 0 over their own databases, the
//! passphrase files, and a cheap scrypt work factor (each archive costs milliseconds, not
//! the second age tunes a real one to).

use std::path::{Path, PathBuf};

use reqwest::{Method, StatusCode};
use serde_json::Value;
use slipway_backup::{Passphrase, WorkFactor};
use slipway_platform::{BuilderKind, PlatformConfig};
use slipway_server::testing::{Backend, TestDatabase};

/// scrypt with N = 2^10: fast, and still the real age format.
pub const WORK: WorkFactor = WorkFactor::Fixed(10);

/// The backends every test runs on.
pub fn backends() -> Vec<Backend> {
    slipway_server::testing::backends("backup")
}

/// Writes `text` to a passphrase file in `dir` and reads it as the CLI does.
pub fn passphrase(dir: &Path, name: &str, text: &str) -> (PathBuf, Passphrase) {
    let file = dir.join(name);
    std::fs::write(&file, format!("{text}\n")).expect("passphrase file");
    let passphrase = Passphrase::from_file(&file).expect("passphrase");
    (file, passphrase)
}

/// A status and a JSON body (Null when the body is empty or not JSON).
pub type Reply = (StatusCode, Value);

async fn send(
    client: &reqwest::Client,
    url: String,
    method: Method,
    token: Option<&str>,
    body: Option<&Value>,
) -> Reply {
    let mut req = client.request(method, url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    let r = req.send().await.expect("request");
    let status = r.status();
    let text = r.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A running platform server.
pub struct Platform {
    pub base: String,
    pub config: PlatformConfig,
    pub client: reqwest::Client,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Platform {
    /// Serves `data_dir` (and `database_url`) as `slipway platform serve` would.
    pub async fn start(data_dir: &Path, database_url: Option<&str>) -> Self {
        let mut config = PlatformConfig::new("127.0.0.1:0".parse().unwrap(), data_dir);
        config.builder = BuilderKind::Native;
        config.database_url = database_url.map(str::to_owned);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let state = slipway_platform::prepare(&config)
            .await
            .expect("prepare the platform server");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            slipway_platform::spawn(listener, state, async {
                let _ = rx.await;
            })
            .await
            .expect("serve");
        });
        Self {
            base,
            config,
            client: reqwest::Client::new(),
            shutdown: Some(tx),
            server: Some(server),
        }
    }

    /// The token `bootstrap-token` holds.
    pub fn owner_token(&self) -> String {
        std::fs::read_to_string(
            self.config
                .data_dir
                .join(slipway_platform::BOOTSTRAP_TOKEN_FILE),
        )
        .expect("bootstrap-token")
        .trim()
        .to_owned()
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        send(
            &self.client,
            format!("{}{path}", self.base),
            method,
            token,
            body,
        )
        .await
    }

    /// Stops the server (and closes its pool).
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.server.take() {
            h.await.expect("server task");
        }
    }
}

/// A database for a platform or care server: a SQLite file under the data directory, or a
/// fresh PostgreSQL database (dropped with this value).
pub struct Db {
    pub url: Option<String>,
    _pg: Option<TestDatabase>,
}

impl Db {
    pub async fn new(backend: Backend, prefix: &str) -> Self {
        match backend {
            Backend::Sqlite => Self {
                url: None,
                _pg: None,
            },
            Backend::Postgres => {
                let database = TestDatabase::create(prefix).await;
                Self {
                    url: Some(database.url().to_owned()),
                    _pg: Some(database),
                }
            }
        }
    }
}

/// A running care service.
pub struct Care {
    pub base: String,
    pub client: reqwest::Client,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

/// The demo data set's tokens and its active missing-information request.
pub const STAFF: &str = "demo-staff";
pub const ADMIN: &str = "demo-admin";
pub const RESTRICTED: &str = "demo-restricted";
pub const ACTIVE: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";

impl Care {
    /// Serves the database (`data_dir`'s default SQLite file, or `database_url`).
    pub async fn start(data_dir: &Path, database_url: Option<&str>, demo: bool) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let mut config = slipway_care::CareConfig::new(addr);
        config.demo = demo;
        config.data_dir = data_dir.to_path_buf();
        config.database_url = database_url.map(str::to_owned);
        let state = slipway_care::prepare(&config)
            .await
            .expect("prepare the care service");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            slipway_care::spawn(listener, state, async {
                let _ = rx.await;
            })
            .await
            .expect("serve");
        });
        Self {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            shutdown: Some(tx),
            server: Some(server),
        }
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        send(
            &self.client,
            format!("{}{path}", self.base),
            method,
            token,
            body,
        )
        .await
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.server.take() {
            h.await.expect("server task");
        }
    }
}

/// Every path under `dir`, relative, sorted (empty when `dir` does not exist).
pub fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            out.push(
                path.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
            if path.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
