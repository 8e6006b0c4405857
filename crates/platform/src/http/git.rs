//! `/v1/apps/{app_id}/git` (an app's git source: connect with `PUT`, read, disconnect,
//! `POST …/git/deploy` to deploy the branch's tip now) and `POST /v1/hooks/git/{app_id}`,
//! where GitHub, GitLab and Gitea/Forgejo send push events. The hook takes no bearer token:
//! the delivery's signature with the app's webhook secret is its authentication, checked
//! before anything in the body is read (docs/git.md).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use slipway_api::git::{GitAuth, GitCommit, GitSource, HookOutcome, Preview, PreviewList};

use super::apps::authorized_app;
use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState, json_object};
use crate::db::rfc3339;
use crate::gitsource::credentials::{self, ConnectFailure, ConnectRequest};
use crate::gitsource::events::HookRefusal;
use crate::model::Role;
use crate::policy::AppAction;
use crate::store::git::{self as store, GitSourceRow, LastCommit};

/// The body fields of `PUT /v1/apps/{app_id}/git` (the OpenAPI document lists exactly these).
pub(crate) const CONNECT_FIELDS: &[&str] = &[
    "repo_url",
    "branch",
    "path",
    "auth",
    "token",
    "poll_interval_seconds",
    "max_previews",
];

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/apps/{app_id}/git",
            get(read).put(connect).delete(disconnect),
        )
        .route("/apps/{app_id}/git/deploy", post(deploy_now))
        .route("/apps/{app_id}/previews", get(previews))
        .route("/hooks/git/{app_id}", post(hook))
}

/// A commit as the API shows it.
pub(crate) fn commit_view(c: LastCommit) -> GitCommit {
    GitCommit {
        sha: c.sha,
        branch: c.branch,
        author: c.author,
        subject: c.subject,
    }
}

/// A source as the API shows it; `secret` only for owners (and whoever just connected).
fn view(row: GitSourceRow, webhook_url: String, secret: Option<String>) -> GitSource {
    GitSource {
        webhook_url,
        webhook_secret: secret,
        auth: GitAuth::parse(&row.auth).unwrap_or(GitAuth::None),
        poll_interval_seconds: row.poll_seconds.and_then(|s| u64::try_from(s).ok()),
        last_commit: row.last.map(commit_view),
        last_error: row.last_error,
        pending: row.pending_ref,
        max_previews: u32::try_from(row.max_previews).unwrap_or(0),
        pull_request: row
            .preview_of
            .as_ref()
            .and_then(|(_, n)| u64::try_from(*n).ok()),
        preview_of: row.preview_of.map(|(app, _)| app),
        connected_by: row.created_by,
        connected_at: rfc3339(row.created_at),
        app_id: row.app_id,
        repo_url: row.repo_url,
        branch: row.branch,
        path: row.path,
        deploy_key: row.deploy_key,
    }
}

/// Where the forge posts, as the caller reaches the platform.
fn webhook_url(
    headers: &HeaderMap,
    over_tls: Option<&axum::Extension<slipway_server::tls::OverTls>>,
    app_id: &str,
) -> String {
    format!(
        "{}/v1/hooks/git/{app_id}",
        super::logs::origin(headers, over_tls.is_some())
    )
}

async fn read(
    State(state): State<AppState>,
    over_tls: Option<axum::Extension<slipway_server::tls::OverTls>>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<GitSource>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, role) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let row = store::get(&mut tx, &app.id).await?.ok_or_else(no_source)?;
    tx.commit().await?;
    let secret = if role == Role::Owner {
        Some(
            state
                .git()
                .secrets(&row)
                .map_err(ApiError::Internal)?
                .webhook_secret,
        )
    } else {
        None
    };
    let url = webhook_url(&headers, over_tls.as_ref(), &app.id);
    Ok(Json(view(row, url, secret)))
}

fn no_source() -> ApiError {
    ApiError::NotFound(
        "the app has no git source (connect one: PUT /v1/apps/{app_id}/git, or slipway git connect)"
            .into(),
    )
}

