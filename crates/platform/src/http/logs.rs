//! `GET /v1/apps/{app_id}/logs` lists an app's build and runtime logs, each with a presigned
//! URL; `GET /v1/logs/…?expires=&signature=` serves one WITHOUT a token (the signature is the
//! credential; a bad or expired one is a 403). Log contents are streamed from disk.

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use super::apps::{authorized_app, parse_app_id};
use super::error::ApiError;
use super::{Access, AppState};
use crate::db::{now_millis, rfc3339};
use crate::policy::AppAction;
use crate::store::{builds, deployments};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/logs", get(list))
        .route("/logs/builds/{build_id}", get(serve_build))
        .route(
            "/logs/deployments/{deployment_id}/{service}",
            get(serve_runtime),
        )
}

/// One log of `GET /v1/apps/{app_id}/logs`.
#[derive(Debug, Serialize)]
pub struct LogEntry {
    /// The service.
    pub service: String,
    /// `build` or `runtime`.
    pub kind: &'static str,
    /// The build, for build logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// The deployment, for runtime logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment_id: Option<String>,
    /// When the build or deployment was created (RFC 3339).
    pub time: String,
    /// Bytes in the log now.
    pub size: u64,
    /// Presigned URL serving the log without a token, good for 15 minutes.
    pub url: String,
}

/// `GET /v1/apps/{app_id}/logs`.
#[derive(Debug, Serialize)]
pub struct LogList {
    /// Newest first.
    pub logs: Vec<LogEntry>,
}

fn unix_now() -> i64 {
    now_millis() / 1000
}

/// `http://<Host>` of the request, so listed URLs work from where the caller stands.
fn origin(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        })
        .map(|h| format!("http://{h}"))
        .unwrap_or_default()
}

async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<LogList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let id = parse_app_id(&app_id)?;
    let Query(pairs) =
        query.map_err(|_| ApiError::InvalidBody("the query string could not be read".into()))?;
    let mut latest_only = true;
    let mut service_name: Option<String> = None;
    for (key, value) in pairs {
        match key.as_str() {
            "latest_only" => {
                latest_only = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(ApiError::invalid("latest_only", "must be true or false")),
                }
            }
            "service_name" => service_name = Some(value),
            other => {
                return Err(ApiError::invalid(
                    other,
                    "unknown query parameter; allowed are latest_only, service_name",
                ));
            }
        }
    }
    authorized_app(&mut tx, &caller, &id, AppAction::ReadLogs).await?;
    let wanted = |s: &str| service_name.as_deref().is_none_or(|n| n == s);
    let now = unix_now();
    let base = origin(&headers);
    let mut logs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for b in builds::of_app_newest_first(&mut tx, &id).await? {
        if !wanted(&b.service) || (latest_only && !seen.insert(b.service.clone())) {
            continue;
        }
        let log = state.runner().log(&b.id);
        let path = format!("/v1/logs/builds/{}", b.id);
        logs.push(LogEntry {
            size: size_of(log.path()).await,
            url: format!("{base}{}", state.signer().presign(&path, now)),
            service: b.service,
            kind: "build",
            build_id: Some(b.id),
            deployment_id: None,
            time: rfc3339(b.created_at),
        });
    }
    let all = deployments::of_app_newest_first(&mut tx, &id).await?;
    let chosen = if latest_only {
        &all[..all.len().min(1)]
    } else {
        &all[..]
    };
    for d in chosen {
        for s in deployments::services(&mut tx, &d.id).await? {
            if !wanted(&s.service) {
                continue;
            }
            let path = format!("/v1/logs/deployments/{}/{}", d.id, s.service);
            logs.push(LogEntry {
                size: size_of(&state.deployer().log_path(&d.id, &s.service)).await,
                url: format!("{base}{}", state.signer().presign(&path, now)),
                service: s.service,
                kind: "runtime",
                build_id: None,
                deployment_id: Some(d.id.clone()),
                time: rfc3339(d.created_at),
            });
        }
    }
    tx.commit().await?;
    logs.sort_by(|a, b| b.time.cmp(&a.time));
    Ok(Json(LogList { logs }))
}

async fn size_of(path: &std::path::Path) -> u64 {
    tokio::fs::metadata(path).await.map_or(0, |m| m.len())
}

/// The `expires` and `signature` of a presigned request; anything else is refused.
fn signed(query: &[(String, String)]) -> Option<(i64, String)> {
    let mut expires = None;
    let mut signature = None;
    for (k, v) in query {
        match k.as_str() {
            "expires" if expires.is_none() => expires = v.parse::<i64>().ok(),
            "signature" if signature.is_none() => signature = Some(v.clone()),
            _ => return None,
        }
    }
    Some((expires?, signature?))
}

fn forbidden() -> ApiError {
    ApiError::PermissionDenied(
        "the log URL's signature is invalid or has expired; list the logs again for a fresh URL"
            .into(),
    )
}

async fn serve_file(
    state: &AppState,
    path: &str,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    file: std::path::PathBuf,
) -> Result<Response, ApiError> {
    let Ok(Query(pairs)) = query else {
        return Err(forbidden());
    };
    let (expires, signature) = signed(&pairs).ok_or_else(forbidden)?;
    if !state.signer().verify(path, expires, &signature, unix_now()) {
        return Err(forbidden());
    }
    let handle = match tokio::fs::File::open(&file).await {
        Ok(h) => h,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((
                StatusCode::OK,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "",
            )
                .into_response());
        }
        Err(e) => return Err(ApiError::Internal(format!("cannot open a log: {e}"))),
    };
    let stream = tokio_util::io::ReaderStream::new(handle);
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "private, no-store"),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

fn uuid_param(field: &str, raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::invalid(field, "must be a UUID"))
}

async fn serve_build(
    State(state): State<AppState>,
    Path(build_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let id = uuid_param("build_id", &build_id)?;
    let path = format!("/v1/logs/builds/{id}");
    let file = state.runner().log(&id).path().to_path_buf();
    serve_file(&state, &path, query, file).await
}

async fn serve_runtime(
    State(state): State<AppState>,
    Path((deployment_id, service)): Path<(String, String)>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let id = uuid_param("deployment_id", &deployment_id)?;
    if service.is_empty()
        || !service
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(ApiError::invalid("service", "not a service name"));
    }
    let path = format!("/v1/logs/deployments/{id}/{service}");
    let file = state.deployer().log_path(&id, &service);
    serve_file(&state, &path, query, file).await
}
