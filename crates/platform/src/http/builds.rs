//! `/v1/apps/{app_id}/builds`, `/v1/builds/{build_id}` and its cancel, and the public
//! `/v1/signing-key`. An upload is authenticated first, then streamed to a temporary file
//! (never held in memory, at most [`MAX_UPLOAD_BYTES`]), checked, and only then are the jobs
//! created — in one transaction that checks the caller's access again.

use std::io::SeekFrom;

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use http_body_util::BodyExt as _;
use serde::Serialize;
use slipway_devfile::{Devfile, ServiceSpec};
use tempfile::NamedTempFile;
use tokio::io::{AsyncReadExt as _, AsyncSeekExt as _, AsyncWriteExt as _};

use super::apps::authorized_app;
use super::deployments;
use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState};
use crate::apps::RegisterError;
use crate::db::rfc3339;
use crate::deploy::AppUrls;
use crate::jobs::{ContextCheck, Runner};
use crate::model::BuildStatus;
use crate::model::Role;
use crate::policy::{self, AppAction};
use crate::store::apps;
use crate::store::builds::{self, BuildRecord, NewBuild};
/// A build as the API shows it, as `slipway-api` defines it for the server and its clients.
pub use slipway_api::Build;
use slipway_image::sign::{ALGORITHM, SIGNED_PREFIX};
use slipway_runtime::build::context::{ContextError, Encoding};

/// Largest accepted build-context upload (512 MiB, compressed).
pub const MAX_UPLOAD_BYTES: u64 = 512 << 20;
/// Most log bytes `GET /v1/builds/{id}?log=true` returns (the end of the log).
pub const MAX_LOG_BYTES: u64 = 1 << 20;

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/builds", post(create).get(list))
        .route("/builds", post(create_inline))
        .route("/builds/{build_id}", get(get_one))
        .route("/builds/{build_id}/cancel", post(cancel))
        .route("/signing-key", get(signing_key))
}

impl From<BuildRecord> for Build {
    fn from(b: BuildRecord) -> Self {
        Self {
            build_id: b.id,
            app_id: b.app_id,
            service: b.service,
            status: b.status,
            builder: b.builder,
            image_uri: b.image_uri,
            error: b.error,
            created_at: rfc3339(b.created_at),
            started_at: b.started_at.map(rfc3339),
            finished_at: b.finished_at.map(rfc3339),
            log: None,
            log_truncated: None,
        }
    }
}

/// One job of `POST /v1/apps/{app_id}/builds`.
#[derive(Debug, Serialize)]
pub struct QueuedBuild {
    /// The build's UUID.
    pub build_id: String,
    /// The service.
    pub service: String,
    /// Always `queued` here.
    pub status: BuildStatus,
}

/// The 202 body of `POST /v1/apps/{app_id}/builds` and `POST /v1/builds`.
#[derive(Debug, Serialize)]
pub struct BuildsCreated {
    /// The app built (created by this request on `POST /v1/builds` when new).
    pub app_id: String,
    /// True when `POST /v1/builds` registered the app from the devfile.
    pub app_created: bool,
    /// The new builds' ids, in the order of `builds`.
    pub build_ids: Vec<String>,
    /// One entry per service.
    pub builds: Vec<QueuedBuild>,
    /// The app's URL and its public services' URLs, known (and kept) from the first upload.
    #[serde(flatten)]
    pub urls: AppUrls,
}

pub(super) fn parse_build_id(raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::invalid("build_id", "must be a UUID"))
}

fn build_not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("no build with id {id}"))
}

pub(super) fn internal(what: &str, e: impl std::fmt::Display) -> ApiError {
    ApiError::Internal(format!("{what}: {e}"))
}

/// The query pairs with each key at most once and only from `allowed`.
pub(super) fn query_map(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    allowed: &[&str],
) -> Result<std::collections::HashMap<String, String>, ApiError> {
    Fields::from_query(query, allowed).map(Fields::into_strings)
}

