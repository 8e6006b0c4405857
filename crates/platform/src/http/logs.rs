//! `GET /v1/apps/{app_id}/logs` lists an app's build and runtime logs, each with a presigned
//! URL; `GET /v1/logs/…?expires=&signature=` serves one WITHOUT a token (the signature is the
//! credential; a bad or expired one is a 403). Log contents are streamed from disk.
//! `GET /v1/apps/{app_id}/logs/stream` follows the live logs as Server-Sent Events.

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use super::apps::{authorized_app, parse_app_id};
use super::error::ApiError;
use super::{Access, AppState};
use tokio::sync::mpsc::Sender;

use crate::db::{now_millis, rfc3339};
use crate::logs::follow::{self, Cursor, LogSource};
use crate::policy::AppAction;
use crate::store::{builds, deployments};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/logs", get(list))
        .route("/apps/{app_id}/logs/stream", get(stream))
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

/// `http://<Host>` (`https://` when the request came over TLS) of the request, so listed URLs
/// work from where the caller stands.
pub(super) fn origin(headers: &HeaderMap, over_tls: bool) -> String {
    let scheme = if over_tls { "https" } else { "http" };
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        })
        .map(|h| format!("{scheme}://{h}"))
        .unwrap_or_default()
}

async fn list(
    State(state): State<AppState>,
    over_tls: Option<axum::Extension<slipway_server::tls::OverTls>>,
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
    let base = origin(&headers, over_tls.is_some());
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

/// How often a live stream looks for new lines and new builds or deployments.
const FOLLOW_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

/// Lines of each log a new stream starts with, unless `tail` says otherwise.
const DEFAULT_TAIL: usize = 100;

/// One line of `GET /v1/apps/{app_id}/logs/stream` (the `data` of a `log` event).
#[derive(Debug, Serialize)]
pub struct StreamedLine {
    /// The service.
    pub service: String,
    /// `build` or `runtime`.
    pub kind: &'static str,
    /// The build or the deployment the line comes from.
    pub source_id: String,
    /// The line, without its newline.
    pub line: String,
}

/// The query of a stream.
struct StreamQuery {
    service_name: Option<String>,
    cursor: Option<Cursor>,
    tail: usize,
}

fn stream_query(
    headers: &HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<StreamQuery, ApiError> {
    let Query(pairs) =
        query.map_err(|_| ApiError::InvalidBody("the query string could not be read".into()))?;
    let bad_cursor =
        |field| move |e: crate::logs::follow::BadCursor| ApiError::invalid(field, e.to_string());
    let mut parsed = StreamQuery {
        service_name: None,
        cursor: None,
        tail: DEFAULT_TAIL,
    };
    for (key, value) in pairs {
        match key.as_str() {
            "service_name" => parsed.service_name = Some(value),
            "cursor" => parsed.cursor = Some(Cursor::parse(&value).map_err(bad_cursor("cursor"))?),
            "tail" => {
                parsed.tail = match value.parse::<usize>() {
                    Ok(n) if n <= 10_000 => n,
                    _ => {
                        return Err(ApiError::invalid(
                            "tail",
                            "must be a whole number from 0 to 10000",
                        ));
                    }
                }
            }
            other => {
                return Err(ApiError::invalid(
                    other,
                    "unknown query parameter; allowed are service_name, cursor, tail",
                ));
            }
        }
    }
    // A browser's EventSource resends the last event's id on reconnection.
    if let Some(last) = headers.get("last-event-id") {
        let text = last
            .to_str()
            .map_err(|_| ApiError::invalid("Last-Event-ID", "must be text"))?;
        parsed.cursor = Some(Cursor::parse(text).map_err(bad_cursor("Last-Event-ID"))?);
    }
    Ok(parsed)
}

/// The logs a stream follows now: the newest build of each service and the services of the
/// newest deployment.
async fn current_sources(
    state: &AppState,
    app_id: &str,
    service_name: Option<&str>,
) -> Result<Vec<LogSource>, sqlx::Error> {
    let mut tx = state.db().begin_read().await?;
    let mut sources = Vec::new();
    for (build_id, service) in builds::latest_per_service(&mut tx, app_id).await? {
        sources.push(LogSource::Build { build_id, service });
    }
    if let Some(latest) = deployments::page_of_app(&mut tx, app_id, None, 1)
        .await?
        .pop()
    {
        for s in deployments::services(&mut tx, &latest.id).await? {
            sources.push(LogSource::Runtime {
                deployment_id: latest.id.clone(),
                service: s.service,
            });
        }
    }
    tx.commit().await?;
    sources.retain(|s| service_name.is_none_or(|n| n == s.service()));
    Ok(sources)
}

/// `GET /v1/apps/{app_id}/logs/stream[?service_name=&tail=&cursor=]` (any role that may read
/// logs): the app's build and runtime logs as Server-Sent Events, one `log` event per line,
/// following new builds and deployments as they start. Each event's `id` is a cursor; a
/// client that reconnects with it (`?cursor=` or `Last-Event-ID`) gets exactly the lines after
/// that event (404 when it names a build or deployment that is not this app's). A new stream
/// starts with the last `tail` lines (default 100) of each log.
async fn stream(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let id = parse_app_id(&app_id)?;
    let query = stream_query(&headers, query)?;
    authorized_app(&mut tx, &caller, &id, AppAction::ReadLogs).await?;
    // A cursor may only name this app's builds and deployments.
    for source in query.cursor.iter().flat_map(Cursor::sources) {
        let ours = match source {
            LogSource::Build { build_id, service } => builds::get(&mut tx, build_id)
                .await?
                .is_some_and(|b| b.app_id == id && &b.service == service),
            LogSource::Runtime { deployment_id, .. } => {
                deployments::get(&mut tx, &id, deployment_id)
                    .await?
                    .is_some()
            }
        };
        if !ours {
            return Err(ApiError::NotFound(format!(
                "the cursor names {} {}, which is not a {} of this app",
                source.kind(),
                source.owner_id(),
                if source.kind() == "build" {
                    "build"
                } else {
                    "deployment"
                }
            )));
        }
    }
    tx.commit().await?;
    let (sender, receiver) = tokio::sync::mpsc::channel::<Event>(256);
    let follow_state = state.clone();
    tokio::spawn(async move {
        let shutting_down = follow_state.shutting_down().begun();
        tokio::select! {
            () = follow(&follow_state, &id, query, &sender) => {}
            () = sender.closed() => {}
            () = shutting_down => {}
        }
    });
    let events = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver
            .recv()
            .await
            .map(|event| (Ok::<_, std::convert::Infallible>(event), receiver))
    });
    Ok((
        [(header::CACHE_CONTROL, "no-store")],
        Sse::new(events).keep_alive(KeepAlive::default()),
    )
        .into_response())
}

