//! The care service of Slipway: patient enrollment (`POST {base}/{ns}/eRxApi`) and
//! missing-information requests (`GET|POST {base}/{ns}/missingInformationRequest/{uuid}`),
//! plus an admin API for reference data and users, over SQLite or PostgreSQL.
//!
//! The CLI calls [`serve`] with a [`CareConfig`]; tests and benchmarks call [`app`] or
//! [`spawn`] to get a server on a socket they chose.

mod auth;
pub mod check;
mod config;
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
mod layers;
mod missing_info;
mod model;
#[doc(hidden)]
pub mod probes;
mod reference;
mod store;
mod violation;
mod worklist;

pub use config::{CareConfig, DEFAULT_CONTACT_TYPES, DEFAULT_GENDERS};
pub use db::Backend;
pub use error::CareError;
pub use http::AppState;

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
