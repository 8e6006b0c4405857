//! The care service of Slipway: patient enrollment (`POST {base}/{ns}/eRxApi`) and
//! missing-information requests (`GET|POST {base}/{ns}/missingInformationRequest/{uuid}`),
//! plus an admin API for reference data and users, over SQLite or PostgreSQL.
//!
//! The CLI calls [`serve`] with a [`CareConfig`]; tests and benchmarks call [`app`] or
//! [`spawn`] to get a server on a socket they chose.

mod auth;
pub mod check;
mod db;
mod demo;
pub mod embedded;
mod enrollment;
mod error;
mod events;
mod fhir;
mod fields;
#[doc(hidden)]
pub mod fuzzing;
mod history;
mod http;
mod missing_info;
#[doc(hidden)]
pub mod probes;
mod reference;
mod store;
mod violation;
mod worklist;

use std::net::SocketAddr;
use std::path::PathBuf;

pub use db::Backend;
pub use error::CareError;
pub use http::AppState;

/// Default contact `type` values (each at most 7 characters, the spec's limit).
pub const DEFAULT_CONTACT_TYPES: &[&str] = &[
    "home", "work", "mobile", "main", "other", "billing", "mailing",
];

/// Default `gender` values (one character each, the spec's limit).
pub const DEFAULT_GENDERS: &[&str] = &["F", "M", "O", "U"];

/// Everything `slipway care serve` can set. Build it with [`CareConfig::new`] and change
/// the public fields; the defaults are the documented ones.
#[derive(Debug, Clone)]
pub struct CareConfig {
    /// Address to listen on (`--listen`), for example `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// `sqlite://…` or `postgres://…` (`--database-url`); `None` means a SQLite file
    /// `care.sqlite3` in [`CareConfig::data_dir`].
    pub database_url: Option<String>,
    /// Namespace path segment (`--namespace`), default `care`.
    pub namespace: String,
    /// Prefix both services are mounted under (`--base-path`), default empty; for example
    /// `/services/apexrest`.
    pub base_path: String,
    /// Load the demo data set into an empty database (`--demo`).
    pub demo: bool,
    /// Where the default SQLite file lives.
    pub data_dir: PathBuf,
    /// Allowed contact `type` values.
    pub contact_types: Vec<String>,
    /// Allowed `gender` values.
    pub genders: Vec<String>,
    /// Largest accepted request body in bytes.
    pub max_body_bytes: usize,
    /// Serve HTTPS with this certificate and key (`--tls-cert`, `--tls-key`), re-read on
    /// `SIGHUP` and when the files change.
    pub tls: Option<slipway_server::tls::TlsFiles>,
}

impl CareConfig {
    /// A configuration with the documented defaults.
    pub fn new(listen: SocketAddr) -> Self {
        let defaults = enrollment::validate::Settings::default();
        Self {
            listen,
            database_url: None,
            namespace: "care".to_owned(),
            base_path: String::new(),
            demo: false,
            data_dir: PathBuf::from("."),
            contact_types: defaults.contact_types,
            genders: defaults.genders,
            max_body_bytes: 1024 * 1024,
            tls: None,
        }
    }

    /// The database URL actually used: the configured one or the default SQLite file.
    pub fn effective_database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!("sqlite://{}", self.data_dir.join("care.sqlite3").display()),
        }
    }

    fn validate(&self) -> Result<(), CareError> {
        let ns = &self.namespace;
        if ns.is_empty()
            || !ns
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(CareError::Config(format!(
                "namespace must be a non-empty path segment of letters, digits, '_' or '-', got {ns:?}"
            )));
        }
        let base = &self.base_path;
        if !base.is_empty()
            && (!base.starts_with('/') || base.ends_with('/') || base.contains("//"))
        {
            return Err(CareError::Config(format!(
                "base path must be empty or start with '/' and not end with '/', got {base:?}"
            )));
        }
        Ok(())
    }
}

/// Connects to the database, runs the embedded migrations, loads the demo data if asked,
/// and builds the shared state. Used by [`serve`] and by tests that bind their own socket.
pub async fn prepare(config: &CareConfig) -> Result<AppState, CareError> {
    config.validate()?;
    let url = config.effective_database_url();
    if config.database_url.is_none() {
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            CareError::Config(format!(
                "cannot create data directory {}: {e}",
                config.data_dir.display()
            ))
        })?;
    }
    let db = db::open(&url).await?;
    tracing::info!(backend = ?db.backend(), "database ready");
    if config.demo {
        demo::load(&db).await?;
    }
    Ok(AppState::new(db, config))
}

/// The HTTP application for a prepared state: both services, the admin API and
/// `{base}/openapi.json`.
pub fn app(state: AppState) -> axum::Router {
    http::router(state)
}

/// Serves on an already bound listener until the future `shutdown` completes.
pub async fn spawn(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), CareError> {
    let shutdown = close_streams_on(&state, shutdown);
    slipway_server::serve::serve(listener, app(state), shutdown)
        .await
        .map_err(CareError::Io)
}

/// `shutdown`, then the end of every event stream: a graceful shutdown waits for open
/// connections, and a listener's stream would otherwise keep its connection open forever.
fn close_streams_on(
    state: &AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let hub = state.events().clone();
    async move {
        shutdown.await;
        hub.close();
    }
}

/// `slipway care serve`: config → pool → migrate → serve, until Ctrl-C or SIGTERM. With
/// [`CareConfig::tls`] it serves HTTPS; the certificate files are checked before anything
/// else starts.
pub async fn serve(config: CareConfig) -> Result<(), CareError> {
    let tls = config
        .tls
        .clone()
        .map(slipway_server::tls::Tls::load)
        .transpose()
        .map_err(|e| CareError::Config(e.to_string()))?;
    let _watching = tls
        .as_ref()
        .map(slipway_server::tls::Tls::watch)
        .transpose()
        .map_err(|e| CareError::Config(e.to_string()))?;
    let state = prepare(&config).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(CareError::Io)?;
    let local = listener.local_addr().map_err(CareError::Io)?;
    tracing::info!(
        %local,
        https = tls.is_some(),
        base_path = %config.base_path,
        namespace = %config.namespace,
        "care service listening"
    );
    let shutdown = close_streams_on(&state, slipway_server::serve::shutdown_signal());
    slipway_server::serve::serve_maybe_tls(listener, tls, app(state), shutdown)
        .await
        .map_err(CareError::Io)
}
