//! The care service of Slipway: patient enrollment (`POST {base}/{ns}/eRxApi`) and
//! missing-information requests (`GET|POST {base}/{ns}/missingInformationRequest/{uuid}`),
//! plus an admin API for reference data and users, over SQLite or PostgreSQL.
//!
//! The CLI calls [`serve`] with a [`CareConfig`]; tests and benchmarks call [`app`] or
//! [`spawn`] to get a server on a socket they chose.

mod amend;
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
    spawn_with_tls(listener, state, None, shutdown).await
}

/// [`spawn`], over HTTPS when `tls` is given. Every event stream ends when `shutdown`
/// completes: a graceful shutdown waits for open connections, and a listener's stream would
/// otherwise keep its connection open forever.
async fn spawn_with_tls(
    listener: tokio::net::TcpListener,
    state: AppState,
    tls: Option<slipway_server::tls::Tls>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), CareError> {
    let shutdown = state.events().shutting_down().after(shutdown);
    slipway_server::serve::serve_maybe_tls(listener, tls, app(state), shutdown).await?;
    Ok(())
}

/// `slipway care serve`: config → pool → migrate → serve, until Ctrl-C or SIGTERM. With
/// [`CareConfig::tls`] it serves HTTPS; the certificate files are checked before anything
/// else starts (the order of [`slipway_server::serve::run`]).
pub async fn serve(config: CareConfig) -> Result<(), CareError> {
    let config = &config;
    slipway_server::serve::run(
        config.listen,
        config.tls.clone(),
        prepare(config),
        |on| async move {
            tracing::info!(
                local = %on.local,
                https = on.tls.is_some(),
                base_path = %config.base_path,
                namespace = %config.namespace,
                "care service listening"
            );
            let shutdown = slipway_server::serve::shutdown_signal();
            spawn_with_tls(on.listener, on.state, on.tls, shutdown).await
        },
    )
    .await
}