/// Sends every new line of the followed logs until the client goes away.
async fn follow(state: &AppState, app_id: &str, query: StreamQuery, sender: &Sender<Event>) {
    let resumed = query.cursor.is_some();
    let mut cursor = query.cursor.unwrap_or_default();
    let mut first = true;
    loop {
        let current = match current_sources(state, app_id, query.service_name.as_deref()).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(app_id, error = %e, "a log stream cannot read its sources");
                tokio::time::sleep(FOLLOW_INTERVAL).await;
                continue;
            }
        };
        for source in &current {
            if cursor.offset(source).is_none() {
                // A log that appears after the stream began is sent whole.
                let path = path_of(state, source);
                let start = if first && !resumed {
                    let tail = query.tail;
                    tokio::task::spawn_blocking(move || follow::tail_offset(&path, tail))
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .unwrap_or(0)
                } else if is_link(&path) {
                    // A kept instance's log (the deployment before already streamed it):
                    // only what it writes from now on.
                    std::fs::metadata(&path).map_or(0, |m| m.len())
                } else {
                    0
                };
                cursor.set(source.clone(), start);
            }
        }
        first = false;
        let followed: Vec<LogSource> = cursor.sources().cloned().collect();
        for source in followed {
            let replaced = !current.contains(&source);
            let offset = cursor.offset(&source).unwrap_or(0);
            let path = path_of(state, &source);
            let lines =
                tokio::task::spawn_blocking(move || follow::read_lines(&path, offset, replaced))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_default();
            let drained = replaced && lines.is_empty();
            for (line, next) in lines {
                cursor.set(source.clone(), next);
                let data = StreamedLine {
                    service: source.service().to_owned(),
                    kind: source.kind(),
                    source_id: source.owner_id().to_owned(),
                    line,
                };
                let Ok(event) = Event::default()
                    .event("log")
                    .id(cursor.encode())
                    .json_data(&data)
                else {
                    continue;
                };
                if sender.send(event).await.is_err() {
                    return;
                }
            }
            if drained {
                cursor.remove(&source);
            }
        }
        tokio::time::sleep(FOLLOW_INTERVAL).await;
    }
}

/// Whether `path` is a symbolic link (the log of a service a newer deployment kept running).
fn is_link(path: &std::path::Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn path_of(state: &AppState, source: &LogSource) -> std::path::PathBuf {
    match source {
        LogSource::Build { build_id, .. } => state.runner().log(build_id).path().to_path_buf(),
        LogSource::Runtime {
            deployment_id,
            service,
        } => state.deployer().log_path(deployment_id, service),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_urls_take_the_scheme_the_request_came_over() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, "slipway.example.org:8700".parse().unwrap());
        assert_eq!(origin(&headers, false), "http://slipway.example.org:8700");
        assert_eq!(origin(&headers, true), "https://slipway.example.org:8700");
        headers.insert(header::HOST, "evil/path".parse().unwrap());
        assert_eq!(origin(&headers, true), "");
    }
}