/// A refused context as a client error.
fn context_error(e: ContextError) -> ApiError {
    match e {
        ContextError::Io(e) => internal("reading the uploaded context", e),
        ContextError::NoDevfile | ContextError::BadDevfile(_) => {
            ApiError::invalid("devfile", e.to_string())
        }
        other => ApiError::invalid("context", other.to_string()),
    }
}

/// Streams the body into `file`, refusing more than [`MAX_UPLOAD_BYTES`].
pub(super) async fn receive(body: Body, file: &mut tokio::fs::File) -> Result<u64, ApiError> {
    let mut body = body;
    let mut total = 0u64;
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|_| ApiError::InvalidBody("the upload could not be read".into()))?;
        if let Ok(data) = frame.into_data() {
            total += data.len() as u64;
            if total > MAX_UPLOAD_BYTES {
                return Err(ApiError::TooLarge(format!(
                    "a build context may be at most {MAX_UPLOAD_BYTES} bytes ({} MiB) compressed",
                    MAX_UPLOAD_BYTES >> 20
                )));
            }
            file.write_all(&data)
                .await
                .map_err(|e| internal("writing the upload", e))?;
        }
    }
    file.flush()
        .await
        .map_err(|e| internal("writing the upload", e))?;
    Ok(total)
}

/// Streams the body into a new temporary file among the runner's contexts (named
/// `<prefix>…`, removed when dropped), refusing more than [`MAX_UPLOAD_BYTES`].
pub(super) async fn receive_to_temp(
    runner: &Runner,
    prefix: &str,
    body: Body,
) -> Result<NamedTempFile, ApiError> {
    let temp = tempfile::Builder::new()
        .prefix(prefix)
        .tempfile_in(runner.contexts_dir())
        .map_err(|e| internal("creating the upload file", e))?;
    let mut file = tokio::fs::File::from_std(
        temp.reopen()
            .map_err(|e| internal("opening the upload file", e))?,
    );
    receive(body, &mut file).await?;
    Ok(temp)
}

/// `POST /v1/apps/{app_id}/builds[?service_name=a,b]`: body a tar.zst
/// (`application/zstd`) or tar.gz (`application/gzip`) of the build context with a devfile
/// at its root → 202 with one queued build per service.
async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: Body,
) -> Result<Response, ApiError> {
    let (id, _) = editable_app(&state, &headers, &app_id).await?;
    accept_upload(state, headers, query, body, Target::App(id)).await
}

/// `POST /v1/builds[?service_name=a,b]` (the legacy flow): the same upload without an app
/// id. The app is the one the devfile's `metadata.name` names: registered from the devfile's
/// `name`, `displayName` and `description` when no app has that name; built when the caller
/// may edit the app of that name; a 409 on `name` when another account (or an app the
/// caller cannot see) holds it.
async fn create_inline(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: Body,
) -> Result<Response, ApiError> {
    // Authenticates before the upload is read.
    let (tx, _) = state.begin_as(&headers, Access::Read).await?;
    tx.commit().await?;
    accept_upload(state, headers, query, body, Target::FromDevfile).await
}

/// Which app an upload builds.
enum Target {
    /// An app registered before, by id.
    App(String),
    /// The app the devfile's `metadata.name` names, created when absent.
    FromDevfile,
}

/// The app `app_id` when the caller may build it (editor or owner): 404 when it is not
/// visible, 403 when the caller's role is too low. Reads in its own short transaction, before
/// any upload is received.
pub(super) async fn editable_app(
    state: &AppState,
    headers: &HeaderMap,
    app_id: &str,
) -> Result<(String, apps::AppRecord), ApiError> {
    let (mut tx, caller) = state.begin_as(headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, app_id, AppAction::Build).await?;
    tx.commit().await?;
    Ok((app.id.clone(), app))
}

/// The app an upload builds, as resolved in the transaction that creates its jobs.
struct ResolvedApp {
    id: String,
    name: String,
    /// True when the app was registered by this upload (`POST /v1/builds`).
    created: bool,
}

