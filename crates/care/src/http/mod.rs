//! The HTTP layer: shared state, the router of both services and the admin API, bearer
//! tokens, request logging (ids, methods, status codes and timings only — never payloads).

pub mod admin;
pub mod enrollment;
pub mod error;
pub mod missing_info;
pub mod openapi;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::CareConfig;
use crate::auth::{Caller, load_caller};
use crate::db::{Db, Tx};
use crate::enrollment::validate::Settings;
use error::ApiError;

/// What every handler shares: the database, the configurable value lists and the rendered
/// OpenAPI document.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    settings: Settings,
    openapi: String,
    base_path: String,
    namespace: String,
    max_body_bytes: usize,
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
        Self {
            inner: Arc::new(Inner {
                openapi: openapi::render(&config.base_path, &config.namespace),
                db,
                settings: Settings {
                    contact_types: config.contact_types.clone(),
                    genders: config.genders.clone(),
                },
                base_path: config.base_path.clone(),
                namespace: config.namespace.clone(),
                max_body_bytes: config.max_body_bytes,
            }),
        }
    }

    /// The database backend in use.
    pub fn backend(&self) -> crate::Backend {
        self.inner.db.backend()
    }

    pub(crate) fn db(&self) -> &Db {
        &self.inner.db
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.inner.settings
    }
}

/// Builds the router: `{base}/{ns}/…` services, `{base}/admin/…`, `{base}/openapi.json` and
/// `{base}/health`.
pub fn router(state: AppState) -> Router {
    let ns = format!("/{}", state.inner.namespace);
    let services = Router::new()
        .nest(&ns, enrollment::router().merge(missing_info::router()))
        .nest("/admin", admin::router())
        .route("/openapi.json", get(openapi::serve))
        .route("/health", get(|| async { "ok" }));
    let limit = state.inner.max_body_bytes;
    let app = if state.inner.base_path.is_empty() {
        services
    } else {
        Router::new().nest(&state.inner.base_path, services)
    };
    app.fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn(log_requests))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::NotFound(error::ErrorItem::new("NOT_FOUND", "no such route", ""))
}

/// Logs one line per request with a generated request id, the method, the path, the status
/// and the time taken. Bodies and query strings are never logged.
async fn log_requests(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = uuid::Uuid::new_v4();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let mut response = next.run(req).await;
    if let Ok(v) = header::HeaderValue::from_str(&id.to_string()) {
        response.headers_mut().insert("x-request-id", v);
    }
    tracing::info!(
        request_id = %id,
        %method,
        %path,
        status = response.status().as_u16(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "request"
    );
    response
}

/// The bearer token of a request, or 401.
pub(crate) fn bearer(headers: &HeaderMap) -> Result<String, ApiError> {
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or(ApiError::Unauthorized)?;
    let (scheme, token) = value.split_once(' ').ok_or(ApiError::Unauthorized)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(ApiError::Unauthorized);
    }
    Ok(token.to_owned())
}

/// Opens the request's transaction and authenticates the caller in it.
pub(crate) async fn begin_as_caller(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<(Tx, Caller), ApiError> {
    let token = bearer(headers)?;
    let mut tx = state.db().begin().await?;
    let caller = load_caller(&mut tx, &token)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    Ok((tx, caller))
}

/// The body bytes, or 413 / 400.
pub(crate) fn body_bytes(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|r| {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge
        } else {
            ApiError::bad_request("INVALID_BODY", "the request body could not be read", "")
        }
    })
}

/// A JSON response with a status.
pub(crate) fn json<T: serde::Serialize>(status: StatusCode, body: &T) -> Response {
    (status, axum::Json(body)).into_response()
}