async fn connect(
    State(state): State<AppState>,
    over_tls: Option<axum::Extension<slipway_server::tls::OverTls>>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<GitSource>, ApiError> {
    let fields = Fields::from_body(json_object(body)?, CONNECT_FIELDS)?;
    let auth = match fields.string("auth")? {
        None => None,
        Some(a) => Some(
            GitAuth::parse(&a)
                .ok_or_else(|| ApiError::invalid("auth", "must be none, token or deploy_key"))?,
        ),
    };
    let request = ConnectRequest {
        repo_url: fields.required("repo_url")?,
        branch: fields.string("branch")?,
        path: fields.string("path")?,
        auth,
        token: fields.string("token")?,
        poll_interval_seconds: fields.integer("poll_interval_seconds")?,
        max_previews: fields.integer("max_previews")?,
    };
    let checked = credentials::check(request).map_err(|e| ApiError::invalid(e.field, e.message))?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ConnectGit).await?;
    let connected = state
        .git()
        .connect(&mut tx, &app.id, &app.name, &caller.user_id, checked)
        .await
        .map_err(|e| match e {
            ConnectFailure::Database(e) => ApiError::Database(e),
            other => ApiError::Internal(other.to_string()),
        })?;
    tx.commit().await?;
    tracing::info!(app_id = %app.id, "git source connected");
    state.git().wake();
    let url = webhook_url(&headers, over_tls.as_ref(), &app.id);
    Ok(Json(view(
        connected.row,
        url,
        Some(connected.webhook_secret),
    )))
}

async fn disconnect(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ConnectGit).await?;
    // Its pull requests' previews go with it.
    let mut gone = Vec::new();
    for preview in store::previews_of(&mut tx, &app.id).await? {
        gone.extend(crate::teardown::delete_rows(&mut tx, &preview).await?);
    }
    if !store::delete(&mut tx, &app.id).await? {
        return Err(no_source());
    }
    tx.commit().await?;
    for teardown in gone {
        teardown.finish(state.deployer(), state.runner()).await;
    }
    state.git().remove_cache(&app.id);
    tracing::info!(app_id = %app.id, "git source disconnected");
    Ok(StatusCode::NO_CONTENT)
}

async fn deploy_now(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ConnectGit).await?;
    let row = store::get(&mut tx, &app.id).await?.ok_or_else(|| {
        ApiError::FailedPrecondition(
            "the app has no git source to deploy from (connect one: PUT /v1/apps/{app_id}/git, \
             or slipway git connect)"
                .into(),
        )
    })?;
    store::set_pending(
        &mut tx,
        &app.id,
        &format!("refs/heads/{}", row.branch),
        None,
        "manual",
    )
    .await?;
    tx.commit().await?;
    state.git().wake();
    Ok((
        StatusCode::ACCEPTED,
        Json(HookOutcome::Queued(format!(
            "the tip of {}: fetching, building and deploying it",
            row.branch
        ))),
    )
        .into_response())
}

async fn previews(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<PreviewList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let mut previews = Vec::new();
    for row in store::previews(&mut tx, &app.id).await? {
        let Some(preview) = crate::store::apps::get(&mut tx, &row.app_id).await? else {
            continue;
        };
        previews.push(Preview {
            number: row
                .preview_of
                .as_ref()
                .and_then(|(_, n)| u64::try_from(*n).ok())
                .unwrap_or(0),
            app_id: preview.id,
            app_name: preview.name,
            status: preview.status,
            url: preview.url,
            commit: row.last.map(commit_view),
            last_error: row.last_error,
        });
    }
    tx.commit().await?;
    Ok(Json(PreviewList { previews }))
}

/// Largest webhook body read (GitHub caps its payloads at 25 MB).
const MAX_HOOK_BYTES: usize = 25 << 20;

async fn hook(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    body: axum::body::Body,
) -> Result<Response, ApiError> {
    let app_id = super::apps::parse_app_id(&app_id)?;
    // Read as a stream, past the JSON routes' 64 KiB limit: a push of many commits is larger.
    let body = axum::body::to_bytes(body, MAX_HOOK_BYTES)
        .await
        .map_err(|_| {
            ApiError::TooLarge(format!("a delivery may be at most {MAX_HOOK_BYTES} bytes"))
        })?;
    let outcome = state
        .git()
        .receive(&app_id, &headers, &body)
        .await
        .map_err(|e| match e {
            HookRefusal::NoSource => ApiError::NotFound(format!(
                "no app {app_id:?} with a git source on this platform: check the hook's URL"
            )),
            HookRefusal::Unverified(e) => ApiError::Unsigned(e.to_string()),
            HookRefusal::Unreadable(e) => ApiError::InvalidBody(e.to_string()),
            HookRefusal::Sealed(m) => ApiError::Internal(m),
            HookRefusal::Database(e) => ApiError::Database(e),
        })?;
    let status = match outcome {
        HookOutcome::Queued(_) => StatusCode::ACCEPTED,
        HookOutcome::Ignored(_) => StatusCode::OK,
    };
    Ok((status, Json(outcome)).into_response())
}