/// The app an upload builds, resolved in the transaction that creates its jobs.
async fn resolve_target(
    tx: &mut crate::db::Tx,
    caller: &crate::model::Caller,
    target: &Target,
    devfile: &Devfile,
) -> Result<ResolvedApp, ApiError> {
    match target {
        Target::App(id) => {
            // Checked again: the app may have been deleted or the token revoked during the
            // upload.
            let (app, _) = authorized_app(tx, caller, id, AppAction::Build).await?;
            Ok(ResolvedApp {
                id: app.id,
                name: app.name,
                created: false,
            })
        }
        Target::FromDevfile => app_of_devfile(tx, caller, devfile).await,
    }
}

/// The app the devfile's `metadata.name` names when the caller may build it, else
/// registered from the devfile's metadata through the same rules as `POST /v1/apps`; a
/// broken rule names the devfile key.
async fn app_of_devfile(
    tx: &mut crate::db::Tx,
    caller: &crate::model::Caller,
    devfile: &Devfile,
) -> Result<ResolvedApp, ApiError> {
    let meta = &devfile.metadata;
    let display = if meta.display_name.trim().is_empty() {
        meta.name.as_str()
    } else {
        meta.display_name.as_str()
    };
    // `metadata.name` may be any string; the app is named by the app name derived from it.
    let name = meta
        .app_name()
        .map_err(|e| ApiError::invalid("devfile", format!("metadata.name: {e}")))?;
    let new = crate::apps::check(name.as_str(), display, meta.description.as_deref())
        .map_err(in_devfile)?;
    if let Some(id) = apps::id_by_name(tx, new.name.as_str()).await? {
        let (app, role) = apps::get_visible(tx, caller, &id)
            .await?
            .ok_or_else(|| in_devfile(RegisterError::Taken(name.to_string())))?;
        policy::require(role, AppAction::Build)?;
        policy::require_scope(caller, AppAction::Build)?;
        return Ok(ResolvedApp {
            id: app.id,
            name: app.name,
            created: false,
        });
    }
    caller.require_account_wide("registering an app")?;
    let app = crate::apps::register_app(tx, caller, &new)
        .await
        .map_err(in_devfile)?;
    Ok(ResolvedApp {
        id: app.id,
        name: app.name,
        created: true,
    })
}

/// A registration refused for the devfile's metadata, naming the devfile's key.
fn in_devfile(e: RegisterError) -> ApiError {
    match e {
        RegisterError::Invalid { field, message } => {
            let key = match field {
                "display_name" => "displayName",
                other => other,
            };
            ApiError::invalid("devfile", format!("metadata.{key}: {message}"))
        }
        RegisterError::Taken(name) => ApiError::AlreadyExists {
            field: "name".into(),
            message: format!(
                "the app name {name:?} (derived from the devfile's metadata.name) is already taken; \
                 app names are unique across the platform, choose another"
            ),
        },
        RegisterError::Database(e) => ApiError::Database(e),
    }
}

/// Full builds, or the development loop's sync builds (`?sync=true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BuildKind {
    /// A full build by the platform's builder.
    Full,
    /// A sync build on top of the service's last full (native) build.
    Sync,
}

/// What an upload's query asks for.
struct UploadQuery {
    /// `service_name=a,b`: the services to build; `None` builds every service.
    services: Option<Vec<String>>,
    kind: BuildKind,
}

impl UploadQuery {
    fn parse(
        query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    ) -> Result<Self, ApiError> {
        let query = query_map(query, &["service_name", "sync"])?;
        let kind = match query.get("sync").map(String::as_str) {
            None | Some("false") => BuildKind::Full,
            Some("true") => BuildKind::Sync,
            Some(_) => return Err(ApiError::invalid("sync", "must be true or false")),
        };
        let services = query.get("service_name").map(|v| {
            v.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        });
        Ok(Self { services, kind })
    }
}

