//! The HTTP layer: shared state, the router of both services and the admin API, bearer
//! tokens, request logging (ids, methods, status codes and timings only — never payloads).

pub mod admin;
mod amend;
pub mod enrollment;
pub mod error;
pub mod events;
pub mod metrics;
pub mod missing_info;
pub mod openapi;
pub mod worklist;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::auth::Caller;
use crate::config::CareConfig;
use crate::db::{Db, Tx};
use crate::enrollment::validate::Settings;
use crate::store::users::load_caller;
use error::ApiError;

/// What every handler shares: the database, the configurable value lists, the rendered
/// OpenAPI document and the metrics.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    history: crate::history::HistoryWriter,
    settings: Settings,
    openapi: String,
    base_path: String,
    namespace: String,
    max_body_bytes: usize,
    amend_window: std::time::Duration,
    metrics: slipway_server::metrics::Metrics,
    enrollments: slipway_server::metrics::CounterBy,
    events: crate::events::Hub,
    /// Announces expiries, and reads and fans out events, while the state lives.
    _sweeper: Option<crate::events::AbortOnDrop>,
    _reader: Option<crate::events::AbortOnDrop>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("backend", &self.inner.db.backend())
            .field("base_path", &self.inner.base_path)
            .field("namespace", &self.inner.namespace)
            .finish_non_exhaustive()
    }
}

impl AppState {
    pub(crate) fn new(db: Db, config: &CareConfig) -> Self {
        let settings = Settings {
            contact_types: config.contact_types.clone(),
            genders: config.genders.clone(),
        };
        let (metrics, enrollments) = slipway_server::metrics::Metrics::with(metrics::register);
        let events = crate::events::Hub::default();
        let sweeper = crate::events::spawn_sweeper(db.clone(), events.clone());
        let reader = crate::events::spawn_reader(db.clone(), events.clone());
        Self {
            inner: Arc::new(Inner {
                openapi: openapi::render(&config.base_path, &config.namespace, &settings),
                db,
                history: Default::default(),
                settings,
                base_path: config.base_path.clone(),
                namespace: config.namespace.clone(),
                max_body_bytes: config.max_body_bytes,
                amend_window: config.amend_window,
                metrics,
                enrollments,
                events,
                _sweeper: sweeper,
                _reader: reader,
            }),
        }
    }

    /// The database backend in use.
    pub fn backend(&self) -> crate::db::Backend {
        self.inner.db.backend()
    }

    pub(crate) fn db(&self) -> &Db {
        &self.inner.db
    }

    /// The batched writer of the GETs' history records.
    pub(crate) fn history(&self) -> &crate::history::HistoryWriter {
        &self.inner.history
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The worklist's event signal.
    pub fn events(&self) -> &crate::events::Hub {
        &self.inner.events
    }

    /// The base path (`--base-path`), empty or starting with `/`.
    pub(crate) fn base_path(&self) -> &str {
        &self.inner.base_path
    }

    /// How long after its answer a request may be corrected.
    pub(crate) fn amend_window(&self) -> std::time::Duration {
        self.inner.amend_window
    }

    /// The request metrics and the exposition.
    pub(crate) fn metrics(&self) -> &slipway_server::metrics::Metrics {
        &self.inner.metrics
    }

    /// The enrollments answered, by outcome.
    pub(crate) fn enrollments(&self) -> &slipway_server::metrics::CounterBy {
        &self.inner.enrollments
    }
}

/// Builds the router: `{base}/{ns}/…` services, `{base}/admin/…`, `{base}/openapi.json`,
/// `{base}/health` and `{base}/metrics`; every request is counted by its route template.
pub fn router(state: AppState) -> Router {
    let ns = format!("/{}", state.inner.namespace);
    let services = Router::new()
        .nest(
            &ns,
            enrollment::router()
                .merge(missing_info::router())
                .merge(worklist::router())
                .merge(events::router()),
        )
        .nest("/fhir", worklist::fhir_router())
        .nest("/admin", admin::router())
        .route("/openapi.json", get(openapi::serve))
        .route("/health", get(slipway_server::http::health))
        .route("/metrics", get(metrics::serve));
    let limit = state.inner.max_body_bytes;
    let app = if state.inner.base_path.is_empty() {
        services
    } else {
        Router::new().nest(&state.inner.base_path, services)
    };
    let app = slipway_server::http::finish(app.fallback(not_found), limit);
    state.metrics().track(app).with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::NotFound(error::ErrorItem::new("NOT_FOUND", "no such route", ""))
}

/// The bearer token of a request, or 401.
pub(crate) fn bearer(headers: &HeaderMap) -> Result<String, ApiError> {
    slipway_server::http::bearer(headers)
        .map(|t| t.expose().to_owned())
        .ok_or(ApiError::Unauthorized)
}

/// Opens the request's write transaction and authenticates the caller in it.
pub(crate) async fn begin_as_caller(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<(Tx, Caller), ApiError> {
    let token = bearer(headers)?;
    let tx = state.db().begin_write().await?;
    authenticate(tx, &token).await
}

/// Opens a read-only transaction and authenticates the caller in it. The read part of a
/// request runs here, outside the writer queue (SQLite has one writer; readers run side by
/// side), and only its writes then take a write transaction.
pub(crate) async fn read_as_caller(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<(Tx, Caller), ApiError> {
    let token = bearer(headers)?;
    let tx = state.db().begin_reads().await?;
    authenticate(tx, &token).await
}

async fn authenticate(mut tx: Tx, token: &str) -> Result<(Tx, Caller), ApiError> {
    let caller = load_caller(&mut tx, token)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    Ok((tx, caller))
}

/// The body bytes, or 413 / 400.
pub(crate) fn body_bytes(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    slipway_server::http::body_bytes(body).map_err(|e| match e {
        slipway_server::http::BodyError::TooLarge => ApiError::PayloadTooLarge,
        slipway_server::http::BodyError::Unreadable => {
            ApiError::bad_request("INVALID_BODY", "the request body could not be read", "")
        }
    })
}

/// A JSON response with a status.
pub(crate) fn json<T: serde::Serialize>(status: StatusCode, body: &T) -> Response {
    (status, axum::Json(body)).into_response()
}