/// How the upload is compressed, from its `Content-Type` (415 for anything else).
fn context_encoding(headers: &HeaderMap) -> Result<Encoding, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    Encoding::from_content_type(content_type).ok_or_else(|| {
        ApiError::UnsupportedMediaType(
            "the body must be a tar.zst ('Content-Type: application/zstd') or a tar.gz \
             ('Content-Type: application/gzip') of the build context"
                .into(),
        )
    })
}

/// A received build context whose devfile passed validation, still in its temporary file.
struct CheckedContext {
    temp: NamedTempFile,
    encoding: Encoding,
    /// The devfile's text, as uploaded.
    devfile_text: String,
    devfile: Devfile,
}

/// Receives the upload and checks it ([`Runner::check_context`]).
async fn receive_context(
    runner: &Runner,
    body: Body,
    encoding: Encoding,
) -> Result<CheckedContext, ApiError> {
    let temp = receive_to_temp(runner, ".upload-", body).await?;
    let checked = runner
        .check_context(temp.path(), encoding)
        .await
        .map_err(|e| match e {
            ContextCheck::Context(e) => context_error(e),
            ContextCheck::Invalid { errors, .. } => ApiError::InvalidDevfile(errors),
        })?;
    Ok(CheckedContext {
        temp,
        encoding,
        devfile_text: checked.devfile_text,
        devfile: checked.devfile,
    })
}

/// The services to build: every one of `services` without `wanted`, else the ones it names
/// (each once, in the order named); a name the devfile lacks is a 400 on `service_name`.
fn chosen_services(
    services: &[ServiceSpec],
    wanted: Option<&[String]>,
) -> Result<Vec<ServiceSpec>, ApiError> {
    let Some(names) = wanted else {
        return Ok(services.to_vec());
    };
    if names.is_empty() {
        return Err(ApiError::invalid("service_name", "must name a service"));
    }
    let mut chosen: Vec<ServiceSpec> = Vec::new();
    for name in names {
        let service = services.iter().find(|s| &s.name == name).ok_or_else(|| {
            ApiError::invalid(
                "service_name",
                format!(
                    "the devfile has no service {name:?}; its services are {}",
                    services
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        if !chosen.iter().any(|c| c.name == *name) {
            chosen.push(service.clone());
        }
    }
    Ok(chosen)
}

/// A context kept for its builds, under the id they name.
struct StoredContext<'a> {
    id: String,
    encoding: Encoding,
    devfile_text: &'a str,
}

/// The app resolved and the builds queued, in one transaction that checks the caller's
/// access again (the upload took time).
async fn queue_builds(
    state: &AppState,
    headers: &HeaderMap,
    target: &Target,
    devfile: &Devfile,
    context: &StoredContext<'_>,
    chosen: &[ServiceSpec],
    kind: BuildKind,
) -> Result<(ResolvedApp, Vec<QueuedBuild>), ApiError> {
    let (mut tx, caller) = state.begin_as(headers, Access::Write).await?;
    let app = resolve_target(&mut tx, &caller, target, devfile).await?;
    apps::set_devfile(&mut tx, &app.id, context.devfile_text).await?;
    let builder = match kind {
        BuildKind::Full => state.runner().builder().as_str(),
        BuildKind::Sync => builds::SYNC_BUILDER,
    };
    let mut queued = Vec::new();
    for service in chosen {
        if kind == BuildKind::Sync {
            check_sync_base(&mut tx, &app.id, &service.name).await?;
        }
        let build_id = builds::insert(
            &mut tx,
            &NewBuild {
                app_id: &app.id,
                service: &service.name,
                builder,
                devfile: context.devfile_text,
                context_id: &context.id,
                context_encoding: context.encoding.as_str(),
                created_by: &caller.user_id,
            },
        )
        .await?;
        queued.push(QueuedBuild {
            build_id,
            service: service.name.clone(),
            status: BuildStatus::Queued,
        });
    }
    tx.commit().await?;
    Ok((app, queued))
}

/// Receives, checks and queues an upload for `target` (both upload routes end here); the
/// answer names the app's URLs, which answer once it runs.
async fn accept_upload(
    state: AppState,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: Body,
    target: Target,
) -> Result<Response, ApiError> {
    let query = UploadQuery::parse(query)?;
    let encoding = context_encoding(&headers)?;
    let runner = state.runner();
    let upload = receive_context(runner, body, encoding).await?;
    let services = upload.devfile.services();
    let chosen = chosen_services(&services, query.services.as_deref())?;
    if let Some(problem) = chosen.iter().find_map(|s| runner.unbuildable(s)) {
        return Err(ApiError::InvalidDevfile(vec![problem]));
    }

    let context = StoredContext {
        id: uuid::Uuid::new_v4().to_string(),
        encoding: upload.encoding,
        devfile_text: &upload.devfile_text,
    };
    let stored = runner.context_path(&context.id, context.encoding);
    upload
        .temp
        .persist(&stored)
        .map_err(|e| internal("keeping the upload", e.error))?;
    let queued = queue_builds(
        &state,
        &headers,
        &target,
        &upload.devfile,
        &context,
        &chosen,
        query.kind,
    )
    .await;
    let (app, queued) = match queued {
        Ok(q) => q,
        Err(e) => {
            let _ = tokio::fs::remove_file(&stored).await;
            return Err(e);
        }
    };
    for q in &queued {
        runner.enqueue(q.build_id.clone());
    }
    tracing::info!(app_id = %app.id, builds = queued.len(), "builds queued");
    let urls = state
        .deployer()
        .public_urls(&app.id, &app.name, &services)
        .await;
    Ok((
        StatusCode::ACCEPTED,
        Json(BuildsCreated {
            app_id: app.id,
            app_created: app.created,
            build_ids: queued.iter().map(|q| q.build_id.clone()).collect(),
            builds: queued,
            urls,
        }),
    )
        .into_response())
}

/// A sync build extends the service's last full build, which must be a native one: 409
/// (`sync: …`) otherwise.
async fn check_sync_base(
    tx: &mut crate::db::Tx,
    app_id: &str,
    service: &str,
) -> Result<(), ApiError> {
    match builds::latest_full_build(tx, app_id, service).await? {
        Some(base) if base.builder == "native" => Ok(()),
        Some(base) => Err(ApiError::FailedPrecondition(format!(
            "sync: service {service:?} was last built by the {} builder; a sync extends only \
             native builds: upload without sync=true",
            base.builder
        ))),
        None => Err(ApiError::FailedPrecondition(format!(
            "sync: service {service:?} has no succeeded build to sync onto: upload without \
             sync=true first"
        ))),
    }
}

/// The build `raw_id` with the caller's role on its app, or 404.
pub(super) async fn visible_build(
    tx: &mut crate::db::Tx,
    caller: &crate::model::Caller,
    raw_id: &str,
) -> Result<(BuildRecord, Role), ApiError> {
    let id = parse_build_id(raw_id)?;
    let build = builds::get(tx, &id)
        .await?
        .ok_or_else(|| build_not_found(&id))?;
    let (_, role) = apps::get_visible(tx, caller, &build.app_id)
        .await?
        .ok_or_else(|| build_not_found(&id))?;
    Ok((build, role))
}

/// The end of a build log (at most [`MAX_LOG_BYTES`]) and whether it was cut.
async fn read_log(path: &std::path::Path) -> Result<(String, bool), ApiError> {
    let mut file = match tokio::fs::File::open(path).await {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((String::new(), false)),
        Err(e) => return Err(internal("reading a build log", e)),
    };
    let len = file
        .metadata()
        .await
        .map_err(|e| internal("reading a build log", e))?
        .len();
    let cut = len > MAX_LOG_BYTES;
    if cut {
        file.seek(SeekFrom::Start(len - MAX_LOG_BYTES))
            .await
            .map_err(|e| internal("reading a build log", e))?;
    }
    let mut bytes = Vec::new();
    file.take(MAX_LOG_BYTES)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| internal("reading a build log", e))?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), cut))
}

/// One page of an app's builds.
#[derive(Debug, Serialize)]
pub struct BuildsPage {
    /// Newest first, every service and builder (the dev loop's `sync` builds too).
    pub builds: Vec<Build>,
    /// Pass as `next_page_token` for the next page; null on the last.
    pub next_page_token: Option<String>,
}

/// `GET /v1/apps/{app_id}/builds[?page_size&next_page_token]`: the app's build history, for
/// anyone who may view the app. Logs are read one build at a time (`GET /v1/builds/{id}`).
async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<BuildsPage>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let fields = Fields::from_query(query, deployments::HISTORY_FIELDS)?;
    let (page_size, before) = deployments::page_query(&fields)?;
    let mut rows = builds::page_of_app(&mut tx, &app.id, before, page_size + 1).await?;
    tx.commit().await?;
    let next_page_token =
        deployments::next_page(&mut rows, page_size, |b| (b.created_at, b.id.clone()));
    Ok(Json(BuildsPage {
        builds: rows.into_iter().map(Build::from).collect(),
        next_page_token,
    }))
}

/// `GET /v1/builds/{build_id}[?log=true]`.
async fn get_one(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(build_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<Build>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (build, _) = visible_build(&mut tx, &caller, &build_id).await?;
    tx.commit().await?;
    let query = query_map(query, &["log"])?;
    let with_log = match query.get("log").map(String::as_str) {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(ApiError::invalid("log", "must be true or false")),
    };
    let log_path = state.runner().log(&build.id);
    let mut view = Build::from(build);
    if with_log {
        let (text, cut) = read_log(log_path.path()).await?;
        view.log = Some(text);
        view.log_truncated = Some(cut);
    }
    Ok(Json(view))
}

/// `POST /v1/builds/{build_id}/cancel`: queued or in_progress → cancelled (a running build's
/// process group is killed) → 200 with the build; 409 when it already finished.
async fn cancel(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(build_id): Path<String>,
) -> Result<Json<Build>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (build, role) = visible_build(&mut tx, &caller, &build_id).await?;
    policy::require(role, AppAction::Build)?;
    policy::require_scope(&caller, AppAction::Build)?;
    if build.status.is_finished() {
        return Err(ApiError::FailedPrecondition(format!(
            "build {} is already {}; only queued or in_progress builds can be cancelled",
            build.id,
            build.status.as_str()
        )));
    }
    if !builds::cancel(&mut tx, &build.id, "cancelled by request").await? {
        return Err(ApiError::FailedPrecondition(format!(
            "build {} finished before it could be cancelled",
            build.id
        )));
    }
    let updated = builds::get(&mut tx, &build.id)
        .await?
        .ok_or_else(|| build_not_found(&build.id))?;
    tx.commit().await?;
    state.runner().log(&build.id).note("cancel requested");
    state.runner().cancel(&build.id);
    tracing::info!(build_id = %build.id, "build cancelled");
    Ok(Json(updated.into()))
}

/// The platform's image signing key, as `GET /v1/signing-key` serves it.
#[derive(Debug, Serialize)]
pub struct SigningKeyView {
    /// Always `ed25519`.
    pub algorithm: &'static str,
    /// The 32-byte public key in base64.
    pub public_key: String,
    /// The first 16 hex digits of the SHA-256 of the public key.
    pub key_id: String,
    /// What each signature covers: this prefix followed by the manifest digest.
    pub signed_message_prefix: &'static str,
}

/// `GET /v1/signing-key`: public (no token), so anyone can check image signatures.
async fn signing_key(State(state): State<AppState>) -> Json<SigningKeyView> {
    let key = state.runner().key();
    Json(SigningKeyView {
        algorithm: ALGORITHM,
        public_key: key.public_key_base64(),
        key_id: key.key_id(),
        signed_message_prefix: SIGNED_PREFIX,
    })
}
